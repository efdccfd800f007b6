// Interleaved 1F1B (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", §2.2.2), in Megatron-LM's order: each stage holds v ≥ 2 model
// chunks; chunk c of stage s is virtual stage c·p + s (layers [(c·p + s)·L/(p·v), +L/(p·v))).
// Forwards walk the chunks in micro-batch groups of p (Megatron's
// microbatch_group_size_per_vp_stage default): the k-th forward on a stage is chunk
// (k mod p·v) / p of micro-batch (k / (p·v))·p + k mod p; backwards walk the chunks in reverse.
// Stage s warms up with min(2(p − s − 1) + (v − 1)·p, m·v) chunk-forwards, then alternates.
// Requires m % p == 0 (the order above assumes whole groups).
//   bubble (idle per stage)  = (p − 1)(T_F + T_B + T_W)/v        (T_* per full stage; chunk = T/v)
//   peak in-flight chunk activations on stage s = min(2(p − s − 1) + (v − 1)·p + 1, m·v),
//   each 1/v of M_B; stage 0: (v·p + p − 1)/v·M_B = (p + (p − 1)/v)·M_B   (reference-formulas.md §3)
//
// EP-overlap variant (PipelineShape::pair_steady_passes; MoFa(22), Megatron-Core's combined
// 1F1B with virtual stages): one more warm-up chunk-forward per stage, then every steady
// chunk-forward is paired with the chunk-backward after it (Op::overlaps_next on the F), so an
// executor runs one's compute under the other's all-to-all. The warm-up already steps by 2 per
// stage, so a pair never waits on a neighbour's pair that waits on it (see one_f_one_b.h): the
// steady period stays one pair.
//   bubble (no overlap credit) = (p − 1)(T_F + T_B + T_W)/v, as above
//   peak in-flight chunk activations on stage s = min(2(p − s − 1) + (v − 1)·p + 2, m·v)
//   (counted per op; an upper bound for an executor that interleaves the pair layer by layer)
#pragma once

#include "schedules/pass_times.h"
#include "schedules/schedule.h"

namespace mofasim::schedules {

// Throws std::invalid_argument unless shape.chunks >= 2 and microbatches % stages == 0.
Schedule build_interleaved_1f1b(const PipelineShape& shape);

double interleaved_1f1b_bubble(const PipelineShape& shape, const PassTimes& t);
// Chunk activations (each L/(p·v) layers of one micro-batch) held at the peak on `stage`, for
// either variant (shape.pair_steady_passes).
int interleaved_1f1b_in_flight(const PipelineShape& shape, int stage);

}  // namespace mofasim::schedules
