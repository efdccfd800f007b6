// ZB-H1: 1F1B order with the backward split into B and W, stage s deferring s W passes.
#include "schedules/zero_bubble_h1.h"

#include <algorithm>

namespace mofasim::schedules {

Schedule build_zero_bubble_h1(const PipelineShape& shape) {
  check_shape(shape, ScheduleKind::kZbH1);
  Schedule schedule(ScheduleKind::kZbH1, ScheduleLayout::single_lane(shape.stages, shape.microbatches, 1));
  const int p = shape.stages;
  const int m = shape.microbatches;
  for (int s = 0; s < p; ++s) {
    const int warmup = std::min(p - s - 1, m);
    std::uint32_t next_f = 0;
    std::uint32_t next_b = 0;
    std::uint32_t next_w = 0;
    const auto f = [&] { schedule.append(s, Op{.phase = Phase::kForward, .microbatch = next_f++}); };
    // B, then the oldest W once more than s are waiting.
    const auto b = [&] {
      schedule.append(s, Op{.phase = Phase::kInputGrad, .microbatch = next_b++});
      if (next_b - next_w > static_cast<std::uint32_t>(s)) {
        schedule.append(s, Op{.phase = Phase::kWeightGrad, .microbatch = next_w++});
      }
    };
    for (int i = 0; i < warmup; ++i) f();
    for (int i = 0; i < m - warmup; ++i) {
      f();
      b();
    }
    while (next_b < static_cast<std::uint32_t>(m)) b();
    while (next_w < static_cast<std::uint32_t>(m)) {
      schedule.append(s, Op{.phase = Phase::kWeightGrad, .microbatch = next_w++});
    }
  }
  return schedule;
}

double zero_bubble_h1_bubble(const PipelineShape& shape, const PassTimes& t) {
  check_shape(shape, ScheduleKind::kZbH1);
  return (shape.stages - 1) * (t.forward + t.input_grad - t.weight_grad);
}

int zero_bubble_h1_in_flight(const PipelineShape& shape, int stage) {
  check_stage(shape, stage, ScheduleKind::kZbH1);
  return std::min(shape.stages - stage, shape.microbatches);
}

int zero_bubble_h1_deferred_weight_grads(const PipelineShape& shape, int stage) {
  check_stage(shape, stage, ScheduleKind::kZbH1);
  return std::min(stage, shape.microbatches);
}

}  // namespace mofasim::schedules
