// Which transformer layers each pipeline chunk holds. A pipeline of p ranks with v virtual stages
// has p*v chunks; chunk j runs on rank j % p as its (j / p)-th virtual stage (Megatron's
// interleaved order), and chunks hold contiguous layers in chunk order. The split is uniform
// (L / (p*v) layers per chunk) unless ParallelSpec::stage_layers lists the layers per chunk; with
// account_for_embedding / account_for_loss it is (L + 1 + 1) / (p*v) per chunk, the first / last
// chunk one layer fewer (Megatron's account_for_*_in_pipeline_split).
#pragma once

#include <vector>

#include "model/spec.h"

namespace mofasim::model {

struct ChunkLayers {
  int chunk = 0;          // 0 .. p*v-1, in pipeline order
  int rank = 0;           // pipeline rank that runs it: chunk % p
  int virtual_stage = 0;  // chunk / p
  int first_layer = 0;    // index of its first transformer layer
  int num_layers = 0;     // may be 0 with an explicit uneven split
};

// All chunks in pipeline order. Throws std::invalid_argument when pp/vpp are < 1, when an explicit
// stage_layers list has the wrong length, a negative entry or does not sum to num_layers, or when
// the uniform split does not divide num_layers.
std::vector<ChunkLayers> chunk_layers(const ModelSpec& model, const ParallelSpec& parallel);

// The chunks that pipeline rank `rank` runs, in virtual-stage order.
std::vector<ChunkLayers> rank_chunks(const ModelSpec& model, const ParallelSpec& parallel, int rank);

// The chunks whose parameters pipeline rank `rank` holds: the chunks it runs, and under DualPipe
// also the mirror stage's chunk (rank p-1-rank), the reverse direction's copy. DualPipe keeps two
// copies of the parameters, one per direction (DeepSeek-V3 report §3.2.1, Table 2: parameters
// 2x): each is an ordinary stage module with its own weights, gradients and optimizer state, so
// everything counted per parameter follows this list (memory, DP traffic, the update). The
// embedding belongs to chunk 0 and the head to the last chunk, wherever they are held.
std::vector<ChunkLayers> parameter_chunks(const ModelSpec& model, const ParallelSpec& parallel, int rank);

// What one pipeline rank runs, counted, so that a caller can multiply one dense and one MoE op
// table (ops_for_layer) instead of walking every layer. The embedding sits on rank 0; the head,
// final norm and the MTP modules on the last rank (the placement params.h documents).
struct StageComposition {
  int dense_layers = 0;
  int moe_layers = 0;
  bool embedding = false;
  bool head = false;
  int mtp_modules = 0;  // each: an eh projection, one layer of the last layer's type, a head
};
StageComposition stage_composition(const ModelSpec& model, const ParallelSpec& parallel, int rank);

}  // namespace mofasim::model
