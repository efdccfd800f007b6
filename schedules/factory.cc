// Dispatch from ScheduleKind to the per-schedule builders and closed forms.
#include "schedules/factory.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "schedules/dualpipe.h"
#include "schedules/gpipe.h"
#include "schedules/interleaved_1f1b.h"
#include "schedules/one_f_one_b.h"
#include "schedules/zero_bubble_h1.h"
#include "model/stage_layout.h"
#include "sim/units/bounded_cache.h"
#include "sim/units/check.h"

namespace mofasim::schedules {

PipelineShape step_shape(const model::ModelSpec& model, const model::ParallelSpec& parallel,
                         const model::FeatureSpec& features) {
  if (parallel.micro_batch < 1 || parallel.dp < 1) {
    throw std::invalid_argument("parallelism: micro_batch and dp must be >= 1 for a pipeline shape");
  }
  return {.stages = parallel.pp,
          .microbatches = parallel.microbatches(),
          .chunks = parallel.vpp,
          .pair_steady_passes = features.ep_overlap.enabled && model.is_moe() && parallel.ep > 1};
}

std::vector<double> stage_inflight_microbatches(const model::ModelSpec& model, const model::ParallelSpec& parallel,
                                                const model::FeatureSpec& features) {
  const PipelineShape shape = step_shape(model, parallel, features);
  std::vector<double> inflight(static_cast<std::size_t>(parallel.pp));
  for (int s = 0; s < parallel.pp; ++s) inflight[static_cast<std::size_t>(s)] = peak_activation(parallel.schedule, shape, s);
  return inflight;
}

std::vector<model::RankOrder> rank_orders(const Schedule& schedule, const model::ModelSpec& model,
                                          const model::ParallelSpec& parallel, const model::FeatureSpec& features) {
  const std::vector<model::ChunkLayers> positions = model::chunk_layers(model, parallel);
  if (static_cast<int>(positions.size()) != schedule.positions_per_lane()) {
    throw std::invalid_argument("rank_orders: the schedule has " + std::to_string(schedule.positions_per_lane()) +
                                " positions per lane, the layer split " + std::to_string(positions.size()));
  }
  std::vector<model::RankOrder> orders(static_cast<std::size_t>(schedule.stages()));
  for (int s = 0; s < schedule.stages(); ++s) {
    model::RankOrder& o = orders[static_cast<std::size_t>(s)];
    for (int c = 0; c < schedule.chunks(); ++c) o.chunks.push_back(positions[schedule.slot(s, c).position]);
    const std::span<const Op> ops = schedule.ops(s);
    o.passes.reserve(ops.size());
    for (const Op& op : ops) {
      o.passes.push_back({.phase = op.phase, .chunk = op.chunk,
                          .paired_with_next = op.overlaps_next && features.ep_overlap.enabled});
    }
  }
  return orders;
}

std::vector<model::RankOrder> rank_orders(const model::ModelSpec& model, const model::ParallelSpec& parallel,
                                          const model::FeatureSpec& features) {
  return rank_orders(*shared_schedule(parallel.schedule, step_shape(model, parallel, features)), model, parallel, features);
}

namespace {

bool same_shape(const PipelineShape& a, const PipelineShape& b) {
  return a.stages == b.stages && a.microbatches == b.microbatches && a.chunks == b.chunks &&
         a.pair_steady_passes == b.pair_steady_passes;
}

bool same_split(const std::vector<model::ChunkLayers>& a, const std::vector<model::ChunkLayers>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const model::ChunkLayers& x, const model::ChunkLayers& y) {
    return x.chunk == y.chunk && x.rank == y.rank && x.virtual_stage == y.virtual_stage &&
           x.first_layer == y.first_layer && x.num_layers == y.num_layers;
  });
}

}  // namespace

std::shared_ptr<const std::vector<model::RankOrder>> shared_rank_orders(const model::ModelSpec& model,
                                                                        const model::ParallelSpec& parallel,
                                                                        const model::FeatureSpec& features) {
  struct Entry {
    ScheduleKind kind;
    PipelineShape shape;
    std::vector<model::ChunkLayers> split;
    bool ep_overlap;
    std::shared_ptr<const std::vector<model::RankOrder>> orders;
  };
  thread_local BoundedCache<Entry, 8, Eviction::kLeastRecentlyUsed> cache;
  const PipelineShape shape = step_shape(model, parallel, features);
  std::vector<model::ChunkLayers> split = model::chunk_layers(model, parallel);
  const bool ep_overlap = features.ep_overlap.enabled;
  if (const Entry* hit = cache.find([&](const Entry& e) {
        return e.kind == parallel.schedule && same_shape(e.shape, shape) && e.ep_overlap == ep_overlap &&
               same_split(e.split, split);
      })) {
    return hit->orders;
  }
  std::vector<model::RankOrder> built = rank_orders(*shared_schedule(parallel.schedule, shape), model, parallel, features);
  static std::atomic<std::uint64_t> next_id{1};
  for (model::RankOrder& o : built) o.id = next_id.fetch_add(1);
  auto orders = std::make_shared<const std::vector<model::RankOrder>>(std::move(built));
  cache.insert({parallel.schedule, shape, std::move(split), ep_overlap, orders});
  return orders;
}

std::shared_ptr<const Schedule> shared_schedule(ScheduleKind kind, const PipelineShape& shape) {
  struct Entry {
    ScheduleKind kind;
    PipelineShape shape;
    std::shared_ptr<const Schedule> schedule;
  };
  thread_local BoundedCache<Entry, 8, Eviction::kLeastRecentlyUsed> cache;
  if (const Entry* hit = cache.find([&](const Entry& e) { return e.kind == kind && same_shape(e.shape, shape); })) {
    return hit->schedule;
  }
  auto built = std::make_shared<const Schedule>(build_schedule(kind, shape));
  cache.insert({kind, shape, built});
  return built;
}

Schedule build_schedule(ScheduleKind kind, const PipelineShape& shape) {
  switch (kind) {
    case ScheduleKind::kGpipe: return build_gpipe(shape);
    case ScheduleKind::k1F1B: return build_one_f_one_b(shape);
    case ScheduleKind::kInterleaved1F1B: return build_interleaved_1f1b(shape);
    case ScheduleKind::kZbH1: return build_zero_bubble_h1(shape);
    case ScheduleKind::kDualPipe: return build_dualpipe(shape);
  }
  MOFASIM_UNREACHABLE("unknown ScheduleKind");
}

double bubble_time(ScheduleKind kind, const PipelineShape& shape, const PassTimes& times) {
  switch (kind) {
    case ScheduleKind::kGpipe: return gpipe_bubble(shape, times);
    case ScheduleKind::k1F1B: return one_f_one_b_bubble(shape, times);
    case ScheduleKind::kInterleaved1F1B: return interleaved_1f1b_bubble(shape, times);
    case ScheduleKind::kZbH1: return zero_bubble_h1_bubble(shape, times);
    case ScheduleKind::kDualPipe: return dualpipe_bubble(shape, times);
  }
  MOFASIM_UNREACHABLE("unknown ScheduleKind");
}

int in_flight_chunks(ScheduleKind kind, const PipelineShape& shape, int stage) {
  switch (kind) {
    case ScheduleKind::kGpipe: return gpipe_in_flight(shape, stage);
    case ScheduleKind::k1F1B: return one_f_one_b_in_flight(shape, stage);
    case ScheduleKind::kInterleaved1F1B: return interleaved_1f1b_in_flight(shape, stage);
    case ScheduleKind::kZbH1: return zero_bubble_h1_in_flight(shape, stage);
    case ScheduleKind::kDualPipe: return dualpipe_in_flight(shape, stage);
  }
  MOFASIM_UNREACHABLE("unknown ScheduleKind");
}

double peak_activation(ScheduleKind kind, const PipelineShape& shape, int stage) {
  const int chunks = in_flight_chunks(kind, shape, stage);
  return kind == ScheduleKind::kInterleaved1F1B ? static_cast<double>(chunks) / shape.chunks : chunks;
}

}  // namespace mofasim::schedules
