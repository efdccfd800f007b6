// BoundedCache: which entry each eviction rule replaces, that a hit returns the stored value, and
// that a least-recently-used hit protects its entry while a round-robin hit does not.
#include "sim/units/bounded_cache.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace mofasim {
namespace {

struct Entry {
  int key = 0;
  std::string value;
};

template <class Cache>
std::vector<int> stored_keys(Cache& cache, std::initializer_list<int> candidates) {
  std::vector<int> out;
  for (int k : candidates) {
    if (cache.find([&](const Entry& e) { return e.key == k; }) != nullptr) out.push_back(k);
  }
  return out;
}

TEST(BoundedCache, MissIsNullAndHitReturnsTheStoredValue) {
  BoundedCache<Entry, 3, Eviction::kLeastRecentlyUsed> cache;
  EXPECT_EQ(cache.find([](const Entry&) { return true; }), nullptr);
  EXPECT_EQ(cache.insert({7, "seven"}).value, "seven");
  cache.insert({8, "eight"});
  const Entry* hit = cache.find([](const Entry& e) { return e.key == 7; });
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->value, "seven");
  EXPECT_EQ(cache.size(), 2u);
}

TEST(BoundedCache, LeastRecentlyUsedReplacesTheEntryFoundOrStoredLongestAgo) {
  BoundedCache<Entry, 3, Eviction::kLeastRecentlyUsed> cache;
  cache.insert({1, "a"});
  cache.insert({2, "b"});
  cache.insert({3, "c"});
  ASSERT_NE(cache.find([](const Entry& e) { return e.key == 1; }), nullptr);  // 1 is now the most recent
  cache.insert({4, "d"});  // replaces 2, the least recently used
  EXPECT_EQ(cache.size(), 3u);
  // Looking keys up reorders them: 1, 3, 4 found in that order leaves 1 the least recent.
  EXPECT_EQ(stored_keys(cache, {1, 2, 3, 4}), (std::vector<int>{1, 3, 4}));
  cache.insert({5, "e"});  // replaces 1
  EXPECT_EQ(stored_keys(cache, {1, 3, 4, 5}), (std::vector<int>{3, 4, 5}));
  const Entry* five = cache.find([](const Entry& e) { return e.key == 5; });
  ASSERT_NE(five, nullptr);
  EXPECT_EQ(five->value, "e");
}

TEST(BoundedCache, OldestInsertedReplacesEntriesInTurnWhateverWasFound) {
  BoundedCache<Entry, 3, Eviction::kOldestInserted> cache;
  cache.insert({1, "a"});
  cache.insert({2, "b"});
  cache.insert({3, "c"});
  ASSERT_NE(cache.find([](const Entry& e) { return e.key == 1; }), nullptr);  // a hit changes nothing
  cache.insert({4, "d"});  // replaces 1, the first stored
  EXPECT_EQ(stored_keys(cache, {1, 2, 3, 4}), (std::vector<int>{2, 3, 4}));
  cache.insert({5, "e"});  // then 2
  cache.insert({6, "f"});  // then 3
  EXPECT_EQ(stored_keys(cache, {2, 3, 4, 5, 6}), (std::vector<int>{4, 5, 6}));
  cache.insert({7, "g"});  // and round again: 4
  EXPECT_EQ(stored_keys(cache, {4, 5, 6, 7}), (std::vector<int>{5, 6, 7}));
  EXPECT_EQ(cache.size(), 3u);
}

TEST(BoundedCache, FindReturnsTheFirstMatchInStorageOrder) {
  BoundedCache<Entry, 4, Eviction::kOldestInserted> cache;
  cache.insert({1, "first"});
  cache.insert({1, "second"});
  const Entry* hit = cache.find([](const Entry& e) { return e.key == 1; });
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->value, "first");
}

}  // namespace
}  // namespace mofasim
