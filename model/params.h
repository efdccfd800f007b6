// Parameter counts, Megatron-style (reference-formulas.md §1.2): per layer, for the whole model
// (total and active, i.e. top-k routed experts only), per pipeline stage and per GPU after tensor,
// expert and expert-tensor sharding. Counts are doubles: exact for integers below 2^53.
//
// Placement used by the per-stage counts (stage_gpu_params):
//   * embedding (V*h, plus s*h learned positions) on pipeline rank 0;
//   * final norm and output head on the last rank; with tied embeddings and pp > 1 the last rank
//     still holds a copy of the embedding matrix for the head (Megatron keeps and syncs it);
//   * MTP modules on the last rank, beside the head they share. NOTE: Megatron's theoretical
//     estimator puts the whole MTP block on the first stage instead; megatron_most_loaded_params()
//     reproduces that estimator, stage_gpu_params() follows where the modules actually run.
// Sharding: attention, dense MLP and shared experts over TP; routed experts over EP*ETP; norms
// and router replicated. MLA latent norms count with the attention block (as Megatron does).
#pragma once

#include <span>

#include "model/spec.h"
#include "model/stage_layout.h"

namespace mofasim::model {

// One transformer layer's parameters, split by how they shard.
struct LayerParams {
  double attention = 0;       // Q/K/V/O (or MLA projections + latent norms), biases included
  double mlp = 0;             // dense MLP, or the shared experts of an MoE layer (TP-sharded)
  double routed_experts = 0;  // all E routed experts (EP*ETP-sharded)
  double active_routed = 0;   // the top-k routed experts a token uses
  double router = 0;          // h*E (+E with biases), replicated
  double norms = 0;           // the layer's two norms, replicated

  [[nodiscard]] double total() const { return attention + mlp + routed_experts + router + norms; }
  [[nodiscard]] double active() const { return attention + mlp + active_routed + router + norms; }
};

// Number of norm parameter vectors per norm: 1 for RMSNorm (scale), 2 for LayerNorm (+bias).
int norm_vectors(NormKind norm);

// Attention linear parameters of one layer (A in §1.2), MHA/GQA/MQA or MLA.
double attention_params(const ModelSpec& model);

// Layer `layer` (0-based; dense or MoE by ModelSpec::is_moe_layer). Throws std::invalid_argument on
// a layer index outside [0, num_layers) or on non-positive shape fields.
LayerParams layer_params(const ModelSpec& model, int layer);

// One MTP module: a layer of the last layer's type (what Megatron counts), plus the eh projection
// (2h x h) and its three norms (hidden, embedding, output) that Megatron leaves out of parameters.
struct MtpParams {
  LayerParams layer;
  double projection = 0;  // 2*h*h (+h with biases), TP-sharded
  double norms = 0;       // 3 norms, replicated
  [[nodiscard]] double total() const { return layer.total() + projection + norms; }
};
MtpParams mtp_params(const ModelSpec& model);

struct ModelParams {
  double embedding = 0;           // V*h
  double position_embedding = 0;  // s*h for learned positions, else 0
  double head = 0;                // V*h when untied, else 0 (shares the embedding)
  double final_norm = 0;          // h * norm_vectors
  double layers = 0;              // all transformer layers
  double layers_active = 0;       // all layers with top-k routed experts only
  double mtp = 0;                 // mtp_depth MTP layers, Megatron's count (layer only)
  double mtp_extra = 0;           // their eh projections and norms (not in Megatron's count)

  // Main model, MTP excluded (the published "671B" of DeepSeek-V3).
  [[nodiscard]] double total() const { return embedding + position_embedding + head + final_norm + layers; }
  [[nodiscard]] double active() const { return embedding + position_embedding + head + final_norm + layers_active; }
  [[nodiscard]] double total_with_mtp() const { return total() + mtp + mtp_extra; }
};
ModelParams model_params(const ModelSpec& model);
// The embedding, position embedding, head and final norm of model_params alone (layers and MTP
// left 0), without its per-layer walk; expects a validated model.
ModelParams edge_params(const ModelSpec& model);

// Parameters held by one GPU, grouped by the data-parallel group their optimizer state is sharded
// over: dense (attention DP) and expert (expert DP).
struct GpuParams {
  double dense_sharded = 0;  // TP-sharded dense weights on this GPU (already divided by t)
  double replicated = 0;     // norms, router (not divided by t)
  double expert = 0;         // routed-expert weights on this GPU (already divided by EP*ETP)
  // The vocab matrices inside dense_sharded, where stage_gpu_params places them: the
  // vocab-parallel embedding (V*h/t, with chunk 0) and the output head's own copy (V*h/t, with the
  // last chunk when untied or pp > 1). No FP8 GEMM reads the embedding (a lookup), nor the head
  // unless fp8_output_layer: the memory model keeps no FP8 copy of them.
  double embedding_sharded = 0;
  double head_sharded = 0;

  [[nodiscard]] double dense() const { return dense_sharded + replicated; }
  [[nodiscard]] double total() const { return dense_sharded + replicated + expert; }
};

// What one GPU of pipeline rank `rank` holds: every chunk of parameter_chunks() (DualPipe's reverse
// copy included; see the placement notes above).
// Throws std::invalid_argument on a bad rank or a layout chunk_layers() rejects.
GpuParams stage_gpu_params(const ModelSpec& model, const ParallelSpec& parallel, int rank);
// The same from the whole layout, chunk_layers(model, parallel), which the caller already holds
// (the memory report walks every rank: one layout instead of one per rank).
GpuParams stage_gpu_params(const ModelSpec& model, const ParallelSpec& parallel, int rank,
                           std::span<const ChunkLayers> layout);

// Megatron's estimator for the most-loaded GPU (PP stage 0 holding the embedding and the whole MTP
// block; layers spread as L/p even when fractional; the final norm spread over stages), as in
// theoretical_memory_usage.py. For comparing with Megatron's reported numbers.
GpuParams megatron_most_loaded_params(const ModelSpec& model, const ParallelSpec& parallel);

}  // namespace mofasim::model
