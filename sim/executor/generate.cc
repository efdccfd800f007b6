// Workload generator: schedule walk, per-layer feature transformations, DP buckets, optimizer.
#include "sim/executor/generate.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/stage_layout.h"
#include "sim/units/check.h"

namespace mofasim::executor {
namespace {

using schedules::Op;

Stream stream_of(Scope scope) {
  switch (scope) {
    case Scope::kTp: return Stream::kTp;
    case Scope::kCp: return Stream::kCp;
    case Scope::kEp: return Stream::kEp;
    case Scope::kDp:
    case Scope::kExpertDp: return Stream::kDp;
    case Scope::kRank:
    case Scope::kCount: break;
  }
  MOFASIM_UNREACHABLE("no stream for this scope");
}

Category category_of(Scope scope) {
  switch (scope) {
    case Scope::kTp: return Category::kTp;
    case Scope::kCp: return Category::kCp;
    case Scope::kEp: return Category::kEp;
    case Scope::kDp:
    case Scope::kExpertDp: return Category::kDp;
    case Scope::kRank:
    case Scope::kCount: break;
  }
  MOFASIM_UNREACHABLE("no category for this scope");
}

// "[i+1/k]": the label of piece i of k (built by appends: g++ 12 misreports + chains).
std::string piece_suffix(int i, int k) {
  std::string s;
  s.reserve(16);
  s.push_back('[');
  s.append(std::to_string(i + 1));
  s.push_back('/');
  s.append(std::to_string(k));
  s.push_back(']');
  return s;
}

// Labels shared by every task of one pass of one layer.
struct Labels {
  int stage = 0;
  int chunk = 0;
  std::uint32_t microbatch = kNone;
  std::uint32_t layer = kNone;
  Phase phase = Phase::kForward;
};

// First and last task a program emitted (kNone when it emitted nothing).
struct Span {
  TaskId first = kNone;
  TaskId last = kNone;
};

class Generator {
 public:
  explicit Generator(const GenerateInput& in)
      : in_(in), sched_(*in.schedule), plan_(*in.plan), f_(in.features),
        w_(sched_.stages(), sched_.microbatches()) {
    positions_ = sched_.positions_per_lane();
    lanes_ = sched_.lanes();
    m_ = sched_.microbatches();
    p2p_fwd_.assign(static_cast<std::size_t>(lanes_) * positions_ * m_, kNone);
    p2p_bwd_.assign(p2p_fwd_.size(), kNone);
    const std::size_t chunk_slots = static_cast<std::size_t>(sched_.stages()) * sched_.chunks();
    chunk_last_bi_.assign(chunk_slots * m_, kNone);
    offload_d2h_.assign(chunk_slots * m_, {});
    layer_last_grad_.assign(chunk_slots, {});
    gather_before_forward_.assign(chunk_slots, kNone);
  }

  Workload run() {
    validate_input();
    if (f_.distributed_optimizer && f_.dp_overlap.enabled) emit_early_param_gathers();
    for (int s = 0; s < sched_.stages(); ++s) emit_stage(s);
    for (int s = 0; s < sched_.stages(); ++s) emit_dp_and_optimizer(s);
    w_.finalize();
    return std::move(w_);
  }

 private:
  // ---------------------------------------------------------------- input checks
  void validate_input() const {
    if (static_cast<int>(in_.position_layers.size()) != positions_) {
      throw std::invalid_argument("generate_workload: position_layers has " +
                                  std::to_string(in_.position_layers.size()) + " entries, schedule has " +
                                  std::to_string(positions_) + " positions per lane");
    }
    for (const LayerRange& r : in_.position_layers) {
      if (r.first < 0 || r.count < 0 || r.first + r.count > static_cast<int>(plan_.layers.size())) {
        throw std::invalid_argument("generate_workload: a position's layers lie outside the plan's " +
                                    std::to_string(plan_.layers.size()) + " layers");
      }
    }
    if (static_cast<int>(plan_.stages.size()) != sched_.stages()) {
      throw std::invalid_argument("generate_workload: plan has " + std::to_string(plan_.stages.size()) +
                                  " stages, schedule has " + std::to_string(sched_.stages()));
    }
    if (in_.load_imbalance < 1.0) {
      throw std::invalid_argument("generate_workload: load_imbalance must be >= 1, got " +
                                  std::to_string(in_.load_imbalance));
    }
    if (f_.tp_overlap.enabled && f_.tp_overlap.chunks < 1) {
      throw std::invalid_argument("generate_workload: features.tp_overlap.chunks must be >= 1");
    }
    if (f_.memfine && f_.memfine_chunks < 1) {
      throw std::invalid_argument("generate_workload: features.memfine_chunks must be >= 1 when memfine is on "
                                  "(resolve 0 = auto with the memory model first)");
    }
  }

  [[nodiscard]] std::size_t chunk_slot(int stage, int chunk) const {
    return static_cast<std::size_t>(stage) * sched_.chunks() + chunk;
  }
  [[nodiscard]] std::size_t mb_slot(int stage, int chunk, std::uint32_t mb) const {
    return chunk_slot(stage, chunk) * m_ + mb;
  }

  // ---------------------------------------------------------------- task helpers
  TaskId add_compute(const Labels& l, std::string_view name, double seconds, double flops, Category cat) {
    TaskSpec t{.kind = TaskKind::kCompute, .category = cat, .stream = Stream::kCompute, .scope = Scope::kRank,
               .phase = l.phase, .stage = u16(l.stage), .peer_stage = u16(l.stage), .chunk = u16(l.chunk),
               .microbatch = l.microbatch, .layer = l.layer, .op = w_.intern(name), .work = seconds,
               .flops = flops};
    return w_.add(t);
  }

  TaskId add_comm(const Labels& l, const PlanOp& op, double bytes) {
    const model::OverlapSpec& ov = overlap_of(op.scope);
    TaskSpec t{.kind = TaskKind::kCollective, .category = category_of(op.scope), .stream = stream_of(op.scope),
               .scope = op.scope, .phase = l.phase, .collective = op.collective, .stage = u16(l.stage),
               .peer_stage = u16(l.stage), .chunk = u16(l.chunk), .microbatch = l.microbatch, .layer = l.layer,
               .op = w_.intern(op.name), .work = bytes, .alpha = coeff(ov.enabled, ov.alpha),
               .beta = coeff(ov.enabled, ov.beta)};
    return w_.add(t);
  }

  const model::OverlapSpec& overlap_of(Scope scope) const {
    switch (scope) {
      case Scope::kTp: return f_.tp_overlap;
      case Scope::kCp: return f_.cp_overlap;
      case Scope::kEp: return f_.ep_overlap;
      default: return f_.dp_overlap;
    }
  }

  static float coeff(bool enabled, double v) { return enabled ? static_cast<float>(v) : 1.0f; }
  static std::uint16_t u16(int v) { return static_cast<std::uint16_t>(v); }

  // Emits `t` after every task in deps_, records it in the current op's unit list and makes it
  // the only dependency of what follows.
  void seal(TaskId t) {
    for (TaskId d : deps_) w_.add_edge(d, t);
    units_.push_back(t);
    deps_.assign(1, t);
    touch(t);
  }
  void touch(TaskId t) {
    if (span_.first == kNone) span_.first = t;
    span_.last = t;
  }

  // ---------------------------------------------------------------- pass programs
  // Emits one pass program of one layer; consecutive plain compute ops merge into one task.
  void emit_program(const PassPlan& pass, const Labels& l, Category compute_cat, bool memfine_split,
                    double memfine_forward_seconds) {
    const auto& ops = pass.ops;
    std::string merged_name;
    double merged_seconds = 0;
    double merged_flops = 0;
    auto flush = [&] {
      if (merged_name.empty()) return;
      seal(add_compute(l, merged_name, merged_seconds, merged_flops, compute_cat));
      merged_name.clear();
      merged_seconds = merged_flops = 0;
    };
    const bool tp_split = f_.tp_overlap.enabled && f_.tp_overlap.chunks > 1;
    bool ring = false;  // CP P2P ops are consumed by the ring around the attention core
    for (const PlanOp& op : ops) ring = ring || (!op.is_comm && (op.flags & kFlagAttentionCore) != 0);
    ring = ring && in_.parallel.cp > 1 && cp_block_bytes(pass) > 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const PlanOp& op = ops[i];
      if (ring && op.is_comm && op.scope == Scope::kCp) continue;
      const bool next_is_gemm = i + 1 < ops.size() && !ops[i + 1].is_comm &&
                                (ops[i + 1].flags & kFlagTpOverlappable) != 0;
      const bool next_is_tp = i + 1 < ops.size() && ops[i + 1].is_comm && ops[i + 1].scope == Scope::kTp;
      if (op.is_comm) {
        flush();
        if (tp_split && op.scope == Scope::kTp && next_is_gemm) {
          emit_tp_overlap(l, op, ops[i + 1], compute_cat, /*comm_first=*/true);
          ++i;
        } else {
          seal(add_comm(l, op, op.bytes));
        }
        continue;
      }
      const double seconds = op.seconds * ((op.flags & kFlagExpert) != 0 ? in_.load_imbalance : 1.0);
      if (tp_split && (op.flags & kFlagTpOverlappable) != 0 && next_is_tp) {
        flush();
        emit_tp_overlap(l, ops[i + 1], op, compute_cat, /*comm_first=*/false);
        ++i;
      } else if ((op.flags & kFlagAttentionCore) != 0 && in_.parallel.cp > 1 && cp_block_bytes(pass) > 0) {
        flush();
        emit_cp_ring(l, op, seconds, cp_block_bytes(pass), compute_cat);
      } else if ((op.flags & kFlagExpert) != 0 && memfine_split) {
        flush();
        emit_memfine(l, op, seconds, memfine_forward_seconds);
      } else {
        if (!merged_name.empty()) merged_name += '+';
        merged_name += op.name;
        merged_seconds += seconds;
        merged_flops += op.flops;
      }
    }
    flush();
  }

  // Bytes of one KV block a CP ring step exchanges: the pass's CP ops' total over c-1 steps.
  double cp_block_bytes(const PassPlan& pass) const {
    double total = 0;
    for (const PlanOp& op : pass.ops) {
      if (op.is_comm && op.scope == Scope::kCp) total += op.bytes;
    }
    return in_.parallel.cp > 1 ? total / (in_.parallel.cp - 1) : 0;
  }

  // MoFa(20): k pieces; comm_first: all-gather piece i feeds GEMM piece i; otherwise GEMM
  // piece i feeds reduce-scatter / all-reduce piece i. Stream order serialises pieces of a kind.
  void emit_tp_overlap(const Labels& l, const PlanOp& comm, const PlanOp& gemm, Category cat, bool comm_first) {
    const int k = f_.tp_overlap.chunks;
    const std::vector<TaskId> entry = deps_;
    std::vector<TaskId> last;
    TaskId prev_gemm = kNone;
    TaskId prev_comm = kNone;
    for (int i = 0; i < k; ++i) {
      const std::string suffix = piece_suffix(i, k);
      const TaskId g = add_compute(l, gemm.name + suffix, gemm.seconds / k, gemm.flops / k, cat);
      PlanOp piece = comm;
      piece.name = comm.name + suffix;
      const TaskId c = add_comm(l, piece, comm.bytes / k);
      for (TaskId d : entry) {
        w_.add_edge(d, comm_first ? c : g);
      }
      if (comm_first) {
        w_.add_edge(c, g);
        units_.push_back(c);
        units_.push_back(g);
      } else {
        w_.add_edge(g, c);
        units_.push_back(g);
        units_.push_back(c);
      }
      if (i == 0) touch(comm_first ? c : g);
      prev_gemm = g;
      prev_comm = c;
    }
    touch(comm_first ? prev_gemm : prev_comm);
    deps_ = comm_first ? std::vector<TaskId>{prev_gemm} : std::vector<TaskId>{prev_comm, prev_gemm};
  }

  // MoFa(21): c attention steps; the KV block of step i+1 arrives by a CP P2P that runs beside
  // step i (cp_overlap on) or after it (off).
  void emit_cp_ring(const Labels& l, const PlanOp& attn, double seconds, double block_bytes, Category cat) {
    const int c = in_.parallel.cp;
    const std::vector<TaskId> entry = deps_;
    TaskId prev_attn = kNone;
    TaskId prev_p2p = kNone;
    PlanOp p2p{.name = "cp_kv_p2p", .is_comm = true, .scope = Scope::kCp, .collective = Collective::kSendRecv};
    for (int i = 0; i < c; ++i) {
      const std::string suffix = piece_suffix(i, c);
      const TaskId a = add_compute(l, attn.name + suffix, seconds / c, attn.flops / c, cat);
      for (TaskId d : (i == 0 ? entry : std::vector<TaskId>{prev_attn})) w_.add_edge(d, a);
      if (prev_p2p != kNone) w_.add_edge(prev_p2p, a);
      units_.push_back(a);
      touch(a);
      if (i + 1 < c) {
        const TaskId x = add_comm(l, p2p, block_bytes);
        for (TaskId d : entry) w_.add_edge(d, x);
        if (!f_.cp_overlap.enabled) w_.add_edge(a, x);
        units_.push_back(x);
        prev_p2p = x;
      }
      prev_attn = a;
    }
    deps_.assign(1, prev_attn);
  }

  // MemFine: expert backward in k chunks, each after the recompute of its expert forward.
  void emit_memfine(const Labels& l, const PlanOp& expert, double seconds, double forward_seconds) {
    const int k = f_.memfine_chunks;
    const double chunk_bytes = current_layer_expert_bytes_ / k;
    for (int i = 0; i < k; ++i) {
      const std::string suffix = piece_suffix(i, k);
      Labels rl = l;
      rl.phase = Phase::kRecompute;
      const TaskId r = add_compute(rl, expert.name + "_recompute" + suffix, forward_seconds / k, 0,
                                   Category::kRecompute);
      w_.add_alloc(r, chunk_bytes);
      seal(r);
      const TaskId b = add_compute(l, expert.name + suffix, seconds / k, expert.flops / k, Category::kCompute);
      w_.add_free(b, chunk_bytes);
      seal(b);
    }
  }

  // ---------------------------------------------------------------- per-layer passes
  // Forward-activation bytes kept between this layer's forward and backward (after recompute and
  // MemFine choices); what offload moves.
  double stored_bytes(const LayerPlan& lp) const {
    double b = lp.activation_bytes;
    if (!transformer_layer(lp)) return b;
    if (f_.recompute == model::RecomputeKind::kSelective) b = lp.activation_bytes_selective;
    if (f_.recompute == model::RecomputeKind::kFull && lp.full_recompute) b = lp.activation_bytes_full;
    if (memfine_applies(lp) && !(f_.recompute == model::RecomputeKind::kFull && lp.full_recompute)) {
      b = std::max(0.0, b - lp.expert_activation_bytes);
    }
    return b;
  }
  // Recompute and activation offload act on transformer layers only (MoFa(29) MoFa(30) MoFa(31) MoFa(32)
  // MoFa(33) MoFa(34) MoFa(35); Megatron checkpoints and offloads the layers, not the embedding or the output
  // head and loss).
  bool transformer_layer(const LayerPlan& lp) const {
    return !(plan_.pre && &lp == &*plan_.pre) && !(plan_.post && &lp == &*plan_.post);
  }
  bool offloads(const LayerPlan& lp) const {
    return f_.activation_offload.enabled && transformer_layer(lp) && stored_bytes(lp) > 0;
  }
  bool memfine_applies(const LayerPlan& lp) const { return f_.memfine && lp.expert_activation_bytes > 0; }
  double weight_grad_bytes(const LayerPlan& lp) const {
    double b = lp.weight_grad_activation_bytes;
    if (memfine_applies(lp)) b = std::max(0.0, b - lp.expert_activation_bytes);
    return std::min(b, lp.activation_bytes - (memfine_applies(lp) ? lp.expert_activation_bytes : 0.0));
  }
  static double expert_forward_seconds(const LayerPlan& lp) {
    double s = 0;
    for (const PlanOp& op : lp.forward.ops) {
      if (!op.is_comm && (op.flags & kFlagExpert) != 0) s += op.seconds;
    }
    return s;
  }

  // MoFa(7): one layer's forward, its compute and communication as DAG tasks; with offload (MoFa(33)
  // MoFa(34) MoFa(35)) its stored activation goes D2H after it.
  void emit_layer_forward(const LayerPlan& lp, const Labels& l) {
    span_ = {};
    emit_program(lp.forward, l, Category::kCompute, false, 0);
    const double stored = stored_bytes(lp);
    if (span_.first == kNone) return;
    w_.add_alloc(span_.first, stored);
    if (offloads(lp)) {
      TaskSpec t{.kind = TaskKind::kCopy, .category = Category::kOffload, .stream = Stream::kD2H,
                 .scope = Scope::kRank, .phase = l.phase, .collective = Collective::kCopy,
                 .stage = u16(l.stage), .peer_stage = u16(l.stage), .chunk = u16(l.chunk),
                 .microbatch = l.microbatch, .layer = l.layer, .op = w_.intern("offload_d2h"), .work = stored,
                 .free_bytes = stored, .alpha = coeff(true, f_.activation_offload.alpha),
                 .beta = coeff(true, f_.activation_offload.beta)};
      const TaskId d2h = w_.add(t);
      w_.add_edge(span_.last, d2h);  // does not block the next layer: it runs on the copy engine
      units_.push_back(d2h);
      offload_d2h_[mb_slot(l.stage, l.chunk, l.microbatch)].push_back(d2h);
    }
  }

  // Input-gradient pass of one layer (plus its weight gradient when `full` is a full backward), MoFa(8).
  void emit_layer_backward(const LayerPlan& lp, const Labels& l, bool full, TaskId prefetch_after,
                           std::size_t offload_index) {
    const double stored = stored_bytes(lp);
    const double total = lp.activation_bytes - (memfine_applies(lp) ? lp.expert_activation_bytes : 0.0);
    span_ = {};
    if (offloads(lp)) {
      const auto& d2hs = offload_d2h_[mb_slot(l.stage, l.chunk, l.microbatch)];
      MOFASIM_CHECK(offload_index < d2hs.size(), "offload copy missing for a layer's backward");
      TaskSpec t{.kind = TaskKind::kCopy, .category = Category::kOffload, .stream = Stream::kH2D,
                 .scope = Scope::kRank, .phase = l.phase, .collective = Collective::kCopy,
                 .stage = u16(l.stage), .peer_stage = u16(l.stage), .chunk = u16(l.chunk),
                 .microbatch = l.microbatch, .layer = l.layer, .op = w_.intern("offload_h2d"), .work = stored,
                 .alloc_bytes = stored, .alpha = coeff(true, f_.offload_alpha_backward),
                 .beta = coeff(true, f_.offload_beta_backward)};
      const TaskId h2d = w_.add(t);
      w_.add_edge(d2hs[offload_index], h2d);
      // Prefetch: issued once the backward of the layer above has started (its first task ran),
      // else as soon as the op's inputs are there.
      if (prefetch_after != kNone) {
        w_.add_edge(prefetch_after, h2d);
      } else {
        for (TaskId d : deps_) w_.add_edge(d, h2d);
      }
      units_.push_back(h2d);
      deps_.push_back(h2d);
    }
    Labels rl = l;
    rl.phase = Phase::kRecompute;
    const bool memfine = memfine_applies(lp);
    model::RecomputeKind recompute = transformer_layer(lp) ? f_.recompute : model::RecomputeKind::kNone;
    if (recompute == model::RecomputeKind::kFull && !lp.full_recompute) recompute = model::RecomputeKind::kNone;
    if (recompute == model::RecomputeKind::kSelective) {  // MoFa(29) MoFa(30)
      double seconds = 0;
      double flops = 0;
      std::string name;
      for (const PlanOp& op : lp.forward.ops) {
        if (op.is_comm || (op.flags & kFlagSelectiveRecompute) == 0) continue;
        seconds += op.recompute_seconds;
        flops += op.recompute_flops;
        name += (name.empty() ? "" : "+") + op.name;
      }
      if (!name.empty()) {
        const TaskId r = add_compute(rl, name + "_recompute", seconds, flops, Category::kRecompute);
        w_.add_alloc(r, std::max(0.0, total - stored));
        seal(r);
      }
    } else if (recompute == model::RecomputeKind::kFull) {  // MoFa(31) MoFa(32)
      PassPlan fwd;
      for (const PlanOp& op : lp.forward.ops) {
        if (memfine && !op.is_comm && (op.flags & kFlagExpert) != 0) continue;  // MemFine re-runs it per chunk
        fwd.ops.push_back(op);
        fwd.ops.back().name += "_recompute";
      }
      const Span outer = span_;
      span_ = {};
      emit_program(fwd, rl, Category::kRecompute, false, 0);
      if (span_.first != kNone) w_.add_alloc(span_.first, std::max(0.0, total - stored));
      span_ = merge(outer, span_);
    }
    current_layer_expert_bytes_ = lp.expert_activation_bytes;
    const double expert_fwd = expert_forward_seconds(lp) * in_.load_imbalance;
    emit_program(lp.input_grad, l, Category::kCompute, memfine, expert_fwd);
    const double wgrad = full ? 0.0 : weight_grad_bytes(lp);
    if (full) {
      Labels wl = l;
      emit_program(lp.weight_grad, wl, Category::kCompute, false, 0);
    }
    if (span_.last != kNone) w_.add_free(span_.last, std::max(0.0, total - wgrad));
  }

  static Span merge(Span a, Span b) {
    if (a.first == kNone) return b;
    if (b.first == kNone) return a;
    return {a.first, b.last};
  }

  void emit_layer_weight_grad(const LayerPlan& lp, const Labels& l) {
    span_ = {};
    emit_program(lp.weight_grad, l, Category::kCompute, false, 0);
    if (span_.last != kNone) w_.add_free(span_.last, weight_grad_bytes(lp));
  }

  // ---------------------------------------------------------------- pipeline walk
  [[nodiscard]] std::size_t p2p_index(std::uint32_t lane, std::uint32_t pos, std::uint32_t mb) const {
    return (static_cast<std::size_t>(lane) * positions_ + pos) * m_ + mb;
  }

  // The P2P that carries micro-batch mb's activation (forward) or gradient (backward) from
  // `pos` to pos+1 (forward) or pos-1 (backward) on `lane`. Created on first reference. MoFa(23): on the
  // PP stream with the pp_overlap alpha/beta; without overlap the next compute waits for it (seal_send).
  TaskId p2p(bool forward, std::uint32_t lane, std::uint32_t pos, std::uint32_t mb) {
    TaskId& slot = (forward ? p2p_fwd_ : p2p_bwd_)[p2p_index(lane, pos, mb)];
    if (slot != kNone) return slot;
    const schedules::StageChunk from = sched_.locate(lane, pos);
    const schedules::StageChunk to = sched_.locate(lane, forward ? pos + 1 : pos - 1);
    TaskSpec t{.kind = TaskKind::kP2p, .category = Category::kPp, .stream = Stream::kPp, .scope = Scope::kRank,
               .phase = forward ? Phase::kForward : Phase::kBackward, .collective = Collective::kSendRecv,
               .stage = u16(static_cast<int>(from.stage)), .peer_stage = u16(static_cast<int>(to.stage)),
               .chunk = u16(static_cast<int>(from.chunk)), .microbatch = mb,
               .op = w_.intern(forward ? "pp_send_activation" : "pp_send_gradient"), .work = plan_.pp_bytes,
               .alpha = coeff(f_.pp_overlap.enabled, f_.pp_overlap.alpha),
               .beta = coeff(f_.pp_overlap.enabled, f_.pp_overlap.beta)};
    slot = w_.add(t);
    return slot;
  }

  struct OpUnits {
    std::vector<TaskId> units;
    std::vector<TaskId> blocking;  // sends the next compute must wait for (pp_overlap off)
  };

  OpUnits emit_op(int stage, const Op& op) {
    units_.clear();
    deps_.clear();
    OpUnits out;
    const schedules::ChunkSlot slot = sched_.slot(stage, op.chunk);
    const std::uint32_t last_pos = static_cast<std::uint32_t>(positions_ - 1);
    const LayerRange range = in_.position_layers[slot.position];
    Labels l{.stage = stage, .chunk = op.chunk, .microbatch = op.microbatch};
    const bool has_pre = plan_.pre && slot.position == 0;
    const bool has_post = plan_.post && slot.position == last_pos;
    auto& grads = layer_last_grad_[chunk_slot(stage, op.chunk)];
    const std::size_t n_layers = static_cast<std::size_t>(range.count) + (has_pre ? 1 : 0) + (has_post ? 1 : 0);
    if (grads.size() < n_layers) grads.resize(n_layers, kNone);
    // grads index: 0 = pre (if any), then layers in order, then post (if any).
    auto grad_index = [&](int layer_offset) { return static_cast<std::size_t>(layer_offset + (has_pre ? 1 : 0)); };

    switch (op.phase) {
      case schedules::Phase::kForward: {
        l.phase = Phase::kForward;
        if (slot.position > 0) deps_.push_back(p2p(true, slot.lane, slot.position - 1, op.microbatch));
        const TaskId gather = gather_before_forward_[chunk_slot(stage, op.chunk)];
        if (gather != kNone) deps_.push_back(gather);
        if (has_pre) {
          emit_layer_forward(*plan_.pre, l);
        }
        for (int i = 0; i < range.count; ++i) {
          l.layer = static_cast<std::uint32_t>(range.first + i);
          emit_layer_forward(plan_.layers[l.layer], l);
        }
        l.layer = kNone;
        if (has_post) emit_layer_forward(*plan_.post, l);
        if (slot.position < last_pos) {
          const TaskId send = p2p(true, slot.lane, slot.position, op.microbatch);
          seal_send(send, out);
        }
        break;
      }
      case schedules::Phase::kBackward:
      case schedules::Phase::kInputGrad: {
        const bool full = op.phase == schedules::Phase::kBackward;
        l.phase = full ? Phase::kBackward : Phase::kInputGrad;
        if (slot.position < last_pos) deps_.push_back(p2p(false, slot.lane, slot.position + 1, op.microbatch));
        // Offload copies were recorded in forward order: pre, layers..., post.
        std::size_t offload_index = 0;
        const auto count_offload = [&](const LayerPlan& lp) {
          return offloads(lp) ? 1u : 0u;
        };
        std::vector<std::size_t> offload_at;  // per emitted unit in forward order
        if (has_pre) offload_at.push_back(offload_index), offload_index += count_offload(*plan_.pre);
        for (int i = 0; i < range.count; ++i) {
          offload_at.push_back(offload_index);
          offload_index += count_offload(plan_.layers[static_cast<std::size_t>(range.first + i)]);
        }
        if (has_post) offload_at.push_back(offload_index);
        TaskId prefetch_after = kNone;
        std::size_t unit = offload_at.size();
        auto backward_one = [&](const LayerPlan& lp, std::size_t g) {
          --unit;
          emit_layer_backward(lp, l, full, prefetch_after, offload_at[unit]);
          prefetch_after = span_.first;
          if (full && span_.last != kNone) grads[g] = span_.last;
        };
        if (has_post) backward_one(*plan_.post, grad_index(range.count));
        for (int i = range.count - 1; i >= 0; --i) {
          l.layer = static_cast<std::uint32_t>(range.first + i);
          backward_one(plan_.layers[l.layer], grad_index(i));
        }
        l.layer = kNone;
        if (has_pre) backward_one(*plan_.pre, 0);
        if (!deps_.empty()) chunk_last_bi_[mb_slot(stage, op.chunk, op.microbatch)] = deps_.back();
        if (slot.position > 0) {
          const TaskId send = p2p(false, slot.lane, slot.position, op.microbatch);
          seal_send(send, out);
        }
        break;
      }
      case schedules::Phase::kWeightGrad: {
        l.phase = Phase::kWeightGrad;
        const TaskId bi = chunk_last_bi_[mb_slot(stage, op.chunk, op.microbatch)];
        MOFASIM_CHECK(bi != kNone, "W before its input-gradient pass on stage " + std::to_string(stage));
        deps_.push_back(bi);
        auto weight_one = [&](const LayerPlan& lp, std::size_t g) {
          emit_layer_weight_grad(lp, l);
          if (span_.last != kNone) grads[g] = span_.last;
        };
        if (has_post) weight_one(*plan_.post, grad_index(range.count));
        for (int i = range.count - 1; i >= 0; --i) {
          l.layer = static_cast<std::uint32_t>(range.first + i);
          weight_one(plan_.layers[l.layer], grad_index(i));
        }
        l.layer = kNone;
        if (has_pre) weight_one(*plan_.pre, 0);
        break;
      }
    }
    out.units = units_;
    return out;
  }

  TaskId first_compute(const std::vector<TaskId>& units) const {
    for (TaskId t : units) {
      if (w_.stream(t) == Stream::kCompute) return t;
    }
    return kNone;
  }

  void seal_send(TaskId send, OpUnits& out) {
    for (TaskId d : deps_) w_.add_edge(d, send);
    units_.push_back(send);
    if (!f_.pp_overlap.enabled) out.blocking.push_back(send);
  }

  // Two ops interleave (one's communication under the other's compute, MoFa(22)) when the
  // schedule pairs them (Op::overlaps_next: DualPipe's F&B chunks, the steady F/B pairs of 1F1B
  // and interleaved 1F1B built with PipelineShape::pair_steady_passes) and ep_overlap is on.
  // Pairing adjacent F and B of the plain 1F1B order is not safe — stage s's pair can wait on
  // stage s+1's pair that waits on it (a cycle the TaskGraph check reports); the paired variants
  // lengthen the warm-up so it cannot happen, which is the schedule's decision, so the executor
  // pairs only what the schedule marks.
  bool pairable(const Op& a, const Op& /*b*/) const { return a.overlaps_next && f_.ep_overlap.enabled; }

  // Interleaves two ops' units: after each compute task of one, switch to the other.
  static std::vector<TaskId> interleave(const Workload& w, const std::vector<TaskId>& a, const std::vector<TaskId>& b) {
    std::vector<TaskId> out;
    out.reserve(a.size() + b.size());
    std::size_t i = 0;
    std::size_t j = 0;
    bool from_a = true;
    while (i < a.size() || j < b.size()) {
      const std::vector<TaskId>& src = from_a ? a : b;
      std::size_t& k = from_a ? i : j;
      if (k >= src.size()) {
        from_a = !from_a;
        continue;
      }
      while (k < src.size()) {
        const TaskId t = src[k++];
        out.push_back(t);
        if (w.stream(t) == Stream::kCompute) break;
      }
      from_a = !from_a;
    }
    return out;
  }

  // MoFa(9) MoFa(10) MoFa(11) MoFa(12) have no closed form here: warm-up, steady and cool-down emerge
  // from replaying the schedule's order of passes, which this emits stage by stage.
  void emit_stage(int stage) {
    const auto ops = sched_.ops(stage);
    std::vector<TaskId> blocking;
    std::size_t i = 0;
    while (i < ops.size()) {
      std::vector<TaskId> order;
      std::vector<TaskId> next_blocking;
      if (i + 1 < ops.size() && pairable(ops[i], ops[i + 1])) {
        OpUnits a = emit_op(stage, ops[i]);
        OpUnits b = emit_op(stage, ops[i + 1]);
        order = interleave(w_, a.units, b.units);
        next_blocking = a.blocking;
        next_blocking.insert(next_blocking.end(), b.blocking.begin(), b.blocking.end());
        i += 2;
      } else {
        OpUnits a = emit_op(stage, ops[i]);
        order = std::move(a.units);
        next_blocking = std::move(a.blocking);
        i += 1;
      }
      const TaskId first = first_compute(order);
      if (first != kNone) {
        for (TaskId b : blocking) w_.add_edge(b, first);
        blocking = std::move(next_blocking);
      } else {
        blocking.insert(blocking.end(), next_blocking.begin(), next_blocking.end());
      }
      for (TaskId t : order) {
        // A P2P belongs to its sender's PP stream: chained there, in the sender's order.
        w_.chain(stage, w_.stream(t), t);
      }
      if (first != kNone) last_compute_[static_cast<std::size_t>(stage)] = last_of_stream(order, Stream::kCompute);
    }
    stage_blocking_[static_cast<std::size_t>(stage)] = blocking;
  }

  TaskId last_of_stream(const std::vector<TaskId>& order, Stream s) const {
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (w_.stream(*it) == s) return *it;
    }
    return kNone;
  }

  // ---------------------------------------------------------------- DP and optimizer
  struct Bucket {
    double bytes = 0;
    std::vector<TaskId> ready;  // last gradient task of each layer in the bucket
  };

  // Gradient buckets of one stage in the order the backward finishes them: chunks in reverse
  // position order, layers in reverse.
  std::vector<Bucket> buckets(int stage, bool expert) const {
    std::vector<Bucket> out;
    Bucket cur;
    const double cap = std::max(1.0, f_.dp_bucket_bytes);
    std::vector<int> chunks(static_cast<std::size_t>(sched_.chunks()));
    for (int c = 0; c < sched_.chunks(); ++c) chunks[static_cast<std::size_t>(c)] = c;
    std::sort(chunks.begin(), chunks.end(), [&](int a, int b) {
      return sched_.slot(stage, a).position > sched_.slot(stage, b).position;
    });
    for (int c : chunks) {
      const schedules::ChunkSlot slot = sched_.slot(stage, c);
      const LayerRange range = in_.position_layers[slot.position];
      const bool has_pre = plan_.pre && slot.position == 0;
      const bool has_post = plan_.post && slot.position == static_cast<std::uint32_t>(positions_ - 1);
      const auto& grads = layer_last_grad_[chunk_slot(stage, c)];
      std::vector<std::pair<const LayerPlan*, std::size_t>> order;
      const std::size_t off = has_pre ? 1 : 0;
      if (has_post) order.emplace_back(&*plan_.post, off + static_cast<std::size_t>(range.count));
      for (int i = range.count - 1; i >= 0; --i) {
        order.emplace_back(&plan_.layers[static_cast<std::size_t>(range.first + i)], off + static_cast<std::size_t>(i));
      }
      if (has_pre) order.emplace_back(&*plan_.pre, 0);
      for (const auto& [lp, g] : order) {
        const double bytes = expert ? lp->expert_grad_bytes : lp->dense_grad_bytes;
        if (bytes <= 0) continue;
        cur.bytes += bytes;
        if (g < grads.size() && grads[g] != kNone) cur.ready.push_back(grads[g]);
        if (cur.bytes >= cap) {
          out.push_back(std::move(cur));
          cur = {};
        }
      }
    }
    if (!expert && plan_.stages[static_cast<std::size_t>(stage)].extra_grad_bytes > 0) {
      cur.bytes += plan_.stages[static_cast<std::size_t>(stage)].extra_grad_bytes;
    }
    if (cur.bytes > 0) out.push_back(std::move(cur));
    return out;
  }

  TaskId add_stage_task(int stage, TaskKind kind, Category cat, Stream stream, Scope scope, Collective coll,
                        std::string_view name, double work) {
    const bool dp = cat == Category::kDp;
    TaskSpec t{.kind = kind, .category = cat, .stream = stream, .scope = scope, .phase = Phase::kStep,
               .collective = coll, .stage = u16(stage), .peer_stage = u16(stage), .op = w_.intern(name),
               .work = work, .alpha = coeff(dp && f_.dp_overlap.enabled, f_.dp_overlap.alpha),
               .beta = coeff(dp && f_.dp_overlap.enabled, f_.dp_overlap.beta)};
    const TaskId id = w_.add(t);
    w_.chain(stage, stream, id);
    return id;
  }

  // Distributed optimizer with DP overlap: the parameter all-gather of each chunk runs at the start
  // of the step, ahead of that chunk's first forward (MoFa(24), warm-up side).
  void emit_early_param_gathers() {
    for (int s = 0; s < sched_.stages(); ++s) {
      const StagePlan& sp = plan_.stages[static_cast<std::size_t>(s)];
      if (sp.param_gather_bytes <= 0 && sp.expert_param_gather_bytes <= 0) continue;
      std::vector<int> chunks(static_cast<std::size_t>(sched_.chunks()));
      for (int c = 0; c < sched_.chunks(); ++c) chunks[static_cast<std::size_t>(c)] = c;
      std::sort(chunks.begin(), chunks.end(),
                [&](int a, int b) { return sched_.slot(s, a).position < sched_.slot(s, b).position; });
      for (int c : chunks) {
        gather_before_forward_[chunk_slot(s, c)] = emit_param_gathers(s, 1.0 / sched_.chunks(), kNone);
      }
    }
  }

  // The distributed optimizer's parameter all-gathers of `share` of the stage's parameters: the
  // dense part over the DP group, then the routed experts over the expert-DP group, one after the
  // other on the DP stream (MoFa(25) MoFa(26)). Returns the last one (kNone when neither has bytes).
  TaskId emit_param_gathers(int stage, double share, TaskId after) {
    const StagePlan& sp = plan_.stages[static_cast<std::size_t>(stage)];
    TaskId last = kNone;
    for (const bool expert : {false, true}) {
      const double bytes = (expert ? sp.expert_param_gather_bytes : sp.param_gather_bytes) * share;
      if (bytes <= 0) continue;
      last = add_stage_task(stage, TaskKind::kCollective, Category::kDp, Stream::kDp,
                            expert ? Scope::kExpertDp : Scope::kDp, Collective::kAllGather,
                            expert ? "dp_expert_param_all_gather" : "dp_param_all_gather", bytes);
      if (after != kNone) w_.add_edge(after, last);
    }
    return last;
  }

  // MoFa(13): DP gradient reduction per bucket (overlapped with the backward, MoFa(24)) and the update
  // (1/d of it with the distributed optimizer, MoFa(26)).
  void emit_dp_and_optimizer(int stage) {
    const StagePlan& sp = plan_.stages[static_cast<std::size_t>(stage)];
    const Collective grad_coll = f_.distributed_optimizer ? Collective::kReduceScatter : Collective::kAllReduce;
    const TaskId last = last_compute_[static_cast<std::size_t>(stage)];
    std::vector<TaskId> grad_tasks;
    std::vector<double> grad_bytes;
    for (const bool expert : {false, true}) {
      for (Bucket& b : buckets(stage, expert)) {
        const TaskId t = add_stage_task(stage, TaskKind::kCollective, Category::kDp, Stream::kDp,
                                        expert ? Scope::kExpertDp : Scope::kDp, grad_coll,
                                        expert ? "dp_expert_grad_reduce" : "dp_grad_reduce", b.bytes);
        if (f_.dp_overlap.enabled) {
          for (TaskId r : b.ready) w_.add_edge(r, t);
        }
        if ((!f_.dp_overlap.enabled || b.ready.empty()) && last != kNone) w_.add_edge(last, t);
        grad_tasks.push_back(t);
        grad_bytes.push_back(b.bytes);
      }
    }
    // Without DP overlap the reduction is issued after the pipeline schedule returns, i.e. after
    // its last blocking send; with overlap the bucket hooks fire during the backward.
    if (!f_.dp_overlap.enabled) {
      for (TaskId b : stage_blocking_[static_cast<std::size_t>(stage)]) {
        for (TaskId g : grad_tasks) w_.add_edge(b, g);
      }
    }
    // The update itself waits for the schedule to return either way.
    pending_blocking_ = stage_blocking_[static_cast<std::size_t>(stage)];
    double total_grad = 0;
    for (double b : grad_bytes) total_grad += b;
    const bool late_gather = f_.distributed_optimizer && !f_.dp_overlap.enabled &&
                             (sp.param_gather_bytes > 0 || sp.expert_param_gather_bytes > 0);
    if (f_.optimizer_placement == model::OptimizerPlacement::kGpu) {
      const TaskId upd = add_stage_task(stage, TaskKind::kCompute, Category::kOptimizer, Stream::kCompute,
                                        Scope::kRank, Collective::kNoCollective, "optimizer_update", sp.optimizer_gpu_seconds);
      for (TaskId g : grad_tasks) w_.add_edge(g, upd);
      for (TaskId b : pending_blocking_) w_.add_edge(b, upd);
      if (late_gather) emit_param_gathers(stage, 1.0, upd);
      return;
    }
    // CPU optimizer (MoFa(27) MoFa(28)): per bucket D2H of its gradients, CPU update, H2D of its parameters.
    if (grad_tasks.empty()) {
      grad_tasks.push_back(last);
      grad_bytes.push_back(1);
      total_grad = 1;
    }
    for (std::size_t i = 0; i < grad_tasks.size(); ++i) {
      const double share = grad_bytes[i] / total_grad;
      const TaskId d2h = add_stage_task(stage, TaskKind::kCopy, Category::kOptimizer, Stream::kD2H, Scope::kRank,
                                        Collective::kCopy, "optimizer_grad_d2h", sp.grad_d2h_bytes * share);
      if (grad_tasks[i] != kNone) w_.add_edge(grad_tasks[i], d2h);
      for (TaskId b : pending_blocking_) w_.add_edge(b, d2h);
      const TaskId upd = add_stage_task(stage, TaskKind::kHost, Category::kOptimizer, Stream::kHost, Scope::kRank,
                                        Collective::kNoCollective, "optimizer_cpu_update", sp.optimizer_cpu_seconds * share);
      w_.add_edge(d2h, upd);
      const TaskId h2d = add_stage_task(stage, TaskKind::kCopy, Category::kOptimizer, Stream::kH2D, Scope::kRank,
                                        Collective::kCopy, "optimizer_param_h2d", sp.param_h2d_bytes * share);
      w_.add_edge(upd, h2d);
      if (late_gather) emit_param_gathers(stage, share, h2d);
    }
  }

  const GenerateInput& in_;
  const schedules::Schedule& sched_;
  const StepPlan& plan_;
  const model::FeatureSpec& f_;
  Workload w_;
  int positions_ = 0;
  int lanes_ = 1;
  int m_ = 1;

  std::vector<TaskId> p2p_fwd_, p2p_bwd_;
  std::vector<TaskId> chunk_last_bi_;
  std::vector<std::vector<TaskId>> offload_d2h_;
  std::vector<std::vector<TaskId>> layer_last_grad_;
  std::vector<TaskId> gather_before_forward_;
  std::vector<TaskId> last_compute_ = std::vector<TaskId>(static_cast<std::size_t>(sched_.stages()), kNone);
  std::vector<std::vector<TaskId>> stage_blocking_ =
      std::vector<std::vector<TaskId>>(static_cast<std::size_t>(sched_.stages()));

  std::vector<TaskId> pending_blocking_;  // blocking sends of the stage being closed

  // Emission state of the op being generated.
  std::vector<TaskId> deps_;
  std::vector<TaskId> units_;
  Span span_;
  double current_layer_expert_bytes_ = 0;
};

}  // namespace

Workload generate_workload(const GenerateInput& input) {
  if (input.schedule == nullptr || input.plan == nullptr) {
    throw std::invalid_argument("generate_workload: schedule and plan are required");
  }
  Generator g(input);
  return g.run();
}

std::vector<LayerRange> position_layers(const model::ModelSpec& model, const model::ParallelSpec& parallel,
                                        const schedules::Schedule& schedule) {
  model::ParallelSpec p = parallel;
  p.pp = schedule.stages();
  if (schedule.positions_per_lane() % schedule.stages() != 0) {
    throw std::invalid_argument("position_layers: positions per lane (" +
                                std::to_string(schedule.positions_per_lane()) + ") not a multiple of pp");
  }
  p.vpp = schedule.positions_per_lane() / schedule.stages();
  if (!p.stage_layers.empty() && static_cast<int>(p.stage_layers.size()) != p.pp * p.vpp) {
    throw std::invalid_argument("position_layers: parallelism.stage_layers has " +
                                std::to_string(p.stage_layers.size()) + " entries, need pp*vpp = " +
                                std::to_string(p.pp * p.vpp));
  }
  std::vector<LayerRange> out;
  for (const model::ChunkLayers& c : model::chunk_layers(model, p)) {
    out.push_back({.first = c.first_layer, .count = c.num_layers});
  }
  return out;
}

}  // namespace mofasim::executor
