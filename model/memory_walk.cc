// Pass-by-pass activation walk of one pipeline rank (see memory_walk.h).
#include "model/memory_walk.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/units/bounded_cache.h"

namespace mofasim::model {

namespace {

// What one pass over a chunk does to the rank's live bytes, summed over the chunk's units once so
// that each pass of the walk costs O(1) instead of O(units):
//   a forward adds `stored` (every unit's stored bytes are >= 0, so its peak is at its end);
//   a backward peaks at live + `backward_peak` (unit k's working set on top of what the units
//   before it in reverse order have already released) and then releases `stored`;
//   an input-gradient pass likewise, but each unit leaves its kept_for_weight_grad bytes;
//   a weight-gradient pass releases `kept`.
struct ChunkEffect {
  bool empty = true;
  double stored = 0;
  double kept = 0;
  double backward_peak = 0;
  double input_grad_peak = 0;
};

ChunkEffect effect_of(const std::vector<UnitMemory>& units) {
  ChunkEffect e;
  e.empty = units.empty();
  e.backward_peak = -std::numeric_limits<double>::infinity();
  e.input_grad_peak = -std::numeric_limits<double>::infinity();
  double released = 0;        // by the backward's units so far
  double released_split = 0;  // by the input-gradient pass's units so far
  for (auto it = units.rbegin(); it != units.rend(); ++it) {
    e.backward_peak = std::max(e.backward_peak, it->working - released);
    e.input_grad_peak = std::max(e.input_grad_peak, it->working - released_split);
    released += it->stored;
    released_split += it->stored - it->kept_for_weight_grad;
  }
  for (const UnitMemory& u : units) {
    e.stored += u.stored;
    e.kept += u.kept_for_weight_grad;
  }
  return e;
}

bool operator==(const ChunkEffect& a, const ChunkEffect& b) {
  return a.empty == b.empty && a.stored == b.stored && a.kept == b.kept && a.backward_peak == b.backward_peak &&
         a.input_grad_peak == b.input_grad_peak;
}

void effects_of(std::span<const std::vector<UnitMemory>> chunks, std::vector<ChunkEffect>& effects) {
  effects.clear();
  for (const std::vector<UnitMemory>& units : chunks) effects.push_back(effect_of(units));
}

WalkResult walk(std::span<const RankPass> passes, std::span<const std::vector<UnitMemory>> chunks,
                const std::vector<ChunkEffect>& effects) {
  double live = 0;
  WalkResult r;
  double& peak = r.peak;
  for (const RankPass& p : passes) {
    r.paired = r.paired || p.paired_with_next;
    if (p.chunk < 0 || static_cast<std::size_t>(p.chunk) >= chunks.size()) {
      throw std::invalid_argument("memory walk: pass on chunk " + std::to_string(p.chunk) + " of " +
                                  std::to_string(chunks.size()));
    }
    const ChunkEffect& e = effects[static_cast<std::size_t>(p.chunk)];
    if (e.empty) continue;
    switch (p.phase) {
      case Phase::kForward:
        live += e.stored;
        peak = std::max(peak, live);
        break;
      case Phase::kBackward:
        peak = std::max(peak, live + e.backward_peak);
        live -= e.stored;
        break;
      case Phase::kInputGrad:
        peak = std::max(peak, live + e.input_grad_peak);
        live += e.kept - e.stored;
        break;
      case Phase::kWeightGrad: live -= e.kept; break;
    }
  }
  return r;
}

}  // namespace

double walk_activation_peak(std::span<const RankPass> passes, std::span<const std::vector<UnitMemory>> chunks) {
  std::vector<ChunkEffect> effects;
  effects_of(chunks, effects);
  return walk(passes, chunks, effects).peak;
}

WalkResult walk_rank(const RankOrder& order, std::span<const std::vector<UnitMemory>> chunks) {
  thread_local std::vector<ChunkEffect> effects;  // scratch: a hit allocates nothing
  effects_of(chunks, effects);
  if (order.id == 0) return walk(order.passes, chunks, effects);
  struct Entry {
    std::uint64_t id;
    std::vector<ChunkEffect> effects;
    WalkResult result;
  };
  thread_local BoundedCache<Entry, 64, Eviction::kOldestInserted> cache;
  if (const Entry* hit = cache.find([&](const Entry& e) { return e.id == order.id && e.effects == effects; })) {
    return hit->result;
  }
  const WalkResult result = walk(order.passes, chunks, effects);
  cache.insert({order.id, effects, result});
  return result;
}

}  // namespace mofasim::model
