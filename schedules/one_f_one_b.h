// 1F1B, PipeDream-Flush (Narayanan et al. 2021, "Memory-Efficient Pipeline-Parallel DNN
// Training"; Megatron-LM's non-interleaved schedule): stage s (0-based) runs min(p − s − 1, m)
// warm-up forwards (Megatron get_pp_rank_microbatches), then alternates one forward and one full
// backward, then drains the remaining backwards.
//   bubble (idle per stage)  = (p − 1)(T_F + T_B + T_W)          (reference-formulas.md §3)
//   peak in-flight activation on stage s = min(p − s, m)·M_B; worst is stage 0: min(p, m)·M_B
//
// EP-overlap variant (PipelineShape::pair_steady_passes; MoFa(22), Megatron-Core's combined
// 1F1B): every steady-state forward is paired with the backward after it (Op::overlaps_next on
// the F), so an executor runs one micro-batch's compute under the other's all-to-all. A pair
// needs both inputs, so pair i on stage s (F(w_s + i), B(i)) waits for pair i on stage s+1 (its
// B input), which waits for F(w_{s+1} + i) from stage s. With the plain warm-up (w_s − w_{s+1} =
// 1) that forward sits in stage s's previous pair, so two neighbouring stages can never run pairs
// at once and the steady period grows from T_pair to about T_F + T_pair (this is why Megatron
// enables the overlap for PP > 1 only with virtual stages, whose warm-up steps by 2). The variant
// therefore warms up by 2 per stage, one forward more than interleaving's 2(p − s − 1):
//   warm-up on stage s = min(2(p − s) − 1, m); steady: [F(w_s + i) ‖ B(i)]; drain backwards.
// Neighbouring pairs then depend on pairs two steps back and the steady period is one pair.
//   bubble (no overlap credit, T_pair = T_F + T_B) = (p − 1)(T_F + T_B), as plain 1F1B
//   peak in-flight activation on stage s = min(2(p − s), m)·M_B; stage 0: min(2p, m)·M_B
//   (counted per op: the pair's F opens before its B frees. An executor that interleaves the
//   pair layer by layer holds between w_s and w_s + 1 micro-batches, so this is an upper bound.)
#pragma once

#include "schedules/pass_times.h"
#include "schedules/schedule.h"

namespace mofasim::schedules {

// shape.chunks is ignored (one chunk per stage); shape.pair_steady_passes picks the variant.
Schedule build_one_f_one_b(const PipelineShape& shape);

// The same closed form for both variants (the paired one with no overlap credit).
double one_f_one_b_bubble(const PipelineShape& shape, const PassTimes& t);
// Micro-batch activations held at the peak on `stage`: min(p − stage, m), or with
// pair_steady_passes min(2(p − stage), m).
int one_f_one_b_in_flight(const PipelineShape& shape, int stage);

}  // namespace mofasim::schedules
