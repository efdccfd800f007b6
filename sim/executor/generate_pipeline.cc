// Workload generator, the schedule walk: each stage's ops in the schedule's order, their layers,
// the P2P between virtual stages and the EP pairing of two passes.
#include "sim/executor/generator.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "sim/units/check.h"

namespace mofasim::executor::detail {

std::size_t Generator::p2p_index(std::uint32_t lane, std::uint32_t pos, std::uint32_t mb) const {
  return (static_cast<std::size_t>(lane) * positions_ + pos) * m_ + mb;
}

// The P2P that carries micro-batch mb's activation (forward) or gradient (backward) from
// `pos` to pos+1 (forward) or pos-1 (backward) on `lane`. Created on first reference. MoFa(23): on the
// PP stream with the pp_overlap alpha/beta; without overlap the next compute waits for it (seal_send).
TaskId Generator::p2p(bool forward, std::uint32_t lane, std::uint32_t pos, std::uint32_t mb) {
  TaskId& slot = (forward ? p2p_fwd_ : p2p_bwd_)[p2p_index(lane, pos, mb)];
  if (slot != kNone) return slot;
  const schedules::StageChunk from = sched_.locate(lane, pos);
  const schedules::StageChunk to = sched_.locate(lane, forward ? pos + 1 : pos - 1);
  TaskSpec t{.kind = TaskKind::kP2p, .category = Category::kPp, .stream = Stream::kPp, .scope = Scope::kRank,
             .phase = forward ? TaskPhase::kForward : TaskPhase::kBackward, .collective = CollectiveKind::kSendRecv,
             .stage = u16(static_cast<int>(from.stage)), .peer_stage = u16(static_cast<int>(to.stage)),
             .chunk = u16(static_cast<int>(from.chunk)), .microbatch = mb,
             .op = w_.intern(forward ? "pp_send_activation" : "pp_send_gradient"), .work = plan_.pp_bytes,
             .alpha = coeff(f_.pp_overlap.enabled, f_.pp_overlap.alpha),
             .beta = coeff(f_.pp_overlap.enabled, f_.pp_overlap.beta)};
  slot = w_.add(t);
  return slot;
}

Generator::OpUnits Generator::emit_op(int stage, const Op& op) {
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
      l.phase = TaskPhase::kForward;
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
      l.phase = full ? TaskPhase::kBackward : TaskPhase::kInputGrad;
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
      l.phase = TaskPhase::kWeightGrad;
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

TaskId Generator::first_compute(const std::vector<TaskId>& units) const {
  for (TaskId t : units) {
    if (w_.stream(t) == Stream::kCompute) return t;
  }
  return kNone;
}

void Generator::seal_send(TaskId send, OpUnits& out) {
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
bool Generator::pairable(const Op& a, const Op& /*b*/) const { return a.overlaps_next && f_.ep_overlap.enabled; }

// Interleaves two ops' units: after each compute task of one, switch to the other.
std::vector<TaskId> Generator::interleave(const Workload& w, const std::vector<TaskId>& a, const std::vector<TaskId>& b) {
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

// DualPipe's overlap (DeepSeek-V3 report §3.2.1, Fig. 4): each pass runs a whole module (the
// compute between two all-to-alls: attention, the MLP; in layers without all-to-alls, such as the
// dense layers and the head, one layer) while the other pass's all-to-all is in flight. Each pass
// is cut into segments, a module and the EP communication after it; the two passes' segments
// alternate, the backward's first (its combine gradient runs under the forward's
// attention). On in-order compute and EP streams this gives
// the figure's rows: combine-grad | F attention, F dispatch | B MLP, dispatch-grad | F MLP, F
// combine | B attention. Switching per compute task (the other schedules' interleave) put one op of
// the other pass under an all-to-all, and the compute stream stalled at the first op needing it.
std::vector<TaskId> interleave_modules(const Workload& w, const std::vector<TaskId>& a, const std::vector<TaskId>& b) {
  struct Segment {
    std::size_t begin, module_end, end;  // [begin, module_end) the module, [module_end, end) its EP communication
  };
  const auto segments = [&w](const std::vector<TaskId>& units) {
    std::vector<Segment> out;
    std::size_t k = 0;
    while (k < units.size()) {
      const std::size_t begin = k;
      // A module ends at its all-to-all, or where the next layer begins: a stretch of layers without
      // all-to-alls (dense layers, the head) is one module per layer, not one for the whole stretch.
      while (k < units.size() && w.stream(units[k]) != Stream::kEp &&
             (k == begin || w.layer(units[k]) == w.layer(units[begin]))) {
        ++k;
      }
      const std::size_t module_end = k;
      while (k < units.size() && w.stream(units[k]) == Stream::kEp) ++k;
      out.push_back({begin, module_end, k});
    }
    return out;
  };
  const std::vector<Segment> sa = segments(a);
  const std::vector<Segment> sb = segments(b);
  const auto backward = [&w](const std::vector<TaskId>& units) {
    return std::any_of(units.begin(), units.end(), [&w](TaskId t) {
      return w.phase(t) == TaskPhase::kBackward || w.phase(t) == TaskPhase::kInputGrad;
    });
  };
  const bool b_first = backward(b) && !backward(a);
  std::vector<TaskId> out;
  out.reserve(a.size() + b.size());
  const auto emit = [&out](const std::vector<TaskId>& units, const Segment& s) {
    out.insert(out.end(), units.begin() + static_cast<std::ptrdiff_t>(s.begin), units.begin() + static_cast<std::ptrdiff_t>(s.end));
  };
  const std::vector<Segment>& first = b_first ? sb : sa;
  const std::vector<Segment>& second = b_first ? sa : sb;
  const std::vector<TaskId>& first_units = b_first ? b : a;
  const std::vector<TaskId>& second_units = b_first ? a : b;
  for (std::size_t i = 0; i < std::max(first.size(), second.size()); ++i) {
    if (i < first.size()) emit(first_units, first[i]);
    if (i < second.size()) emit(second_units, second[i]);
  }
  return out;
}

// MoFa(9) MoFa(10) MoFa(11) MoFa(12) have no closed form here: warm-up, steady and cool-down emerge
// from replaying the schedule's order of passes, which this emits stage by stage.
StageEnd Generator::emit_stage(int stage) {
  const auto ops = sched_.ops(stage);
  StageEnd end;
  std::vector<TaskId> blocking;
  std::size_t i = 0;
  while (i < ops.size()) {
    std::vector<TaskId> order;
    std::vector<TaskId> next_blocking;
    if (i + 1 < ops.size() && pairable(ops[i], ops[i + 1])) {
      OpUnits a = emit_op(stage, ops[i]);
      OpUnits b = emit_op(stage, ops[i + 1]);
      order = sched_.kind() == schedules::ScheduleKind::kDualPipe ? interleave_modules(w_, a.units, b.units)
                                                                   : interleave(w_, a.units, b.units);
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
    if (first != kNone) end.last_compute = last_of_stream(order, Stream::kCompute);
  }
  end.blocking = std::move(blocking);
  return end;
}

TaskId Generator::last_of_stream(const std::vector<TaskId>& order, Stream s) const {
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (w_.stream(*it) == s) return *it;
  }
  return kNone;
}

}  // namespace mofasim::executor::detail
