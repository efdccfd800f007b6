// Schedule container: layout checks, the builder step and the per-stage contract check.
#include "schedules/schedule.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "sim/units/check.h"

namespace mofasim::schedules {

ScheduleLayout ScheduleLayout::single_lane(int stages, int microbatches, int chunks) {
  ScheduleLayout layout{.stages = stages, .microbatches = microbatches, .chunks = chunks, .lanes = 1, .slots = {}, .microbatch_lane = {}};
  layout.slots.resize(static_cast<std::size_t>(stages) * static_cast<std::size_t>(chunks));
  for (int s = 0; s < stages; ++s) {
    for (int c = 0; c < chunks; ++c) {
      layout.slots[static_cast<std::size_t>(s * chunks + c)] =
          ChunkSlot{.lane = 0, .position = static_cast<std::uint32_t>(c * stages + s)};
    }
  }
  layout.microbatch_lane.assign(static_cast<std::size_t>(microbatches), 0);
  return layout;
}

Schedule::Schedule(ScheduleKind kind, ScheduleLayout layout) : kind_(kind), layout_(std::move(layout)) {
  const auto& l = layout_;
  if (l.stages < 1) throw std::invalid_argument("schedule: stages must be >= 1, got " + std::to_string(l.stages));
  if (l.microbatches < 1) {
    throw std::invalid_argument("schedule: microbatches must be >= 1, got " + std::to_string(l.microbatches));
  }
  if (l.chunks < 1 || l.chunks > 65535) {
    throw std::invalid_argument("schedule: chunks must be in [1, 65535], got " + std::to_string(l.chunks));
  }
  if (l.lanes < 1) throw std::invalid_argument("schedule: lanes must be >= 1, got " + std::to_string(l.lanes));
  const int slots = l.stages * l.chunks;
  if (slots % l.lanes != 0) {
    throw std::invalid_argument("schedule: stages*chunks (" + std::to_string(slots) + ") must divide into " +
                                std::to_string(l.lanes) + " equal lanes");
  }
  if (l.slots.size() != static_cast<std::size_t>(slots)) {
    throw std::invalid_argument("schedule: layout.slots must have stages*chunks entries");
  }
  if (l.microbatch_lane.size() != static_cast<std::size_t>(l.microbatches)) {
    throw std::invalid_argument("schedule: layout.microbatch_lane must have one entry per micro-batch");
  }
  positions_per_lane_ = slots / l.lanes;
  constexpr StageChunk kUnset{.stage = UINT32_MAX, .chunk = UINT32_MAX};
  by_slot_.assign(static_cast<std::size_t>(slots), kUnset);
  for (int s = 0; s < l.stages; ++s) {
    for (int c = 0; c < l.chunks; ++c) {
      const ChunkSlot slot = l.slots[static_cast<std::size_t>(s * l.chunks + c)];
      if (slot.lane >= static_cast<std::uint32_t>(l.lanes) ||
          slot.position >= static_cast<std::uint32_t>(positions_per_lane_)) {
        throw std::invalid_argument("schedule: slot of stage " + std::to_string(s) + " chunk " + std::to_string(c) +
                                    " is outside lanes x positions");
      }
      auto& owner = by_slot_[slot.lane * static_cast<std::uint32_t>(positions_per_lane_) + slot.position];
      if (owner.stage != UINT32_MAX) {
        throw std::invalid_argument("schedule: lane " + std::to_string(slot.lane) + " position " +
                                    std::to_string(slot.position) + " is held by two chunks");
      }
      owner = StageChunk{.stage = static_cast<std::uint32_t>(s), .chunk = static_cast<std::uint32_t>(c)};
    }
  }
  for (std::uint32_t lane : l.microbatch_lane) {
    if (lane >= static_cast<std::uint32_t>(l.lanes)) {
      throw std::invalid_argument("schedule: micro-batch lane " + std::to_string(lane) + " out of range");
    }
  }
  ops_.resize(static_cast<std::size_t>(l.stages));
}

void Schedule::append(int stage, Op op) {
  MOFASIM_CHECK(stage >= 0 && stage < stages(), "append: stage out of range");
  MOFASIM_CHECK(op.chunk < chunks(), "append: chunk out of range");
  MOFASIM_CHECK(op.microbatch < static_cast<std::uint32_t>(microbatches()), "append: micro-batch out of range");
  ops_[static_cast<std::size_t>(stage)].push_back(op);
}

std::span<const Op> Schedule::ops(int stage) const {
  MOFASIM_CHECK(stage >= 0 && stage < stages(), "ops: stage out of range");
  return ops_[static_cast<std::size_t>(stage)];
}

std::size_t Schedule::total_ops() const {
  std::size_t n = 0;
  for (const auto& v : ops_) n += v.size();
  return n;
}

ChunkSlot Schedule::slot(int stage, int chunk) const {
  MOFASIM_CHECK(stage >= 0 && stage < stages() && chunk >= 0 && chunk < chunks(), "slot: out of range");
  return layout_.slots[static_cast<std::size_t>(stage * chunks() + chunk)];
}

StageChunk Schedule::locate(std::uint32_t lane, std::uint32_t position) const {
  MOFASIM_CHECK(lane < static_cast<std::uint32_t>(lanes()) &&
                    position < static_cast<std::uint32_t>(positions_per_lane_),
                "locate: out of range");
  return by_slot_[lane * static_cast<std::uint32_t>(positions_per_lane_) + position];
}

std::uint32_t Schedule::lane_of(std::uint32_t microbatch) const {
  MOFASIM_CHECK(microbatch < static_cast<std::uint32_t>(microbatches()), "lane_of: out of range");
  return layout_.microbatch_lane[microbatch];
}

namespace {

// Progress of one (micro-batch, chunk) pair on its stage.
enum class PassState : std::uint8_t { kNone, kForwardDone, kInputGradDone, kDone };

}  // namespace

void validate(const Schedule& schedule) {
  const auto m = static_cast<std::size_t>(schedule.microbatches());
  const auto v = static_cast<std::size_t>(schedule.chunks());
  std::vector<PassState> state(m * v);
  for (int s = 0; s < schedule.stages(); ++s) {
    std::fill(state.begin(), state.end(), PassState::kNone);
    const auto fail = [&](std::size_t index, const Op& op, const std::string& why) {
      throw std::invalid_argument("schedule " + to_string(schedule.kind()) + ": stage " + std::to_string(s) +
                                  " op " + std::to_string(index) + " " + to_string(op) + ": " + why);
    };
    const auto ops = schedule.ops(s);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (schedule.slot(s, op.chunk).lane != schedule.lane_of(op.microbatch)) {
        fail(i, op, "chunk belongs to another lane than the micro-batch");
      }
      if (op.overlaps_next && i + 1 == ops.size()) fail(i, op, "overlaps_next on the last op of the stage");
      PassState& st = state[op.microbatch * v + op.chunk];
      switch (op.phase) {
        case Phase::kForward:
          if (st != PassState::kNone) fail(i, op, "forward appears twice");
          st = PassState::kForwardDone;
          break;
        case Phase::kBackward:
          if (st != PassState::kForwardDone) fail(i, op, "full backward without a preceding forward, or repeated");
          st = PassState::kDone;
          break;
        case Phase::kInputGrad:
          if (st != PassState::kForwardDone) fail(i, op, "input-grad backward without a preceding forward, or repeated");
          st = PassState::kInputGradDone;
          break;
        case Phase::kWeightGrad:
          if (st != PassState::kInputGradDone) fail(i, op, "weight-grad pass without a preceding input-grad pass");
          st = PassState::kDone;
          break;
      }
    }
    for (std::uint32_t mb = 0; mb < m; ++mb) {
      for (std::uint32_t c = 0; c < v; ++c) {
        if (schedule.slot(s, static_cast<int>(c)).lane != schedule.lane_of(mb)) continue;
        if (state[mb * v + c] != PassState::kDone) {
          throw std::invalid_argument("schedule " + to_string(schedule.kind()) + ": stage " + std::to_string(s) +
                                      " never completes micro-batch " + std::to_string(mb) + " chunk " +
                                      std::to_string(c));
        }
      }
    }
  }
}

void check_shape(const PipelineShape& shape, ScheduleKind schedule) {
  const auto bad = [&](const char* field, int value, const char* allowed) {
    throw std::invalid_argument(to_string(schedule) + " schedule: " + field + " = " + std::to_string(value) +
                                "; allowed: " + allowed);
  };
  if (shape.stages < 1) bad("stages", shape.stages, ">= 1");
  if (shape.microbatches < 1) bad("microbatches", shape.microbatches, ">= 1");
  if (shape.chunks < 1) bad("chunks", shape.chunks, ">= 1");
}

void check_stage(const PipelineShape& shape, int stage, ScheduleKind schedule) {
  check_shape(shape, schedule);
  if (stage < 0 || stage >= shape.stages) {
    throw std::invalid_argument(to_string(schedule) + " schedule: stage = " + std::to_string(stage) +
                                "; allowed: [0, " + std::to_string(shape.stages) + ")");
  }
}

std::string to_string(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kGpipe: return "gpipe";
    case ScheduleKind::k1F1B: return "1f1b";
    case ScheduleKind::kInterleaved1F1B: return "interleaved-1f1b";
    case ScheduleKind::kZbH1: return "zb-h1";
    case ScheduleKind::kDualPipe: return "dualpipe";
  }
  MOFASIM_UNREACHABLE("unknown ScheduleKind");
}

std::string to_string(Phase phase) {
  switch (phase) {
    case Phase::kForward: return "F";
    case Phase::kBackward: return "B";
    case Phase::kInputGrad: return "Bi";
    case Phase::kWeightGrad: return "W";
  }
  MOFASIM_UNREACHABLE("unknown Phase");
}

std::string to_string(const Op& op) {
  return to_string(op.phase) + "(mb " + std::to_string(op.microbatch) + ", chunk " + std::to_string(op.chunk) + ")";
}

}  // namespace mofasim::schedules
