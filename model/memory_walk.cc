// Pass-by-pass activation walk of one pipeline rank (see memory_walk.h).
#include "model/memory_walk.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mofasim::model {

namespace {

// A pass's units as events the walk applies one at a time: a forward unit allocates its stored
// bytes; a backward unit first has its working set live, then releases.
struct Walk {
  double live = 0;
  double peak = 0;
  void forward(const UnitMemory& u) {
    live += u.stored;
    peak = std::max(peak, live);
  }
  void backward(const UnitMemory& u, bool split) {
    peak = std::max(peak, live + u.working);
    live += (split ? u.kept_for_weight_grad : 0.0) - u.stored;
  }
  void weight_grad(const UnitMemory& u) { live -= u.kept_for_weight_grad; }
  // Unit k of a pass in execution order (backward passes run their units in reverse).
  void step(Phase phase, const std::vector<UnitMemory>& units, std::size_t k) {
    const bool reverse = phase != Phase::kForward;
    const UnitMemory& u = units[reverse ? units.size() - 1 - k : k];
    switch (phase) {
      case Phase::kForward: forward(u); break;
      case Phase::kBackward: backward(u, false); break;
      case Phase::kInputGrad: backward(u, true); break;
      case Phase::kWeightGrad: weight_grad(u); break;
    }
  }
};

const std::vector<UnitMemory>& units_of(const RankPass& p, std::span<const std::vector<UnitMemory>> chunks) {
  if (p.chunk < 0 || static_cast<std::size_t>(p.chunk) >= chunks.size()) {
    throw std::invalid_argument("memory walk: pass on chunk " + std::to_string(p.chunk) + " of " +
                                std::to_string(chunks.size()));
  }
  return chunks[static_cast<std::size_t>(p.chunk)];
}

}  // namespace

double walk_activation_peak(std::span<const RankPass> passes, std::span<const std::vector<UnitMemory>> chunks) {
  Walk w;
  for (const RankPass& p : passes) {
    const std::vector<UnitMemory>& units = units_of(p, chunks);
    for (std::size_t k = 0; k < units.size(); ++k) w.step(p.phase, units, k);
  }
  return w.peak;
}

}  // namespace mofasim::model
