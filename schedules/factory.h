// One door from a ScheduleKind to its order and its closed forms, so callers (the step
// generator, the analytic model, the tuner) never switch on the kind themselves.
#pragma once

#include "schedules/pass_times.h"
#include "schedules/schedule.h"

namespace mofasim::schedules {

// shape.chunks is used by kInterleaved1F1B only. Throws std::invalid_argument on a shape the
// schedule does not support (see each schedule's header).
Schedule build_schedule(ScheduleKind kind, const PipelineShape& shape);

// Idle time per stage (the bubble), in the unit of `times`; times are per full stage.
// DualPipe's overlapped pair is taken as T_F + T_B,full (no overlap credit).
double bubble_time(ScheduleKind kind, const PipelineShape& shape, const PassTimes& times);

// Model-chunk forward activations held at the peak on `stage` (F run, B not yet): micro-batches
// for GPipe, 1F1B and ZB-H1; chunks of L/(p·v) layers for interleaved; chunks of L/p layers for
// DualPipe. This is MoFa eq. (5)'s n_inflight.
int in_flight_chunks(ScheduleKind kind, const PipelineShape& shape, int stage);

// The same peak in units of M_B, one micro-batch's activation of a full L/p-layer stage:
// in_flight_chunks × (layers per chunk)/(L/p).
double peak_activation(ScheduleKind kind, const PipelineShape& shape, int stage);

// Copies of the parameters a stage holds relative to 1F1B (2 for DualPipe, else 1).
int parameter_copies(ScheduleKind kind);

}  // namespace mofasim::schedules
