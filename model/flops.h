// Model FLOPs (the MFU numerator) and hardware FLOPs (adds recompute) per token and per step,
// following Megatron-LM's num_floating_point_operations (reference-formulas.md §1.5): each GEMM
// weight costs 6 FLOPs per token (forward, input grad, weight grad; 2 per multiply-add), causal
// attention counts half the score matrix, SwiGLU has 3 h x f GEMMs, MoE layers count top-k routed
// plus shared experts, MTP modules add a layer, their eh projection and norms, and a head each.
// Not counted (as in Megatron): router GEMMs, norms, softmax, elementwise ops, embedding lookup.
#pragma once

#include "model/spec.h"

namespace mofasim::model {

// Per token, over forward + backward, at sequence length model.seq_length.
struct FlopsPerToken {
  double mlp = 0;               // dense FFN + routed top-k + shared experts (MTP layers included)
  double attention_linear = 0;  // Q/K/V/O or MLA projections (MTP layers included)
  double attention_core = 0;    // QK^T and PV, causal (MTP layers included)
  double mtp_projection = 0;    // MTP eh projections and norms: 6 * D * (3h + 2h^2)
  double logits = 0;            // output head, main + one per MTP module

  [[nodiscard]] double total() const { return mlp + attention_linear + attention_core + mtp_projection + logits; }
};

// Throws std::invalid_argument when the model spec is invalid.
FlopsPerToken model_flops_per_token(const ModelSpec& model);

// Tokens in one global batch: global_batch * seq_length.
double tokens_per_step(const ModelSpec& model, const ParallelSpec& parallel);

// Model FLOPs of one training step (no recompute): the F_step of MoFa(15).
double model_flops_per_step(const ModelSpec& model, const ParallelSpec& parallel);

// Hardware FLOPs per token: model FLOPs plus what recompute re-runs. Selective recompute re-runs the
// attention core forward (1/3 of attention_core); full recompute re-runs the whole forward of every
// transformer layer and MTP module (1/3 of everything but the logits).
double hardware_flops_per_token(const ModelSpec& model, RecomputeKind recompute);
double hardware_flops_per_step(const ModelSpec& model, const ParallelSpec& parallel, RecomputeKind recompute);

}  // namespace mofasim::model
