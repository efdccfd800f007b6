// DualPipe (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", §3.2.1; order as in
// github.com/deepseek-ai/DualPipe): bidirectional pipeline. Micro-batches 0 .. m/2 − 1 enter at
// stage 0 (lane 0) and m/2 .. m − 1 enter at stage p − 1 (lane 1). Every stage holds two chunks:
//   chunk 0 of stage s = lane 0, position s        (layers [s·L/p, (s + 1)·L/p))
//   chunk 1 of stage s = lane 1, position p − 1 − s (layers [(p − 1 − s)·L/p, (p − s)·L/p))
// so stage s and stage p − 1 − s hold the same layers: parameters are stored twice.
// Each stage runs DualPipe's eight steps (nF0, nF0F1, nB1W1F1, nF0B1F1B0, nB1F1B0, nB1B0,
// nWB0, nW; "0" is the lane whose early position this stage holds). The steady state pairs a
// forward of one lane with a full backward of the other: the forward carries
// Op::overlaps_next = true and the backward follows it (the F&B chunk whose EP all-to-all an
// executor overlaps). Some backwards are split into input-grad B and deferred W as in the
// reference order. Requires p and m even and m ≥ 2p.
//   bubble (idle per stage)  = (p/2 − 1)(T_F&B + T_B,full − 3·T_W)  (DualPipe README; T_F&B is the
//                              overlapped pair's time, T_F + T_B,full when nothing overlaps)
//   peak in-flight activation = p + 1 chunk activations (each L/p layers of one micro-batch) on
//                              every stage; parameters 2×.
// NOTE: evaluate() starts an overlapped pair once both its inputs are there and runs the two
// back to back, scaled by EvaluateOptions::overlapped_pair_scale (T_F&B / (T_F + T_B,full)). It
// meets the bubble formula exactly when T_F = T_B = T_W (checked for p = 4, 6, 8 without overlap
// credit, and for p = 4 with scale 0.8); with unequal pass times the replayed bubble of this order
// differs from the formula (e.g. p = 8, T_F = 2, T_B = 3, T_W = 1: 19 replayed vs 21), so use
// evaluate() when the pass times are known.
#pragma once

#include "schedules/pass_times.h"
#include "schedules/schedule.h"

namespace mofasim::schedules {

// shape.chunks is ignored (always two chunks per stage). Throws std::invalid_argument unless
// stages and microbatches are even and microbatches >= 2·stages.
Schedule build_dualpipe(const PipelineShape& shape);

// overlapped_pair: T_F&B, the time of one overlapped forward+backward pair; pass a negative
// value to use T_F + T_B,full (no overlap).
double dualpipe_bubble(const PipelineShape& shape, const PassTimes& t, double overlapped_pair = -1);
// Chunk activations held at the peak on `stage`: p + 1.
int dualpipe_in_flight(const PipelineShape& shape, int stage);

}  // namespace mofasim::schedules
