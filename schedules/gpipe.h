// GPipe (Huang et al. 2019, "GPipe: Efficient Training of Giant Neural Networks using Pipeline
// Parallelism"): every stage runs all m forwards, then all m full backwards (ascending
// micro-batch order, as torch.distributed.pipelining's ScheduleGPipe does).
//   bubble (idle per stage)  = (p − 1)(T_F + T_B + T_W)          (reference-formulas.md §3)
//   peak in-flight activation = m·M_B on every stage (all forwards precede the first backward)
#pragma once

#include "schedules/pass_times.h"
#include "schedules/schedule.h"

namespace mofasim::schedules {

// shape.chunks is ignored (one chunk per stage).
Schedule build_gpipe(const PipelineShape& shape);

double gpipe_bubble(const PipelineShape& shape, const PassTimes& t);
// Micro-batch activations held at the peak on `stage`: m.
int gpipe_in_flight(const PipelineShape& shape, int stage);

}  // namespace mofasim::schedules
