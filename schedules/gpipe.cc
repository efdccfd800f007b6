// GPipe: all forwards, then all backwards, on every stage.
#include "schedules/gpipe.h"

namespace mofasim::schedules {

Schedule build_gpipe(const PipelineShape& shape) {
  check_shape(shape, ScheduleKind::kGpipe);
  Schedule schedule(ScheduleKind::kGpipe, ScheduleLayout::single_lane(shape.stages, shape.microbatches, 1));
  const auto m = static_cast<std::uint32_t>(shape.microbatches);
  for (int s = 0; s < shape.stages; ++s) {
    for (std::uint32_t mb = 0; mb < m; ++mb) schedule.append(s, Op{.phase = Phase::kForward, .microbatch = mb});
    for (std::uint32_t mb = 0; mb < m; ++mb) schedule.append(s, Op{.phase = Phase::kBackward, .microbatch = mb});
  }
  return schedule;
}

double gpipe_bubble(const PipelineShape& shape, const PassTimes& t) {
  check_shape(shape, ScheduleKind::kGpipe);
  return (shape.stages - 1) * (t.forward + t.full_backward());
}

int gpipe_in_flight(const PipelineShape& shape, int stage) {
  check_stage(shape, stage, ScheduleKind::kGpipe);
  return shape.microbatches;
}

}  // namespace mofasim::schedules
