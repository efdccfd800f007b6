// Dependency-driven replay of a Schedule (see evaluate.h). Each stage advances its op pointer as
// far as its inputs allow; sweeps repeat until every stage is done or a sweep makes no progress,
// which is a deadlock.
#include "schedules/evaluate.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "sim/units/check.h"

namespace mofasim::schedules {

CostTable::CostTable(int stages, int chunks, PassCosts costs)
    : stages_(stages), chunks_(chunks), costs_(static_cast<std::size_t>(stages) * static_cast<std::size_t>(chunks), costs) {}

CostTable CostTable::uniform(int stages, int chunks, PassCosts costs) {
  if (stages < 1) throw std::invalid_argument("cost table: stages must be >= 1, got " + std::to_string(stages));
  if (chunks < 1) throw std::invalid_argument("cost table: chunks must be >= 1, got " + std::to_string(chunks));
  if (costs.forward.count() < 0 || costs.input_grad.count() < 0 || costs.weight_grad.count() < 0) {
    throw std::invalid_argument("cost table: pass costs must be >= 0");
  }
  return CostTable(stages, chunks, costs);
}

void CostTable::set(int stage, int chunk, PassCosts costs) {
  if (stage < 0 || stage >= stages_ || chunk < 0 || chunk >= chunks_) {
    throw std::invalid_argument("cost table: (stage " + std::to_string(stage) + ", chunk " + std::to_string(chunk) +
                                ") outside " + std::to_string(stages_) + " x " + std::to_string(chunks_));
  }
  if (costs.forward.count() < 0 || costs.input_grad.count() < 0 || costs.weight_grad.count() < 0) {
    throw std::invalid_argument("cost table: pass costs must be >= 0");
  }
  costs_[static_cast<std::size_t>(stage * chunks_ + chunk)] = costs;
}

const PassCosts& CostTable::at(int stage, int chunk) const {
  MOFASIM_DCHECK(stage >= 0 && stage < stages_ && chunk >= 0 && chunk < chunks_, "cost table: out of range");
  return costs_[static_cast<std::size_t>(stage * chunks_ + chunk)];
}

namespace {

Duration cost_of(const PassCosts& c, Phase phase) {
  switch (phase) {
    case Phase::kForward: return c.forward;
    case Phase::kBackward: return c.input_grad + c.weight_grad;
    case Phase::kInputGrad: return c.input_grad;
    case Phase::kWeightGrad: return c.weight_grad;
  }
  MOFASIM_UNREACHABLE("unknown Phase");
}

// Where an op's cross-stage input comes from, resolved once per (stage, chunk).
struct Neighbours {
  std::optional<std::uint32_t> prev_position;  // F input: previous virtual stage
  std::optional<std::uint32_t> next_position;  // B input: next virtual stage
  bool prev_remote = false;                    // on another stage: add p2p latency
  bool next_remote = false;
};

}  // namespace

EvaluateResult evaluate(const Schedule& schedule, const CostTable& costs, const EvaluateOptions& options) {
  validate(schedule);
  if (costs.stages() != schedule.stages() || costs.chunks() != schedule.chunks()) {
    throw std::invalid_argument("evaluate: cost table is " + std::to_string(costs.stages()) + " x " +
                                std::to_string(costs.chunks()) + " but the schedule has " +
                                std::to_string(schedule.stages()) + " stages x " + std::to_string(schedule.chunks()) +
                                " chunks");
  }
  if (options.p2p_latency.count() < 0) throw std::invalid_argument("evaluate: p2p_latency must be >= 0");
  if (!(options.overlapped_pair_scale > 0 && options.overlapped_pair_scale <= 1)) {
    throw std::invalid_argument("evaluate: overlapped_pair_scale must be in (0, 1], got " +
                                std::to_string(options.overlapped_pair_scale));
  }
  if (!(options.weight_grad_memory_ratio >= 0)) {
    throw std::invalid_argument("evaluate: weight_grad_memory_ratio must be >= 0");
  }

  const int p = schedule.stages();
  const int v = schedule.chunks();
  const auto positions = static_cast<std::uint32_t>(schedule.positions_per_lane());
  std::vector<Neighbours> neighbours(static_cast<std::size_t>(p * v));
  for (int s = 0; s < p; ++s) {
    for (int c = 0; c < v; ++c) {
      const ChunkSlot slot = schedule.slot(s, c);
      Neighbours& n = neighbours[static_cast<std::size_t>(s * v + c)];
      if (slot.position > 0) {
        n.prev_position = slot.position - 1;
        n.prev_remote = schedule.locate(slot.lane, slot.position - 1).stage != static_cast<std::uint32_t>(s);
      }
      if (slot.position + 1 < positions) {
        n.next_position = slot.position + 1;
        n.next_remote = schedule.locate(slot.lane, slot.position + 1).stage != static_cast<std::uint32_t>(s);
      }
    }
  }

  // Finish times per (micro-batch, position); kTimeMax = not yet run.
  const std::size_t cells = static_cast<std::size_t>(schedule.microbatches()) * positions;
  std::vector<Time> forward_done(cells, kTimeMax);
  std::vector<Time> backward_done(cells, kTimeMax);  // full or input-grad B
  const auto cell = [&](std::uint32_t mb, std::uint32_t position) { return std::size_t{mb} * positions + position; };

  struct Cursor {
    std::size_t next = 0;
    Time free = kTimeZero;
    int activations = 0;
    int deferred = 0;
  };
  std::vector<Cursor> cursors(static_cast<std::size_t>(p));
  EvaluateResult result;
  result.stages.resize(static_cast<std::size_t>(p));
  if (options.record_op_times) {
    result.op_start.resize(static_cast<std::size_t>(p));
    result.op_end.resize(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
      result.op_start[static_cast<std::size_t>(s)].reserve(schedule.ops(s).size());
      result.op_end[static_cast<std::size_t>(s)].reserve(schedule.ops(s).size());
    }
  }

  // When op's cross-stage input is ready (kTimeMax if not yet).
  const auto input_ready = [&](int s, const Op& op) -> Time {
    const Neighbours& n = neighbours[static_cast<std::size_t>(s * v + op.chunk)];
    const auto at = [&](const std::vector<Time>& done, std::uint32_t position, bool remote) {
      const Time t = done[cell(op.microbatch, position)];
      return t == kTimeMax || !remote ? t : t + options.p2p_latency;
    };
    switch (op.phase) {
      case Phase::kForward: return n.prev_position ? at(forward_done, *n.prev_position, n.prev_remote) : kTimeZero;
      case Phase::kBackward:
      case Phase::kInputGrad:
        return n.next_position ? at(backward_done, *n.next_position, n.next_remote) : kTimeZero;
      case Phase::kWeightGrad: return kTimeZero;  // same-stage input; stage order guarantees it
    }
    MOFASIM_UNREACHABLE("unknown Phase");
  };

  std::size_t remaining = schedule.total_ops();
  bool progress = true;
  while (remaining > 0 && progress) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      Cursor& cur = cursors[static_cast<std::size_t>(s)];
      StageStats& stats = result.stages[static_cast<std::size_t>(s)];
      const auto ops = schedule.ops(s);
      while (cur.next < ops.size()) {
        const Op& op = ops[cur.next];
        Time ready = input_ready(s, op);
        // An overlapped pair starts once both of its inputs are there (one fused launch).
        if (op.overlaps_next && ready != kTimeMax) ready = std::max(ready, input_ready(s, ops[cur.next + 1]));
        if (ready == kTimeMax) break;
        Duration cost = cost_of(costs.at(s, op.chunk), op.phase);
        const bool in_pair = op.overlaps_next || (cur.next > 0 && ops[cur.next - 1].overlaps_next);
        if (in_pair && options.overlapped_pair_scale != 1.0) {
          cost = Duration{std::llround(static_cast<double>(cost.count()) * options.overlapped_pair_scale)};
        }
        const Time start = std::max(cur.free, ready);
        const Time end = start + cost;
        if (options.record_op_times) {
          result.op_start[static_cast<std::size_t>(s)].push_back(start);
          result.op_end[static_cast<std::size_t>(s)].push_back(end);
        }
        const std::uint32_t position = schedule.slot(s, op.chunk).position;
        switch (op.phase) {
          case Phase::kForward:
            forward_done[cell(op.microbatch, position)] = end;
            ++cur.activations;
            break;
          case Phase::kBackward:
            backward_done[cell(op.microbatch, position)] = end;
            --cur.activations;
            break;
          case Phase::kInputGrad:
            backward_done[cell(op.microbatch, position)] = end;
            --cur.activations;
            ++cur.deferred;
            break;
          case Phase::kWeightGrad: --cur.deferred; break;
        }
        stats.busy += cost;
        stats.peak_activations = std::max(stats.peak_activations, cur.activations);
        stats.peak_deferred_weight_grads = std::max(stats.peak_deferred_weight_grads, cur.deferred);
        stats.peak_memory = std::max(stats.peak_memory, cur.activations + options.weight_grad_memory_ratio * cur.deferred);
        cur.free = end;
        ++cur.next;
        --remaining;
        progress = true;
      }
    }
  }

  if (remaining > 0) {
    std::vector<ScheduleDeadlock::Waiting> waiting;
    std::string message = "schedule " + to_string(schedule.kind()) + " deadlocks with " + std::to_string(remaining) +
                          " ops unrun; waiting:";
    for (int s = 0; s < p; ++s) {
      const Cursor& cur = cursors[static_cast<std::size_t>(s)];
      const auto ops = schedule.ops(s);
      if (cur.next >= ops.size()) continue;
      const Op& op = ops[cur.next];
      const Neighbours& n = neighbours[static_cast<std::size_t>(s * v + op.chunk)];
      const ChunkSlot slot = schedule.slot(s, op.chunk);
      const bool forward = op.phase == Phase::kForward;
      const std::uint32_t position = forward ? *n.prev_position : *n.next_position;
      const StageChunk from = schedule.locate(slot.lane, position);
      const std::string waits_for = std::string(forward ? "F" : "B") + "(mb " + std::to_string(op.microbatch) +
                                    ") of stage " + std::to_string(from.stage) + " chunk " +
                                    std::to_string(from.chunk);
      if (waiting.size() < 8) {
        message += " stage " + std::to_string(s) + " op " + std::to_string(cur.next) + " " + to_string(op) +
                   " waits for " + waits_for + ";";
      }
      waiting.push_back({.stage = s, .index = cur.next, .op = op, .waits_for = waits_for});
    }
    throw ScheduleDeadlock(message, std::move(waiting));
  }

  for (const Cursor& cur : cursors) result.makespan = std::max(result.makespan, cur.free - kTimeZero);
  for (StageStats& stats : result.stages) stats.idle = result.makespan - stats.busy;
  return result;
}

}  // namespace mofasim::schedules
