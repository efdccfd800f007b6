// ZB-H1 (Qi, Wan, Huang, Lin 2024, "Zero Bubble Pipeline Parallelism", ICLR 2024, §3.1): the
// backward is split into B (input gradient, on the critical path) and W (weight gradient, free
// to move). Stage s (0-based) keeps 1F1B's warm-up of min(p − s − 1, m) forwards and its
// F-then-B steady state, but holds up to s weight-gradient passes back (oldest first) and runs
// them in the drain, where 1F1B would sit idle. Stage 0 therefore runs F B W like 1F1B with a
// split backward; the last stage defers p − 1 W passes to the end.
//   bubble (idle per stage)  = (p − 1)(T_F + T_B − T_W)          (reference-formulas.md §3)
//     This construction meets it whenever m ≥ p and T_W ≤ min(T_F, T_B) (the paper's regime,
//     T_F ≈ T_B ≈ T_W); with a larger T_W the deferred W passes cannot fill the drain and the
//     replayed bubble is larger (evaluate() gives the exact value).
//   peak activation: stage s holds min(p − s, m) forward activations plus s weight-grad
//   residues right after a steady-state forward: (p − s)·M_B + s·M_W, i.e. paper worker i
//   (1-based): (p − i + 1)·M_B + (i − 1)·M_W; the same p·M_B worst case as 1F1B when M_W ≤ M_B.
//   (Just after a B the stage briefly holds s + 1 residues and one activation fewer.)
#pragma once

#include "schedules/pass_times.h"
#include "schedules/schedule.h"

namespace mofasim::schedules {

// shape.chunks is ignored (one chunk per stage).
Schedule build_zero_bubble_h1(const PipelineShape& shape);

double zero_bubble_h1_bubble(const PipelineShape& shape, const PassTimes& t);
// Forward activations (F done, input-grad B not yet) held at the peak on `stage`: min(p − s, m).
int zero_bubble_h1_in_flight(const PipelineShape& shape, int stage);
// Weight-grad residues (B done, W not yet) held at the memory peak on `stage`: min(s, m).
int zero_bubble_h1_deferred_weight_grads(const PipelineShape& shape, int stage);

}  // namespace mofasim::schedules
