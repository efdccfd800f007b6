// One door from a ScheduleKind to its order and its closed forms, so callers (the step
// generator, the analytic model, the tuner) never switch on the kind themselves.
#pragma once

#include <memory>
#include <vector>

#include "model/memory.h"
#include "model/spec.h"
#include "schedules/pass_times.h"
#include "schedules/schedule.h"

namespace mofasim::schedules {

// The pipeline shape of a training step: p, m and v from `parallel`, and pair_steady_passes when
// EP overlap (MoFa(22)) is on for an MoE model with expert parallelism (ep > 1), so 1F1B and
// interleaved 1F1B run their paired variant (no all-to-all, nothing to hide: plain order).
// Callers that build a run's schedule or ask for its in-flight activations take the shape here.
PipelineShape step_shape(const model::ModelSpec& model, const model::ParallelSpec& parallel,
                         const model::FeatureSpec& features);

// MoFa(5)'s n_inflight for every pipeline rank of the step a scenario describes, in units of
// M_B (one micro-batch's activation of L/p layers): peak_activation() over step_shape(). The
// memory model, the analytic model, the tuner and the executor all read it from here.
std::vector<double> stage_inflight_microbatches(const model::ModelSpec& model, const model::ParallelSpec& parallel,
                                                const model::FeatureSpec& features);

// Each rank's passes in `schedule`'s order with the layers of the chunks they run (chunk c of
// stage s holds position slot(s, c).position of its lane: model::chunk_layers' entry of that
// index), for the memory model's pass-by-pass walk (model::RankOrder); a pass is paired with the
// next where the step simulation interleaves them (Op::overlaps_next with features.ep_overlap).
std::vector<model::RankOrder> rank_orders(const Schedule& schedule, const model::ModelSpec& model,
                                          const model::ParallelSpec& parallel, const model::FeatureSpec& features);
// The same for the schedule the step runs (build_schedule over step_shape).
std::vector<model::RankOrder> rank_orders(const model::ModelSpec& model, const model::ParallelSpec& parallel,
                                          const model::FeatureSpec& features);

// shape.chunks is used by kInterleaved1F1B only; shape.pair_steady_passes by k1F1B and
// kInterleaved1F1B (DualPipe always pairs; GPipe and ZB-H1 ignore it). Throws std::invalid_argument on a shape the
// schedule does not support (see each schedule's header).
Schedule build_schedule(ScheduleKind kind, const PipelineShape& shape);
// build_schedule() through a small per-thread cache of the last shapes asked for: a schedule is a
// pure function of (kind, shape), and the analytic model and the tuner ask for the same few shapes
// again and again (a step's memory walk needs every rank's whole order: O(p m v) ops to build).
std::shared_ptr<const Schedule> shared_schedule(ScheduleKind kind, const PipelineShape& shape);
// rank_orders() of the step's own schedule (shared_schedule over step_shape) through the same kind of
// cache, keyed by everything the orders depend on: the schedule's kind and shape, the layer split
// (model::chunk_layers) and whether EP overlap pairs passes.
std::shared_ptr<const std::vector<model::RankOrder>> shared_rank_orders(const model::ModelSpec& model,
                                                                        const model::ParallelSpec& parallel,
                                                                        const model::FeatureSpec& features);

// Idle time per stage (the bubble), in the unit of `times`; times are per full stage.
// DualPipe's overlapped pair is taken as T_F + T_B,full (no overlap credit).
double bubble_time(ScheduleKind kind, const PipelineShape& shape, const PassTimes& times);

// Model-chunk forward activations held at the peak on `stage` (F run, B not yet): micro-batches
// for GPipe, 1F1B and ZB-H1; chunks of L/(p·v) layers for interleaved; chunks of L/p layers for
// DualPipe. This is MoFa(5)'s n_inflight.
int in_flight_chunks(ScheduleKind kind, const PipelineShape& shape, int stage);

// The same peak in units of M_B, one micro-batch's activation of a full L/p-layer stage:
// in_flight_chunks × (layers per chunk)/(L/p).
double peak_activation(ScheduleKind kind, const PipelineShape& shape, int stage);

}  // namespace mofasim::schedules
