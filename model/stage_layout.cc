// Chunk-to-layer assignment for pipeline parallelism (see stage_layout.h).
#include "model/stage_layout.h"

#include <numeric>
#include <stdexcept>
#include <string>

namespace mofasim::model {

std::vector<ChunkLayers> chunk_layers(const ModelSpec& model, const ParallelSpec& parallel) {
  if (parallel.pp < 1) throw std::invalid_argument("parallel.pp must be >= 1, got " + std::to_string(parallel.pp));
  if (parallel.vpp < 1) throw std::invalid_argument("parallel.vpp must be >= 1, got " + std::to_string(parallel.vpp));
  if (model.num_layers < 1) throw std::invalid_argument("model.num_layers must be >= 1, got " + std::to_string(model.num_layers));
  const int chunks = parallel.pp * parallel.vpp;
  std::vector<int> sizes;
  if (parallel.stage_layers.empty()) {
    // Megatron's account_for_{embedding,loss}_in_pipeline_split (get_num_layers_to_build): the
    // embedding and the loss each count as one layer, the sum splits evenly over the chunks, and
    // the first (last) chunk builds one transformer layer fewer.
    const int extra = (parallel.account_for_embedding ? 1 : 0) + (parallel.account_for_loss ? 1 : 0);
    const int counted = model.num_layers + extra;
    if (counted % chunks != 0) {
      throw std::invalid_argument("parallel: pp*vpp = " + std::to_string(chunks) + " chunks do not divide " +
                                  std::to_string(model.num_layers) + " layers" +
                                  (extra > 0 ? " + " + std::to_string(extra) + " (embedding / loss) = " + std::to_string(counted) : "") +
                                  " evenly; list parallel.stage_layers");
    }
    sizes.assign(static_cast<std::size_t>(chunks), counted / chunks);
    if (parallel.account_for_embedding) --sizes.front();
    if (parallel.account_for_loss) --sizes.back();
  } else {
    if (parallel.account_for_embedding || parallel.account_for_loss) {
      throw std::invalid_argument(
          "parallel.account_for_embedding/loss: only with the even split, not with stage_layers (as Megatron)");
    }
    sizes = parallel.stage_layers;
    if (static_cast<int>(sizes.size()) != chunks) {
      throw std::invalid_argument("parallel.stage_layers: expected pp*vpp = " + std::to_string(chunks) +
                                  " entries, got " + std::to_string(sizes.size()));
    }
    for (int n : sizes) {
      if (n < 0) throw std::invalid_argument("parallel.stage_layers: entries must be >= 0, got " + std::to_string(n));
    }
    const int sum = std::accumulate(sizes.begin(), sizes.end(), 0);
    if (sum != model.num_layers) {
      throw std::invalid_argument("parallel.stage_layers: entries sum to " + std::to_string(sum) +
                                  " but model.num_layers = " + std::to_string(model.num_layers));
    }
  }
  std::vector<ChunkLayers> out;
  out.reserve(sizes.size());
  int first = 0;
  for (int j = 0; j < chunks; ++j) {
    const int n = sizes[static_cast<std::size_t>(j)];
    out.push_back(ChunkLayers{.chunk = j,
                              .rank = j % parallel.pp,
                              .virtual_stage = j / parallel.pp,
                              .first_layer = first,
                              .num_layers = n});
    first += n;
  }
  return out;
}

std::vector<ChunkLayers> rank_chunks(const ModelSpec& model, const ParallelSpec& parallel, int rank) {
  if (rank < 0 || rank >= parallel.pp) {
    throw std::invalid_argument("pipeline rank must be in [0, pp), got " + std::to_string(rank));
  }
  std::vector<ChunkLayers> out;
  for (const ChunkLayers& c : chunk_layers(model, parallel)) {
    if (c.rank == rank) out.push_back(c);
  }
  return out;
}

std::vector<ChunkLayers> parameter_chunks(const ModelSpec& model, const ParallelSpec& parallel, int rank) {
  std::vector<ChunkLayers> out = rank_chunks(model, parallel, rank);
  if (parallel.schedule == ScheduleKind::kDualPipe) {
    // DualPipe runs pp = p stages with vpp = 1; stage r's reverse lane is stage p-1-r's layers.
    for (const ChunkLayers& c : rank_chunks(model, parallel, parallel.pp - 1 - rank)) out.push_back(c);
  }
  return out;
}

StageComposition stage_composition(const ModelSpec& model, const ParallelSpec& parallel, int rank) {
  StageComposition s;
  for (const ChunkLayers& c : rank_chunks(model, parallel, rank)) {
    for (int i = c.first_layer; i < c.first_layer + c.num_layers; ++i) {
      if (model.is_moe_layer(i)) {
        ++s.moe_layers;
      } else {
        ++s.dense_layers;
      }
    }
  }
  s.embedding = rank == 0;
  s.head = rank == parallel.pp - 1;
  s.mtp_modules = s.head ? model.mtp_depth : 0;
  return s;
}

}  // namespace mofasim::model
