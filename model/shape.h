// Derived shape quantities of a ModelSpec that every cost formula needs (head dim, KV heads,
// shared-expert width, FFN GEMM count), and the validation of the fields they read.
#pragma once

#include "model/spec.h"

namespace mofasim::model {

// d_h: ModelSpec::head_dim when given, else h / a.
int head_dim(const ModelSpec& model);

// g: a for MHA, 1 for MQA, num_kv_heads for GQA; for MLA every head has its own K and V (a).
int kv_heads(const ModelSpec& model);

// c_ffn: GEMMs of h x f per FFN: 3 for SwiGLU (gate, up, down), 2 for GeLU.
int ffn_gemms(MlpKind mlp);

// f_sh: total shared-expert width (number of shared experts times one's width).
double shared_ffn(const ModelSpec& model);

// Throws std::invalid_argument naming the first field that is out of range (non-positive sizes,
// heads not divisible by KV heads, MoE top_k outside [1, E], MLA ranks missing, ...).
void validate_model(const ModelSpec& model);

// Throws std::invalid_argument naming the first ParallelSpec field that is out of range, including
// tp*... shape rules the cost model relies on: a % tp == 0, E % ep == 0, f_e % etp == 0.
void validate_parallel(const ModelSpec& model, const ParallelSpec& parallel);

}  // namespace mofasim::model
