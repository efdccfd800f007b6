// Sliding-window attention (ModelSpec::window_size, window_attn_skip_freq): which layers attend
// over a window, and the share of causal attention work they do.
//
// Causal attention over s tokens scores s(s+1)/2 query-key pairs; with a window w each query i
// attends to min(i+1, w) keys, s*w - w(w-1)/2 pairs when w <= s. A windowed layer's attention
// FLOPs (QK^T and PV, forward and backward) are the causal ones times that ratio. Megatron's
// window_attn_skip_freq n keeps full attention on layers n, 2n, ... (1-based), so gpt-oss's
// alternation (sliding, full, sliding, ...) is window 128 with n = 2.
//
// The plan prices one op table per block type (dense, MoE) with the model's mean share over its
// layers: exact for a pipeline chunk's total when every chunk holds the model's mix of windowed
// and full layers. When some chunk does not (gpt-oss-120b's 36 layers on 4 stages: 9 per chunk,
// 5 windowed and 4 full or the reverse), window_mix_differs says so and the plan prices each
// layer's own span (model/rank_plan.h, RankPlan::window_mixed).
#pragma once

#include "model/spec.h"

namespace mofasim::model {

// Whether layer `layer` (0-based) attends over the window.
bool is_window_layer(const ModelSpec& model, int layer);

// Scored pairs of a windowed layer over those of a full causal one: (s*w - w(w-1)/2) / (s(s+1)/2)
// for w < s, else 1.
double window_pair_ratio(double seq, double window);

// The mean of window_pair_ratio over the model's layers (1 without a window).
double attention_window_share(const ModelSpec& model);

// Windowed layers among layers [first, first + count).
int windowed_layers(const ModelSpec& model, int first, int count);

// Whether some pipeline chunk holds another mix of windowed and full layers than the model's
// (windowed / layers), where windowed and full layers cost different attention work.
bool window_mix_differs(const ModelSpec& model, const ParallelSpec& parallel);

}  // namespace mofasim::model
