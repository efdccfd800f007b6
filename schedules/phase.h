// The phase of a pass (one micro-batch through one model chunk), the one Phase every layer uses:
// the schedules order passes by it, the op table splits each op's cost by it (model/op_table.h),
// and the step generator labels the tasks of a pass with it (executor::TaskPhase adds recompute
// and the optimizer step). A header of its own with no dependencies (docs/layering.rules).
#pragma once

#include <cstdint>

namespace mofasim::schedules {

// kBackward is the full backward (input and weight gradient together). Schedules that split the
// backward (ZB-H1, parts of DualPipe) emit kInputGrad then, later, kWeightGrad for that pass.
// An op's cost has the first three (OpCost::forward, backward_input, backward_weight), in this
// order, so they index per-phase arrays ([0, kOpCostPhaseCount)); kBackward is their sum.
enum class Phase : std::uint8_t { kForward, kInputGrad, kWeightGrad, kBackward };

inline constexpr int kOpCostPhaseCount = 3;  // kForward, kInputGrad, kWeightGrad

}  // namespace mofasim::schedules
