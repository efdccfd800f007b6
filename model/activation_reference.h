// Published activation-memory accountings, for GPT blocks and for comparison with Megatron-LM:
//   * Korthikanti et al. 2022, Table 2 (reference-formulas.md §2.1): per transformer layer and
//     micro-batch, GPT block (LayerNorm, 4h GeLU MLP, dropout, non-fused attention storing the
//     a*s^2 score tensors), fp16/bf16 activations and 1-byte dropout masks;
//   * Megatron-LM's compute_activation_memory estimator for the first pipeline stage (§1.4), both
//     its SP + selective path and its "without SP" path.
// LLaMA/DeepSeek-style blocks (SwiGLU, GQA, MLA, MoE, flash attention) use the op table instead.
#pragma once

#include "model/spec.h"

namespace mofasim::model {

struct GptActivationShape {
  double seq = 0;         // s
  double micro_batch = 1; // b
  double hidden = 0;      // h
  double heads = 0;       // a
  int tp = 1;             // t
  bool sequence_parallel = false;
  RecomputeKind recompute = RecomputeKind::kNone;
};

// Bytes one GPU keeps for one layer and one micro-batch:
//   none:      sbh * (10 + 24/t + 5as/(ht))       (sbh * (34/t + 5as/(ht)) with SP)
//   selective: sbh * (10 + 24/t)                  (sbh * 34/t with SP)
//   full:      2sbh                               (2sbh/t with SP)
// With t = 1 the first row is Korthikanti's "no parallelism" sbh * (34 + 5as/h).
// Throws std::invalid_argument on non-positive sizes.
double korthikanti_layer_activation_bytes(const GptActivationShape& shape);

// Megatron's first-stage activation estimate (bytes per GPU) for a 1F1B / interleaved schedule.
// Uses the SP + selective path when parallel.sequence_parallel and recompute == kSelective, the
// "without SP" path otherwise (both as described in reference-formulas.md §1.4).
double megatron_first_stage_activation_bytes(const ModelSpec& model, const ParallelSpec& parallel,
                                             RecomputeKind recompute);

}  // namespace mofasim::model
