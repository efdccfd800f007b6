// Megatron model/hardware FLOPs (see flops.h; reference-formulas.md §1.5).
#include "model/flops.h"

#include <stdexcept>

#include "model/attention_window.h"
#include "model/shape.h"

namespace mofasim::model {
namespace {

// A_lin of §1.5: attention token-linear weights. For MLA the latent norms count as one column each.
double attention_linear_weights(const ModelSpec& model) {
  const double h = model.hidden_size;
  const double a = model.num_attention_heads;
  if (model.attention == AttentionKind::kMla) {
    const MlaSpec& m = model.mla;
    const double q = m.q_lora_rank > 0 ? m.q_lora_rank * (h + a * (m.qk_nope_head_dim + m.qk_rope_head_dim) + 1)
                                       : h * a * (m.qk_nope_head_dim + m.qk_rope_head_dim);
    return q + m.kv_lora_rank * (h + a * (m.qk_nope_head_dim + m.v_head_dim) + 1) + h * m.qk_rope_head_dim +
           a * m.v_head_dim * h;
  }
  const double dh = head_dim(model);
  const double g = kv_heads(model);
  return h * (a * dh + 2 * g * dh) + a * dh * h;
}

// C_core of §1.5: core-attention FLOPs per token per unit of sequence length (fwd + bwd, causal).
double attention_core_coefficient(const ModelSpec& model) {
  const double a = model.num_attention_heads;
  if (model.attention == AttentionKind::kMla) {
    const MlaSpec& m = model.mla;
    return 3 * a * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
  }
  return 6 * a * head_dim(model);
}

}  // namespace

FlopsPerToken model_flops_per_token(const ModelSpec& model) {
  validate_model(model);
  const double h = model.hidden_size;
  const double s = model.seq_length;
  const double c_ffn = ffn_gemms(model.mlp);
  const double mtp = model.mtp_depth;
  double moe_layers = model.num_moe_layers();
  double dense_layers = model.num_layers - moe_layers;
  // MTP layers take the type of the last layer.
  if (model.is_moe_layer(model.num_layers - 1)) {
    moe_layers += mtp;
  } else {
    dense_layers += mtp;
  }
  const double all_layers = model.num_layers + mtp;
  FlopsPerToken f;
  f.mlp = 6 * h * c_ffn * static_cast<double>(model.ffn_hidden_size) * dense_layers;
  if (model.is_moe()) {
    const double routed = static_cast<double>(model.moe.top_k) * model.moe.expert_ffn_hidden_size;
    f.mlp += 6 * h * c_ffn * (routed + shared_ffn(model)) * moe_layers;
  }
  f.attention_linear = 6 * attention_linear_weights(model) * all_layers;
  // Sliding-window layers score fewer pairs (attention_window.h): the model's mean share.
  f.attention_core = s * attention_core_coefficient(model) * all_layers * attention_window_share(model);
  f.mtp_projection = 6 * mtp * (3 * h + 2 * h * h);
  f.logits = 6 * h * static_cast<double>(model.vocab_size) * (1 + mtp);
  return f;
}

double tokens_per_step(const ModelSpec& model, const ParallelSpec& parallel) {
  if (parallel.global_batch < 1) throw std::invalid_argument("parallel.global_batch must be >= 1");
  return static_cast<double>(parallel.global_batch) * model.seq_length;
}

double model_flops_per_step(const ModelSpec& model, const ParallelSpec& parallel) {
  return tokens_per_step(model, parallel) * model_flops_per_token(model).total();
}

double hardware_flops_per_token(const ModelSpec& model, RecomputeKind recompute) {
  const FlopsPerToken f = model_flops_per_token(model);
  switch (recompute) {
    case RecomputeKind::kNone: return f.total();
    case RecomputeKind::kSelective: return f.total() + f.attention_core / 3;
    case RecomputeKind::kFull: return f.total() + (f.mlp + f.attention_linear + f.attention_core + f.mtp_projection) / 3;
  }
  return f.total();
}

double hardware_flops_per_step(const ModelSpec& model, const ParallelSpec& parallel, RecomputeKind recompute) {
  return tokens_per_step(model, parallel) * hardware_flops_per_token(model, recompute);
}

}  // namespace mofasim::model
