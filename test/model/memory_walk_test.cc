// The pass-by-pass activation walk (model/memory_walk.h): hand-worked orders, and the per-chunk
// summary it walks with against a unit-by-unit replay of the same passes written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "model/memory_walk.h"

namespace mofasim::model {
namespace {

// Two units: stored 10 and 20 bytes, working sets 4 and 6, kept for the weight gradient 3 and 5.
const std::vector<std::vector<UnitMemory>> kChunk = {{{.stored = 10, .working = 4, .kept_for_weight_grad = 3},
                                                      {.stored = 20, .working = 6, .kept_for_weight_grad = 5}}};

TEST(MemoryWalk, BackwardPeaksOnItsLastUnitsWorkingSet) {
  // F, F: 30 then 60 live. B: the second unit's working set on top (66), it frees 20 (40), the
  // first's on top (44), it frees 10 (30). B: 36, 20, 24, 0.
  const std::vector<RankPass> order = {{.phase = Phase::kForward}, {.phase = Phase::kForward},
                                       {.phase = Phase::kBackward}, {.phase = Phase::kBackward}};
  EXPECT_DOUBLE_EQ(walk_activation_peak(order, kChunk), 66.0);
}

TEST(MemoryWalk, InputGradientPassKeepsTheWeightGradientInputs) {
  // F: 30. Bi: 30 + 6 = 36, then 30 - 20 + 5 = 15; 15 + 4 = 19, then 15 - 10 + 3 = 8. F: 38. W: 30.
  const std::vector<RankPass> order = {{.phase = Phase::kForward}, {.phase = Phase::kInputGrad},
                                       {.phase = Phase::kForward}, {.phase = Phase::kWeightGrad}};
  EXPECT_DOUBLE_EQ(walk_activation_peak(order, kChunk), 38.0);
}

TEST(MemoryWalk, PassOnAChunkTheRankDoesNotHoldIsRefused) {
  const std::vector<RankPass> order = {{.phase = Phase::kForward, .chunk = 1}};
  EXPECT_THROW(walk_activation_peak(order, kChunk), std::invalid_argument);
}

// The walk unit by unit, as the step simulation's replay allocates and frees.
double unit_by_unit(const std::vector<RankPass>& passes, const std::vector<std::vector<UnitMemory>>& chunks) {
  double live = 0, peak = 0;
  for (const RankPass& p : passes) {
    const auto& units = chunks[static_cast<std::size_t>(p.chunk)];
    for (std::size_t k = 0; k < units.size(); ++k) {
      const UnitMemory& u = units[p.phase == Phase::kForward ? k : units.size() - 1 - k];
      switch (p.phase) {
        case Phase::kForward: live += u.stored; peak = std::max(peak, live); break;
        case Phase::kBackward: peak = std::max(peak, live + u.working); live -= u.stored; break;
        case Phase::kInputGrad: peak = std::max(peak, live + u.working); live += u.kept_for_weight_grad - u.stored; break;
        case Phase::kWeightGrad: live -= u.kept_for_weight_grad; break;
      }
    }
  }
  return peak;
}

TEST(MemoryWalk, ChunkSummariesEqualTheUnitByUnitWalk) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> bytes(0.0, 1e9);
  for (int trial = 0; trial < 300; ++trial) {
    const int n_chunks = 1 + trial % 3;
    std::vector<std::vector<UnitMemory>> chunks(static_cast<std::size_t>(n_chunks));
    for (auto& units : chunks) {
      units.resize(static_cast<std::size_t>(rng() % 6));  // empty chunks too
      for (UnitMemory& u : units) {
        u.stored = bytes(rng);
        u.working = bytes(rng);
        u.kept_for_weight_grad = u.stored * std::uniform_real_distribution<double>(0, 1)(rng);
      }
    }
    // Micro-batches in flight per chunk: forwards first, then a backward (split or whole) for each.
    std::vector<RankPass> order;
    std::vector<RankPass> pending_w;
    const int microbatches = 1 + static_cast<int>(rng() % 5);
    for (int mb = 0; mb < microbatches; ++mb) {
      for (int c = 0; c < n_chunks; ++c) order.push_back({.phase = Phase::kForward, .chunk = c});
      if (rng() % 2 == 0) continue;
      for (int c = n_chunks - 1; c >= 0; --c) {
        const bool split = rng() % 2 == 0;
        order.push_back({.phase = split ? Phase::kInputGrad : Phase::kBackward, .chunk = c});
        if (split) pending_w.push_back({.phase = Phase::kWeightGrad, .chunk = c});
      }
      if (rng() % 2 == 0) {
        order.insert(order.end(), pending_w.begin(), pending_w.end());
        pending_w.clear();
      }
    }
    const double expected = unit_by_unit(order, chunks);
    EXPECT_NEAR(walk_activation_peak(order, chunks), expected, 1e-9 * std::max(1.0, expected)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace mofasim::model

namespace mofasim::model {
namespace {

TEST(MemoryWalk, RememberedPeaksFollowTheChunkContents) {
  // An order with an id is remembered per chunk contents: the same order over other units walks anew.
  RankOrder order;
  order.passes = {{.phase = Phase::kForward}, {.phase = Phase::kForward}, {.phase = Phase::kBackward},
                  {.phase = Phase::kBackward}};
  order.id = 4242;
  EXPECT_DOUBLE_EQ(walk_rank(order, kChunk).peak, 66.0);
  EXPECT_DOUBLE_EQ(walk_rank(order, kChunk).peak, 66.0);
  EXPECT_FALSE(walk_rank(order, kChunk).paired);
  const std::vector<std::vector<UnitMemory>> doubled = {{{.stored = 20, .working = 8}, {.stored = 40, .working = 12}}};
  EXPECT_DOUBLE_EQ(walk_rank(order, doubled).peak, 132.0);
  order.id = 0;
  EXPECT_DOUBLE_EQ(walk_rank(order, doubled).peak, 132.0);
  order.passes.front().paired_with_next = true;
  EXPECT_TRUE(walk_rank(order, doubled).paired);
}

}  // namespace
}  // namespace mofasim::model
