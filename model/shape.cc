// Derived shape quantities and spec validation (see shape.h).
#include "model/shape.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/attention_window.h"
#include "model/moe_dispatch.h"

namespace mofasim::model {
namespace {

void require_positive(int value, const char* field) {
  if (value < 1) throw std::invalid_argument(std::string(field) + " must be >= 1, got " + std::to_string(value));
}

void require_non_negative(int value, const char* field) {
  if (value < 0) throw std::invalid_argument(std::string(field) + " must be >= 0, got " + std::to_string(value));
}

}  // namespace

int head_dim(const ModelSpec& model) {
  if (model.head_dim > 0) return model.head_dim;
  return model.num_attention_heads > 0 ? model.hidden_size / model.num_attention_heads : 0;
}

int kv_heads(const ModelSpec& model) {
  switch (model.attention) {
    case AttentionKind::kMha:
    case AttentionKind::kMla: return model.num_attention_heads;
    case AttentionKind::kMqa: return 1;
    case AttentionKind::kGqa: return model.num_kv_heads;
  }
  return 0;
}

int ffn_gemms(MlpKind mlp) { return mlp == MlpKind::kSwiglu ? 3 : 2; }

double shared_ffn(const ModelSpec& model) {
  return static_cast<double>(model.moe.num_shared_experts) * model.moe.shared_expert_ffn_hidden_size;
}

void validate_model(const ModelSpec& model) {
  require_positive(model.num_layers, "model.num_layers");
  require_positive(model.hidden_size, "model.hidden_size");
  require_positive(model.num_attention_heads, "model.num_attention_heads");
  require_positive(model.vocab_size, "model.vocab_size");
  require_positive(model.seq_length, "model.seq_length");
  require_non_negative(model.mtp_depth, "model.mtp_depth");
  require_non_negative(model.window_size, "model.window_size");
  require_non_negative(model.window_attn_skip_freq, "model.window_attn_skip_freq");
  if (model.attention == AttentionKind::kMla) {
    require_non_negative(model.mla.q_lora_rank, "model.mla.q_lora_rank");
    require_positive(model.mla.kv_lora_rank, "model.mla.kv_lora_rank");
    require_positive(model.mla.qk_nope_head_dim, "model.mla.qk_nope_head_dim");
    require_non_negative(model.mla.qk_rope_head_dim, "model.mla.qk_rope_head_dim");
    require_positive(model.mla.v_head_dim, "model.mla.v_head_dim");
  } else {
    require_positive(head_dim(model), "model.head_dim (or hidden_size / num_attention_heads)");
    if (model.attention == AttentionKind::kGqa) {
      require_positive(model.num_kv_heads, "model.num_kv_heads");
      if (model.num_attention_heads % model.num_kv_heads != 0) {
        throw std::invalid_argument("model.num_kv_heads (" + std::to_string(model.num_kv_heads) +
                                    ") must divide model.num_attention_heads (" +
                                    std::to_string(model.num_attention_heads) + ")");
      }
    }
  }
  if (model.is_moe() && (model.moe.layer_period < 0 || model.moe.layer_period > MoeSpec::kMaxLayerPeriod)) {
    throw std::invalid_argument("model.moe.layer_period must be in [0, " + std::to_string(MoeSpec::kMaxLayerPeriod) +
                                "], got " + std::to_string(model.moe.layer_period));
  }
  const bool has_dense_layer = !model.is_moe() || model.first_layer_of_type(false) >= 0;
  if (has_dense_layer) require_positive(model.ffn_hidden_size, "model.ffn_hidden_size");
  if (model.is_moe()) {
    require_positive(model.moe.expert_ffn_hidden_size, "model.moe.expert_ffn_hidden_size");
    if (model.moe.top_k < 1 || model.moe.top_k > model.moe.num_experts) {
      throw std::invalid_argument("model.moe.top_k must be in [1, num_experts = " +
                                  std::to_string(model.moe.num_experts) + "], got " + std::to_string(model.moe.top_k));
    }
    require_non_negative(model.moe.num_shared_experts, "model.moe.num_shared_experts");
    if (model.moe.num_shared_experts > 0) {
      require_positive(model.moe.shared_expert_ffn_hidden_size, "model.moe.shared_expert_ffn_hidden_size");
    }
    if (model.moe.first_k_dense_layers < 0 || model.moe.first_k_dense_layers > model.num_layers) {
      throw std::invalid_argument("model.moe.first_k_dense_layers must be in [0, num_layers], got " +
                                  std::to_string(model.moe.first_k_dense_layers));
    }
    if (model.moe.layer_period > 0 && model.first_layer_of_type(true) < 0) {
      throw std::invalid_argument("model.moe.layer_pattern leaves no MoE layer past first_k_dense_layers");
    }
    if (!(model.moe.load_imbalance >= 1.0)) {
      throw std::invalid_argument("model.moe.load_imbalance must be >= 1, got " + std::to_string(model.moe.load_imbalance));
    }
    if (!(model.moe.dispatch_bytes_per_element > 0) || !(model.moe.combine_bytes_per_element > 0)) {
      throw std::invalid_argument("model.moe.dispatch/combine_bytes_per_element must be > 0");
    }
    validate_moe_routing(model.moe);
  }
}

void validate_parallel(const ModelSpec& model, const ParallelSpec& parallel) {
  require_positive(parallel.tp, "parallel.tp");
  require_positive(parallel.cp, "parallel.cp");
  require_positive(parallel.pp, "parallel.pp");
  require_positive(parallel.vpp, "parallel.vpp");
  require_positive(parallel.dp, "parallel.dp");
  require_positive(parallel.ep, "parallel.ep");
  require_positive(parallel.etp, "parallel.etp");
  require_positive(parallel.micro_batch, "parallel.micro_batch");
  if (model.num_attention_heads % parallel.tp != 0) {
    throw std::invalid_argument("parallel.tp (" + std::to_string(parallel.tp) + ") must divide num_attention_heads (" +
                                std::to_string(model.num_attention_heads) + ")");
  }
  if (parallel.cp_comm_type == CpCommType::kA2a && parallel.cp > 1) {
    // Ulysses hands each CP rank whole heads (DeepSpeed-Ulysses and Transformer Engine's a2a CP
    // both assert it): the query heads and the KV heads per TP rank (one replicated KV head when
    // g < tp; every head its own K and V under MLA) must divide by cp.
    const int heads = model.num_attention_heads / parallel.tp;
    const int kv = model.attention == AttentionKind::kMla ? heads : std::max(1, kv_heads(model) / parallel.tp);
    if (heads % parallel.cp != 0 || kv % parallel.cp != 0) {
      throw std::invalid_argument("parallel.cp_comm_type: a2a needs the attention heads (" + std::to_string(heads) +
                                  ") and KV heads (" + std::to_string(kv) + ") per TP rank divisible by cp = " +
                                  std::to_string(parallel.cp));
    }
  }
  if (model.is_moe()) {
    if (model.moe.num_experts % parallel.ep != 0) {
      throw std::invalid_argument("parallel.ep (" + std::to_string(parallel.ep) + ") must divide moe.num_experts (" +
                                  std::to_string(model.moe.num_experts) + ")");
    }
    if (model.moe.expert_ffn_hidden_size % parallel.etp != 0) {
      throw std::invalid_argument("parallel.etp (" + std::to_string(parallel.etp) +
                                  ") must divide moe.expert_ffn_hidden_size");
    }
    validate_moe_parallel(model, parallel);
  }
}

}  // namespace mofasim::model
