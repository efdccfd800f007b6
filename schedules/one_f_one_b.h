// 1F1B, PipeDream-Flush (Narayanan et al. 2021, "Memory-Efficient Pipeline-Parallel DNN
// Training"; Megatron-LM's non-interleaved schedule): stage s (0-based) runs min(p − s − 1, m)
// warm-up forwards (Megatron get_pp_rank_microbatches), then alternates one forward and one full
// backward, then drains the remaining backwards.
//   bubble (idle per stage)  = (p − 1)(T_F + T_B + T_W)          (reference-formulas.md §3)
//   peak in-flight activation on stage s = min(p − s, m)·M_B; worst is stage 0: min(p, m)·M_B
#pragma once

#include "schedules/pass_times.h"
#include "schedules/schedule.h"

namespace mofasim::schedules {

// shape.chunks is ignored (one chunk per stage).
Schedule build_one_f_one_b(const PipelineShape& shape);

double one_f_one_b_bubble(const PipelineShape& shape, const PassTimes& t);
// Micro-batch activations held at the peak on `stage`: min(p − stage, m).
int one_f_one_b_in_flight(const PipelineShape& shape, int stage);

}  // namespace mofasim::schedules
