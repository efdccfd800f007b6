// Workload generator, per layer: tasks, pass programs and the MoFa feature transformations (TP
// overlap, CP ring, MemFine, recompute, offload) of one layer's forward and backward.
#include "sim/executor/generator.h"

#include <algorithm>
#include <string>
#include <vector>

#include "sim/units/check.h"

namespace mofasim::executor::detail {
namespace {

Stream stream_of(Scope scope) {
  switch (scope) {
    case Scope::kTp:
    case Scope::kExpertTp: return Stream::kTp;
    case Scope::kCp: return Stream::kCp;
    case Scope::kEp:
    case Scope::kExpertTpEp: return Stream::kEp;
    case Scope::kDp:
    case Scope::kExpertDp:
    case Scope::kDpReplica:
    case Scope::kExpertDpReplica: return Stream::kDp;
    case Scope::kRank:
    case Scope::kCount: break;
  }
  MOFASIM_UNREACHABLE("no stream for this scope");
}

Category category_of(Scope scope) {
  switch (scope) {
    case Scope::kTp:
    case Scope::kExpertTp: return Category::kTp;
    case Scope::kCp: return Category::kCp;
    case Scope::kEp:
    case Scope::kExpertTpEp: return Category::kEp;
    case Scope::kDp:
    case Scope::kExpertDp:
    case Scope::kDpReplica:
    case Scope::kExpertDpReplica: return Category::kDp;
    case Scope::kRank:
    case Scope::kCount: break;
  }
  MOFASIM_UNREACHABLE("no category for this scope");
}

// TP and expert-TP collectives both pipeline with their GEMM under TP overlap (as the closed form
// pairs them, analytic_layer_time.cc).
bool tp_like(Scope scope) { return scope == Scope::kTp || scope == Scope::kExpertTp; }

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

}  // namespace

TaskId Generator::add_compute(const Labels& l, std::string_view name, double seconds, double flops, Category cat) {
  TaskSpec t{.kind = TaskKind::kCompute, .category = cat, .stream = Stream::kCompute, .scope = Scope::kRank,
             .phase = l.phase, .stage = u16(l.stage), .peer_stage = u16(l.stage), .chunk = u16(l.chunk),
             .microbatch = l.microbatch, .layer = l.layer, .op = w_.intern(name), .work = seconds,
             .flops = flops};
  return w_.add(t);
}

TaskId Generator::add_comm(const Labels& l, const PlanOp& op, double bytes) {
  const model::OverlapSpec& ov = overlap_of(op.scope);
  TaskSpec t{.kind = TaskKind::kCollective, .category = category_of(op.scope), .stream = stream_of(op.scope),
             .scope = op.scope, .phase = l.phase, .collective = op.collective, .stage = u16(l.stage),
             .peer_stage = u16(l.stage), .chunk = u16(l.chunk), .microbatch = l.microbatch, .layer = l.layer,
             .op = w_.intern(op.name), .work = bytes, .alpha = coeff(ov.enabled, ov.alpha),
             .beta = coeff(ov.enabled, ov.beta)};
  return w_.add(t);
}

const model::OverlapSpec& Generator::overlap_of(Scope scope) const {
  switch (scope) {
    case Scope::kTp:
    case Scope::kExpertTp: return f_.tp_overlap;
    case Scope::kCp: return f_.cp_overlap;
    case Scope::kEp:
    case Scope::kExpertTpEp: return f_.ep_overlap;
    default: return f_.dp_overlap;
  }
}

// Emits `t` after every task in deps_, records it in the current op's unit list and makes it
// the only dependency of what follows.
void Generator::seal(TaskId t) {
  for (TaskId d : deps_) w_.add_edge(d, t);
  units_.push_back(t);
  deps_.assign(1, t);
  touch(t);
}

void Generator::touch(TaskId t) {
  if (span_.first == kNone) span_.first = t;
  span_.last = t;
}

// ---------------------------------------------------------------- pass programs
// Emits one pass program of one layer; consecutive plain compute ops merge into one task.
void Generator::emit_program(const PassPlan& pass, const Labels& l, Category compute_cat, bool memfine_split,
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
    if (ring && op.is_comm && op.scope == Scope::kCp && op.collective == CollectiveKind::kRingStep) continue;
    const bool next_is_gemm = i + 1 < ops.size() && !ops[i + 1].is_comm &&
                              (ops[i + 1].flags & kFlagTpOverlappable) != 0;
    const bool next_is_tp = i + 1 < ops.size() && ops[i + 1].is_comm && tp_like(ops[i + 1].scope);
    if (op.is_comm) {
      flush();
      if (tp_split && tp_like(op.scope) && next_is_gemm) {
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

// Bytes of one KV block a CP ring step exchanges: the pass's CP P2P ops' total over c-1 steps
// (0 under cp_comm_type all_gather / a2a, whose collectives run as ordinary ones).
double Generator::cp_block_bytes(const PassPlan& pass) const {
  double total = 0;
  for (const PlanOp& op : pass.ops) {
    if (op.is_comm && op.scope == Scope::kCp && op.collective == CollectiveKind::kRingStep) total += op.bytes;
  }
  return in_.parallel.cp > 1 ? total / (in_.parallel.cp - 1) : 0;
}

// MoFa(20): k pieces; comm_first: all-gather piece i feeds GEMM piece i; otherwise GEMM
// piece i feeds reduce-scatter / all-reduce piece i. Stream order serialises pieces of a kind.
void Generator::emit_tp_overlap(const Labels& l, const PlanOp& comm, const PlanOp& gemm, Category cat, bool comm_first) {
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
void Generator::emit_cp_ring(const Labels& l, const PlanOp& attn, double seconds, double block_bytes, Category cat) {
  const int c = in_.parallel.cp;
  const std::vector<TaskId> entry = deps_;
  TaskId prev_attn = kNone;
  TaskId prev_p2p = kNone;
  PlanOp p2p{.name = "cp_kv_p2p", .is_comm = true, .scope = Scope::kCp,
             .collective = CollectiveKind::kRingStep};
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
void Generator::emit_memfine(const Labels& l, const PlanOp& expert, double seconds, double forward_seconds) {
  const int k = f_.memfine_chunks;
  const double chunk_bytes = current_layer_expert_bytes_ / k;
  for (int i = 0; i < k; ++i) {
    const std::string suffix = piece_suffix(i, k);
    Labels rl = l;
    rl.phase = TaskPhase::kRecompute;
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
double Generator::stored_bytes(const LayerPlan& lp) const {
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
bool Generator::transformer_layer(const LayerPlan& lp) const {
  return !(plan_.pre && &lp == &*plan_.pre) && !(plan_.post && &lp == &*plan_.post);
}

bool Generator::offloads(const LayerPlan& lp) const {
  return f_.activation_offload.enabled && transformer_layer(lp) && stored_bytes(lp) > 0;
}

bool Generator::memfine_applies(const LayerPlan& lp) const { return f_.memfine && lp.expert_activation_bytes > 0; }

double Generator::weight_grad_bytes(const LayerPlan& lp) const { return lp.weight_grad_inputs.kept(memfine_applies(lp)); }

double Generator::expert_forward_seconds(const LayerPlan& lp) {
  double s = 0;
  for (const PlanOp& op : lp.forward.ops) {
    if (!op.is_comm && (op.flags & kFlagExpert) != 0) s += op.seconds;
  }
  return s;
}

// ZeRO-3 / FSDP: the layer's parameter all-gathers (dense over DP, experts over expert DP) on the
// DP stream, waited for by the layer's pass. FSDP and Megatron-FSDP prefetch one unit ahead and
// hold at most two gathered units (the one computing, the next), so the gather may start once the
// pass two before it on this stage has ended (at once for the step's first two), and after the
// previous gather (one all-gather stream).
void Generator::emit_fsdp_gather(const LayerPlan& lp, const Labels& l) {
  if (!fsdp_gathers(lp)) return;
  const TaskId after = fsdp_pass_end_[static_cast<std::size_t>(l.stage)][0];
  TaskId& previous = fsdp_last_gather_[static_cast<std::size_t>(l.stage)];
  for (const bool expert : {false, true}) {
    const double bytes = expert ? lp.fsdp_expert_gather_bytes : lp.fsdp_gather_bytes;
    if (bytes <= 0) continue;
    const PlanOp op{.name = expert ? "fsdp_expert_param_all_gather" : "fsdp_param_all_gather", .is_comm = true,
                    .scope = expert ? Scope::kExpertDp : Scope::kDp, .collective = CollectiveKind::kAllGather};
    const TaskId g = add_comm(l, op, bytes);
    if (after != kNone) w_.add_edge(after, g);
    if (previous != kNone) w_.add_edge(previous, g);
    previous = g;
    units_.push_back(g);
    deps_.push_back(g);
  }
}

// Records the end of a ZeRO-3 layer pass for the gathers that follow it.
void Generator::end_fsdp_pass(const LayerPlan& lp, const Labels& l) {
  if (!fsdp_gathers(lp) || span_.last == kNone) return;
  auto& ends = fsdp_pass_end_[static_cast<std::size_t>(l.stage)];
  ends = {ends[1], span_.last};
}

bool Generator::fsdp_gathers(const LayerPlan& lp) { return lp.fsdp_gather_bytes + lp.fsdp_expert_gather_bytes > 0; }

// MoFa(7): one layer's forward, its compute and communication as DAG tasks; with offload (MoFa(33)
// MoFa(34) MoFa(35)) its stored activation goes D2H after it.
void Generator::emit_layer_forward(const LayerPlan& lp, const Labels& l) {
  span_ = {};
  emit_fsdp_gather(lp, l);
  emit_program(lp.forward, l, Category::kCompute, false, 0);
  end_fsdp_pass(lp, l);
  const double stored = stored_bytes(lp);
  if (span_.first == kNone) return;
  w_.add_alloc(span_.first, stored);
  if (offloads(lp)) {
    TaskSpec t{.kind = TaskKind::kCopy, .category = Category::kOffload, .stream = Stream::kD2H,
               .scope = Scope::kRank, .phase = l.phase,
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
void Generator::emit_layer_backward(const LayerPlan& lp, const Labels& l, bool full, TaskId prefetch_after,
                                    std::size_t offload_index) {
  const double stored = stored_bytes(lp);
  const double total = lp.activation_bytes - (memfine_applies(lp) ? lp.expert_activation_bytes : 0.0);
  span_ = {};
  emit_fsdp_gather(lp, l);
  if (offloads(lp)) {
    const auto& d2hs = offload_d2h_[mb_slot(l.stage, l.chunk, l.microbatch)];
    MOFASIM_CHECK(offload_index < d2hs.size(), "offload copy missing for a layer's backward");
    TaskSpec t{.kind = TaskKind::kCopy, .category = Category::kOffload, .stream = Stream::kH2D,
               .scope = Scope::kRank, .phase = l.phase,
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
  rl.phase = TaskPhase::kRecompute;
  const bool memfine = memfine_applies(lp);
  model::RecomputeKind recompute = transformer_layer(lp) ? f_.recompute : model::RecomputeKind::kNone;
  if (recompute == model::RecomputeKind::kFull && !lp.full_recompute) recompute = model::RecomputeKind::kNone;
  if (recompute == model::RecomputeKind::kSelective) {  // MoFa(29) MoFa(30)
    // The re-run part in forward order: each re-run op's share of its forward, and the collectives
    // inside the part between them (a MoE layer's dispatch between router and experts). As the
    // closed form prices them: the compute alone (no CP ring, load imbalance or MemFine split) and
    // every collective whole (no TP pieces).
    PassPlan rerun;
    for (const PlanOp& op : lp.forward.ops) {
      if ((op.flags & kFlagSelectiveRecompute) == 0) continue;
      PlanOp r = op;
      r.name += "_recompute";
      r.flags = kFlagNone;
      if (!op.is_comm) {
        r.seconds = op.recompute_seconds;
        r.flops = op.recompute_flops;
      }
      rerun.ops.push_back(r);
    }
    const Span outer = span_;
    span_ = {};
    emit_program(rerun, rl, Category::kRecompute, false, 0);
    if (span_.first != kNone) w_.add_alloc(span_.first, std::max(0.0, total - stored));
    span_ = merge(outer, span_);
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
  const double extra = transformer_layer(lp) ? 0.0 : lp.backward_working_bytes;  // the head block's
  if (extra > 0 && span_.first != kNone) w_.add_alloc(span_.first, extra);
  // A block with no input gradient (the embedding) keeps everything for its weight-gradient pass.
  const bool deferred = !full && lp.input_grad.ops.empty();
  if (span_.last != kNone && !deferred) w_.add_free(span_.last, std::max(0.0, total - wgrad) + extra);
  end_fsdp_pass(lp, l);
}

Span Generator::merge(Span a, Span b) {
  if (a.first == kNone) return b;
  if (b.first == kNone) return a;
  return {a.first, b.last};
}

void Generator::emit_layer_weight_grad(const LayerPlan& lp, const Labels& l) {
  span_ = {};
  emit_program(lp.weight_grad, l, Category::kCompute, false, 0);
  const double all = lp.activation_bytes - (memfine_applies(lp) ? lp.expert_activation_bytes : 0.0);
  if (span_.last != kNone) w_.add_free(span_.last, lp.input_grad.ops.empty() ? all : weight_grad_bytes(lp));
}

}  // namespace mofasim::executor::detail
