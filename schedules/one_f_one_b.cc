// 1F1B (PipeDream-Flush): warm-up forwards, one-forward-one-backward steady state, drain.
#include "schedules/one_f_one_b.h"

#include <algorithm>

namespace mofasim::schedules {

Schedule build_one_f_one_b(const PipelineShape& shape) {
  check_shape(shape, ScheduleKind::k1F1B);
  Schedule schedule(ScheduleKind::k1F1B, ScheduleLayout::single_lane(shape.stages, shape.microbatches, 1));
  const int p = shape.stages;
  const int m = shape.microbatches;
  for (int s = 0; s < p; ++s) {
    const int warmup = std::min(p - s - 1, m);
    int next_f = 0;
    int next_b = 0;
    const auto f = [&] { schedule.append(s, Op{.phase = Phase::kForward, .microbatch = static_cast<std::uint32_t>(next_f++)}); };
    const auto b = [&] { schedule.append(s, Op{.phase = Phase::kBackward, .microbatch = static_cast<std::uint32_t>(next_b++)}); };
    for (int i = 0; i < warmup; ++i) f();
    for (int i = 0; i < m - warmup; ++i) {
      f();
      b();
    }
    while (next_b < m) b();
  }
  return schedule;
}

double one_f_one_b_bubble(const PipelineShape& shape, const PassTimes& t) {
  check_shape(shape, ScheduleKind::k1F1B);
  return (shape.stages - 1) * (t.forward + t.full_backward());
}

int one_f_one_b_in_flight(const PipelineShape& shape, int stage) {
  check_stage(shape, stage, ScheduleKind::k1F1B);
  return std::min(shape.stages - stage, shape.microbatches);
}

}  // namespace mofasim::schedules
