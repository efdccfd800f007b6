// The pipeline schedules mofasim knows, by name. A header of its own with no dependencies, so that
// the base cost model's ParallelSpec (model/spec.h) can name a schedule without depending on the
// schedules themselves (docs/layering.rules).
#pragma once

namespace mofasim::schedules {

enum class ScheduleKind { kGpipe, k1F1B, kInterleaved1F1B, kZbH1, kDualPipe };

}  // namespace mofasim::schedules
