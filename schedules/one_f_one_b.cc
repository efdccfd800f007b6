// 1F1B (PipeDream-Flush): warm-up forwards, one-forward-one-backward steady state, drain; with
// pair_steady_passes, a warm-up stepping by 2 per stage and each steady F/B marked as one pair
// (the pairs MoFa(22) overlaps).
#include "schedules/one_f_one_b.h"

#include <algorithm>

namespace mofasim::schedules {
namespace {

int warmup_forwards(const PipelineShape& shape, int stage) {
  const int p = shape.stages;
  return std::min(shape.pair_steady_passes ? 2 * (p - stage) - 1 : p - stage - 1, shape.microbatches);
}

}  // namespace

Schedule build_one_f_one_b(const PipelineShape& shape) {
  check_shape(shape, ScheduleKind::k1F1B);
  Schedule schedule(ScheduleKind::k1F1B, ScheduleLayout::single_lane(shape.stages, shape.microbatches, 1));
  schedule.set_pair_steady_passes(shape.pair_steady_passes);
  const int p = shape.stages;
  const int m = shape.microbatches;
  for (int s = 0; s < p; ++s) {
    const int warmup = warmup_forwards(shape, s);
    int next_f = 0;
    int next_b = 0;
    const auto f = [&](bool pair) {
      schedule.append(s, Op{.phase = Phase::kForward, .overlaps_next = pair,
                            .microbatch = static_cast<std::uint32_t>(next_f++)});
    };
    const auto b = [&] { schedule.append(s, Op{.phase = Phase::kBackward, .microbatch = static_cast<std::uint32_t>(next_b++)}); };
    for (int i = 0; i < warmup; ++i) f(false);
    for (int i = 0; i < m - warmup; ++i) {
      f(shape.pair_steady_passes);
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
  // The warm-up's forwards, plus the steady forward that starts before its pair's backward frees one.
  return std::min(warmup_forwards(shape, stage) + 1, shape.microbatches);
}

}  // namespace mofasim::schedules
