// Uneven pipeline splits of the open set's sources (see measured_open_split.h).
#include "sim/analysis/measured_open_split.h"

namespace mofasim::analysis {

std::optional<std::vector<int>> automodel_split(int layers, int chunks) {
  if (chunks < 1 || chunks > layers) return std::nullopt;
  std::vector<int> split(static_cast<std::size_t>(chunks), layers / chunks);
  for (int i = 0; i < layers % chunks; ++i) split[static_cast<std::size_t>(i)] += 1;
  return split;
}

bool apply_open_source_split(const std::string& source_group, int layers, model::ParallelSpec& parallel) {
  if (source_group == "O-MLP") {
    parallel.account_for_embedding = true;
    parallel.account_for_loss = true;
    return true;
  }
  if (source_group == "O-AM") {
    std::optional<std::vector<int>> split = automodel_split(layers, parallel.pp * parallel.vpp);
    if (!split) return false;
    parallel.stage_layers = std::move(*split);
    return true;
  }
  return false;
}

}  // namespace mofasim::analysis
