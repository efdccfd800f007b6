// CompletionIndex: earliest-time order, sequence order inside one time, re-keying and erasing,
// and the lazy heap staying bounded when buckets are emptied by re-keys.
#include "sim/engine/completion_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace mofasim::sim {
namespace {

std::vector<std::uint32_t> pop(CompletionIndex& index) {
  std::vector<std::uint32_t> out;
  index.pop_earliest(out);
  return out;
}

TEST(CompletionIndex, PopsEarliestTimeFirstAndEqualTimesInSequenceOrder) {
  CompletionIndex index;
  index.set(/*slot=*/5, /*when_ns=*/200, /*seq=*/3);
  index.set(7, 100, 9);
  index.set(2, 100, 4);
  index.set(9, 100, 6);
  ASSERT_EQ(index.size(), 4u);
  EXPECT_EQ(index.earliest_ns(), 100);
  EXPECT_EQ(pop(index), (std::vector<std::uint32_t>{2, 9, 7}));  // seq 4, 6, 9
  EXPECT_FALSE(index.contains(7));
  EXPECT_TRUE(index.contains(5));
  EXPECT_EQ(index.earliest_ns(), 200);
  EXPECT_EQ(pop(index), (std::vector<std::uint32_t>{5}));
  EXPECT_TRUE(index.empty());
}

TEST(CompletionIndex, ReKeyMovesASlotAndEraseRemovesIt) {
  CompletionIndex index;
  index.set(1, 50, 1);
  index.set(2, 50, 2);
  index.set(3, 80, 3);
  index.set(1, 90, 1);  // later now
  index.erase(2);       // its bucket (50) empties: a stale heap entry
  index.erase(2);       // absent: no-op
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.earliest_ns(), 80);
  EXPECT_EQ(pop(index), (std::vector<std::uint32_t>{3}));
  index.set(4, 90, 0);  // joins slot 1's time with a lower sequence
  EXPECT_EQ(pop(index), (std::vector<std::uint32_t>{4, 1}));
  EXPECT_TRUE(index.empty());
}

TEST(CompletionIndex, ManyReKeysKeepTheRightOrder) {
  // 1,000 slots re-keyed 50 times each to pseudo-random times; the final order must be by
  // (time, seq) with every slot exactly once.
  CompletionIndex index;
  std::vector<std::int64_t> when(1000);
  std::uint64_t x = 12345;
  for (int round = 0; round < 50; ++round) {
    for (std::uint32_t s = 0; s < when.size(); ++s) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      when[s] = static_cast<std::int64_t>((x >> 33) % 97);
      index.set(s, when[s], /*seq=*/when.size() - s);
    }
  }
  std::int64_t last_time = -1;
  std::size_t seen = 0;
  while (!index.empty()) {
    const std::int64_t t = index.earliest_ns();
    EXPECT_GT(t, last_time);
    const std::vector<std::uint32_t> batch = pop(index);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      EXPECT_EQ(when[batch[i]], t);
      if (i > 0) {
        EXPECT_LT(batch[i], batch[i - 1]);  // seq = 1000 - slot ascending
      }
    }
    seen += batch.size();
    last_time = t;
  }
  EXPECT_EQ(seen, when.size());
}

}  // namespace
}  // namespace mofasim::sim
