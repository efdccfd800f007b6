// Per-pass times that the closed-form bubble formulas take: one micro-batch through one *full*
// pipeline stage (L/p layers), in any consistent unit (seconds, or abstract units in tests).
// ZB notation: input_grad is T_B (activation gradient), weight_grad is T_W; a full backward is
// T_B + T_W. Interleaved 1F1B's chunk passes cost these divided by v.
#pragma once

namespace mofasim::schedules {

struct PassTimes {
  double forward = 0;      // T_F
  double input_grad = 0;   // T_B (ZB notation)
  double weight_grad = 0;  // T_W

  [[nodiscard]] double full_backward() const { return input_grad + weight_grad; }
};

}  // namespace mofasim::schedules
