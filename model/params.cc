// Megatron-style parameter counting (see params.h; reference-formulas.md §1.2).
#include "model/params.h"

#include <optional>
#include <stdexcept>
#include <string>

#include "model/shape.h"
#include "model/stage_layout.h"

namespace mofasim::model {
namespace {

// Parameters of one FFN of width f: c_ffn GEMMs of h x f, plus biases when enabled.
double ffn_params(const ModelSpec& model, double f) {
  const double h = model.hidden_size;
  double p = ffn_gemms(model.mlp) * h * f;
  if (model.linear_bias) p += (ffn_gemms(model.mlp) - 1) * f + h;
  return p;
}

}  // namespace

int norm_vectors(NormKind norm) { return norm == NormKind::kLayerNorm ? 2 : 1; }

double attention_params(const ModelSpec& model) {
  const double h = model.hidden_size;
  const double a = model.num_attention_heads;
  if (model.attention == AttentionKind::kMla) {
    const MlaSpec& m = model.mla;
    const double n = norm_vectors(model.norm);
    const double q = m.q_lora_rank > 0
                         ? m.q_lora_rank * (h + a * (m.qk_nope_head_dim + m.qk_rope_head_dim) + n)
                         : h * a * (m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double kv = m.kv_lora_rank * (h + a * (m.qk_nope_head_dim + m.v_head_dim) + n);
    return q + kv + h * m.qk_rope_head_dim + a * m.v_head_dim * h;
  }
  const double dh = head_dim(model);
  const double g = kv_heads(model);
  double p = h * (a * dh + 2 * g * dh) + a * dh * h;  // Q, K, V in; O out
  if (model.linear_bias) p += a * dh + 2 * g * dh + h;
  return p;
}

LayerParams layer_params(const ModelSpec& model, int layer) {
  validate_model(model);
  if (layer < 0 || layer >= model.num_layers) {
    throw std::invalid_argument("layer index must be in [0, num_layers = " + std::to_string(model.num_layers) +
                                "), got " + std::to_string(layer));
  }
  const double h = model.hidden_size;
  LayerParams p;
  p.attention = attention_params(model);
  p.norms = 2 * h * norm_vectors(model.norm);
  if (!model.is_moe_layer(layer)) {
    p.mlp = ffn_params(model, model.ffn_hidden_size);
    return p;
  }
  const MoeSpec& moe = model.moe;
  const double per_expert = ffn_params(model, moe.expert_ffn_hidden_size);
  p.mlp = moe.num_shared_experts > 0 ? moe.num_shared_experts * ffn_params(model, moe.shared_expert_ffn_hidden_size) : 0;
  p.routed_experts = moe.num_experts * per_expert;
  p.active_routed = moe.top_k * per_expert;
  p.router = h * moe.num_experts + (model.linear_bias ? moe.num_experts : 0);
  return p;
}

MtpParams mtp_params(const ModelSpec& model) {
  const double h = model.hidden_size;
  MtpParams p;
  p.layer = layer_params(model, model.num_layers - 1);
  p.projection = 2 * h * h + (model.linear_bias ? h : 0);
  p.norms = 3 * h * norm_vectors(model.norm);
  return p;
}

ModelParams edge_params(const ModelSpec& model) {
  const double h = model.hidden_size;
  ModelParams p;
  p.embedding = static_cast<double>(model.vocab_size) * h;
  p.position_embedding = model.position == PositionKind::kLearned ? static_cast<double>(model.seq_length) * h : 0;
  p.head = model.untie_embeddings ? p.embedding : 0;
  p.final_norm = h * norm_vectors(model.norm);
  return p;
}

ModelParams model_params(const ModelSpec& model) {
  validate_model(model);
  ModelParams p = edge_params(model);
  for (int i = 0; i < model.num_layers; ++i) {
    const LayerParams lp = layer_params(model, i);
    p.layers += lp.total();
    p.layers_active += lp.active();
  }
  if (model.mtp_depth > 0) {
    const MtpParams mp = mtp_params(model);
    p.mtp = model.mtp_depth * mp.layer.total();
    p.mtp_extra = model.mtp_depth * (mp.projection + mp.norms);
  }
  return p;
}

GpuParams stage_gpu_params(const ModelSpec& model, const ParallelSpec& parallel, int rank) {
  return stage_gpu_params(model, parallel, rank, chunk_layers(model, parallel));
}

GpuParams stage_gpu_params(const ModelSpec& model, const ParallelSpec& parallel, int rank,
                           std::span<const ChunkLayers> layout) {
  validate_model(model);
  validate_parallel(model, parallel);
  if (rank < 0 || rank >= parallel.pp) {
    throw std::invalid_argument("pipeline rank must be in [0, pp), got " + std::to_string(rank));
  }
  const double t = parallel.tp;
  const double expert_shards = static_cast<double>(parallel.ep) * parallel.etp;
  GpuParams g;
  auto add_layer = [&](const LayerParams& lp) {
    g.dense_sharded += (lp.attention + lp.mlp) / t;
    g.replicated += lp.norms + lp.router;
    g.expert += lp.routed_experts / expert_shards;
  };
  // Every dense layer holds the same, and every MoE layer: one count of each kind.
  std::optional<LayerParams> dense_layer;
  std::optional<LayerParams> moe_layer;
  auto layer_of = [&](int i) -> const LayerParams& {
    std::optional<LayerParams>& kind = model.is_moe_layer(i) ? moe_layer : dense_layer;
    if (!kind) kind = layer_params(model, i);
    return *kind;
  };
  const int last_chunk = parallel.pp * parallel.vpp - 1;
  bool embedding = false;
  bool head = false;
  // parameter_chunks: this rank's chunks, and under DualPipe the mirror rank's too.
  const int mirror = parallel.schedule == ScheduleKind::kDualPipe ? parallel.pp - 1 - rank : -1;
  for (const ChunkLayers& c : layout) {
    if (c.rank != rank && c.rank != mirror) continue;
    for (int i = c.first_layer; i < c.first_layer + c.num_layers; ++i) add_layer(layer_of(i));
    embedding = embedding || c.chunk == 0;
    head = head || c.chunk == last_chunk;
  }
  const double h = model.hidden_size;
  const double vocab_h = static_cast<double>(model.vocab_size) * h;
  if (embedding) {
    g.embedding_sharded = vocab_h / t;  // vocab-parallel embedding
    g.dense_sharded += g.embedding_sharded;
    if (model.position == PositionKind::kLearned) g.replicated += static_cast<double>(model.seq_length) * h;
  }
  if (head) {
    // The head: its own weights when untied; with tied weights a synced copy unless rank 0 is this rank.
    if (model.untie_embeddings || parallel.pp > 1) {
      g.head_sharded = vocab_h / t;
      g.dense_sharded += g.head_sharded;
    }
    g.replicated += h * norm_vectors(model.norm);
    if (model.mtp_depth > 0) {
      const MtpParams mp = mtp_params(model);
      for (int d = 0; d < model.mtp_depth; ++d) {
        add_layer(mp.layer);
        g.dense_sharded += mp.projection / t;
        g.replicated += mp.norms;
      }
    }
  }
  return g;
}

GpuParams megatron_most_loaded_params(const ModelSpec& model, const ParallelSpec& parallel) {
  validate_model(model);
  validate_parallel(model, parallel);
  const double t = parallel.tp;
  const double p = parallel.pp;
  const double h = model.hidden_size;
  double tp_part = 0;
  double replicated = 0;
  double expert = 0;
  for (int i = 0; i < model.num_layers; ++i) {
    const LayerParams lp = layer_params(model, i);
    tp_part += lp.attention + lp.mlp;
    replicated += lp.norms + lp.router;
    expert += lp.routed_experts;
  }
  replicated += h * norm_vectors(model.norm);  // final norm, spread over stages like the rest
  tp_part /= p;
  replicated /= p;
  expert /= p;
  if (model.mtp_depth > 0) {
    const LayerParams lp = mtp_params(model).layer;
    tp_part += model.mtp_depth * (lp.attention + lp.mlp);
    replicated += model.mtp_depth * (lp.norms + lp.router);
    expert += model.mtp_depth * lp.routed_experts;
  }
  const double vocab_h = static_cast<double>(model.vocab_size) * h;
  tp_part += vocab_h;
  if (model.untie_embeddings && parallel.pp == 1) tp_part += vocab_h;
  return GpuParams{.dense_sharded = tp_part / t,
                   .replicated = replicated,
                   .expert = expert / (static_cast<double>(parallel.ep) * parallel.etp)};
}

}  // namespace mofasim::model
