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
// `chunks[c]` in forward order (backward walks them in reverse). Passes run one after another, but
// a pass paired_with_next and the next one alternate unit by unit: the peak is reached after a
// forward unit or inside a backward unit, live + working_j with the units released so far gone.
// Throws std::invalid_argument on a chunk index out of range.
double walk_activation_peak(std::span<const RankPass> passes, std::span<const std::vector<UnitMemory>> chunks);

}  // namespace mofasim::model
