// Uneven pipeline splits of the open set's sources (see measured_open_split.h).
#include "sim/analysis/measured_open_split.h"

namespace mofasim::analysis {

std::optional<std::vector<int>> megatron_embedding_loss_split(int layers, int chunks) {
  if (layers < 1 || chunks < 2 || (layers + 2) % chunks != 0) return std::nullopt;
  const int per_chunk = (layers + 2) / chunks;
  if (per_chunk < 2) return std::nullopt;  // the first or last chunk would hold no layer
  std::vector<int> split(static_cast<std::size_t>(chunks), per_chunk);
  split.front() -= 1;  // the embedding counts as one layer
  split.back() -= 1;   // the loss counts as one layer
  return split;
}

std::optional<std::vector<int>> automodel_split(int layers, int chunks) {
  if (chunks < 1 || chunks > layers) return std::nullopt;
  std::vector<int> split(static_cast<std::size_t>(chunks), layers / chunks);
  for (int i = 0; i < layers % chunks; ++i) split[static_cast<std::size_t>(i)] += 1;
  return split;
}

std::optional<std::vector<int>> open_source_stage_layers(const std::string& source_group, int layers, int chunks) {
  if (source_group == "O-MLP") return megatron_embedding_loss_split(layers, chunks);
  if (source_group == "O-AM") return automodel_split(layers, chunks);
  return std::nullopt;
}

}  // namespace mofasim::analysis
