// The activation memory of one pipeline rank, walked pass by pass in its schedule's order: the
// memory model's per-rank peak when it knows the order (memory.h, RankOrder). It counts what the
// step simulation's replay allocates and frees, unit by unit: a unit's stored activation is
// allocated when its forward starts and freed by its backward; during its backward a working set
// (the recomputed part, one MemFine chunk) is live on top; an input-gradient pass whose weight
// gradient runs later (ZB-H1, DualPipe) leaves the weight-gradient inputs live until it.
#pragma once

#include <span>
#include <vector>

#include "model/memory.h"

namespace mofasim::model {

// Peak live activation bytes of a rank that runs `passes` in order over chunks whose units are
// `chunks[c]` in forward order (backward walks them in reverse). Passes run one after another: the
// peak is reached at the end of a forward or inside a backward, live + working_j with the units
// after j released. An EP-overlapped pair (RankPass::paired_with_next) is walked the same way, its
// forward whole before its backward releases anything: an upper bound on any interleaving of the
// two (the step simulation alternates their compute tasks), at most the forward's bytes above it.
// Throws std::invalid_argument on a chunk index out of range.
double walk_activation_peak(std::span<const RankPass> passes, std::span<const std::vector<UnitMemory>> chunks);
// The same for a rank's whole order, and whether any of its passes is an EP-overlapped pair. An
// order with a nonzero id (one that never changes) has its results remembered per chunk contents in
// a small per-thread cache: the analytic model and the tuner walk the same few orders again and
// again, and a walk is O(p m v) passes.
struct WalkResult {
  double peak = 0;
  bool paired = false;  // some pass has paired_with_next
};
WalkResult walk_rank(const RankOrder& order, std::span<const std::vector<UnitMemory>> chunks);

}  // namespace mofasim::model
