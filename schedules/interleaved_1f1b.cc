// Interleaved 1F1B in Megatron-LM's chunk order (see the header for the mapping), and its
// EP-overlap variant with paired steady passes.
#include "schedules/interleaved_1f1b.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mofasim::schedules {
namespace {

void check_interleaved(const PipelineShape& shape) {
  check_shape(shape, ScheduleKind::kInterleaved1F1B);
  if (shape.chunks < 2) {
    throw std::invalid_argument("interleaved-1f1b schedule: chunks = " + std::to_string(shape.chunks) +
                                "; allowed: >= 2 (use 1f1b for one chunk)");
  }
  if (shape.microbatches % shape.stages != 0) {
    throw std::invalid_argument("interleaved-1f1b schedule: microbatches = " + std::to_string(shape.microbatches) +
                                " must be a multiple of stages = " + std::to_string(shape.stages));
  }
}

// The paired variant warms up one chunk-forward more (Megatron's combined 1F1B).
int warmup_chunks(const PipelineShape& shape, int stage) {
  const int total = shape.microbatches * shape.chunks;
  const int extra = shape.pair_steady_passes ? 1 : 0;
  return std::min(2 * (shape.stages - stage - 1) + (shape.chunks - 1) * shape.stages + extra, total);
}

// The k-th forward (or backward) chunk pass on a stage, in Megatron's order.
Op chunk_pass(const PipelineShape& shape, int k, bool forward) {
  const int p = shape.stages;
  const int group = p * shape.chunks;
  const int in_group = k % group;
  int chunk = in_group / p;
  if (!forward) chunk = shape.chunks - 1 - chunk;
  const int microbatch = (k / group) * p + k % p;
  return Op{.phase = forward ? Phase::kForward : Phase::kBackward,
            .chunk = static_cast<std::uint16_t>(chunk),
            .microbatch = static_cast<std::uint32_t>(microbatch)};
}

}  // namespace

Schedule build_interleaved_1f1b(const PipelineShape& shape) {
  check_interleaved(shape);
  Schedule schedule(ScheduleKind::kInterleaved1F1B,
                    ScheduleLayout::single_lane(shape.stages, shape.microbatches, shape.chunks));
  schedule.set_pair_steady_passes(shape.pair_steady_passes);
  const int total = shape.microbatches * shape.chunks;
  for (int s = 0; s < shape.stages; ++s) {
    const int warmup = warmup_chunks(shape, s);
    int next_f = 0;
    int next_b = 0;
    for (int i = 0; i < warmup; ++i) schedule.append(s, chunk_pass(shape, next_f++, true));
    for (int i = 0; i < total - warmup; ++i) {
      Op forward = chunk_pass(shape, next_f++, true);
      forward.overlaps_next = shape.pair_steady_passes;
      schedule.append(s, forward);
      schedule.append(s, chunk_pass(shape, next_b++, false));
    }
    while (next_b < total) schedule.append(s, chunk_pass(shape, next_b++, false));
  }
  return schedule;
}

double interleaved_1f1b_bubble(const PipelineShape& shape, const PassTimes& t) {
  check_interleaved(shape);
  return (shape.stages - 1) * (t.forward + t.full_backward()) / shape.chunks;
}

int interleaved_1f1b_in_flight(const PipelineShape& shape, int stage) {
  check_interleaved(shape);
  check_stage(shape, stage, ScheduleKind::kInterleaved1F1B);
  return std::min(warmup_chunks(shape, stage) + 1, shape.microbatches * shape.chunks);
}

}  // namespace mofasim::schedules
