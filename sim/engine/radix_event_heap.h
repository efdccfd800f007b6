// RadixEventHeap: the EventQueue's priority queue. A radix heap (Ahuja, Mehlhorn, Orlin & Tarjan
// 1990) on integer-nanosecond times, which is O(1) push and O(log C) amortised pop for monotone
// keys (C = the largest span between the last popped time and a pending one), and touches memory
// only sequentially: every bucket is a plain vector that is appended to and drained whole.
//
// Keys are (when, order) with `order` unique. Bucket 0 holds the keys whose time equals last_
// (the time last brought to the front); bucket b >= 1 holds those whose time differs from last_
// first in bit b - 1 (counting from bit 0). Every bucket keeps its keys in push order, and moving
// a bucket down keeps that order, so when keys are pushed in increasing `order` (FIFO ties),
// bucket 0 is already sorted and is read front to back. With `heap_ties` (shuffled ties, whose
// `order` is not increasing) bucket 0 is instead kept as a binary heap on `order`.
//
// Monotonicity: a time may be pushed below last_ when top() brought a time to the front that was
// not then popped (a peek, or a cancelled event dropped). Such keys go to `early_`, a binary heap
// on (when, order) that is drained first: its keys are all below last_ and so below every bucket.
//
// Steady state allocates nothing: cleared buckets keep their capacity.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mofasim::sim {

struct EventKey {
  std::uint64_t when;   // ns since the epoch (times before it are never scheduled)
  std::uint64_t order;  // unique tie key; lower runs first among equal times
};

struct RadixEventHeapOptions {
  // False: keys at equal times are pushed in increasing `order` (bucket 0 is a FIFO).
  // True: they are not; bucket 0 is kept as a heap on `order`.
  bool heap_ties = false;
};

class RadixEventHeap {
 public:
  explicit RadixEventHeap(RadixEventHeapOptions options = {}) : heap_ties_(options.heap_ties) {}

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }

  void push(EventKey key) {
    ++size_;
    if (key.when > last_) {
      const int b = std::bit_width(key.when ^ last_);
      buckets_[static_cast<std::size_t>(b)].push_back(key);
      occupied_ |= std::uint64_t{1} << (b - 1);
    } else if (key.when == last_) {
      push_now(key);
    } else {
      early_.push_back(key);
      std::push_heap(early_.begin(), early_.end(), after);
    }
  }

  // The least key, or nullptr when empty. May regroup the buckets (hence not const); the pointer
  // stays valid until the next push or pop.
  const EventKey* top() {
    if (!early_.empty()) return &early_.front();
    if (head_ == buckets_[0].size() && !refill()) return nullptr;
    return &buckets_[0][head_];
  }

  // Removes the least key. Precondition: top() was called since the last push and was not null.
  void pop() {
    --size_;
    if (!early_.empty()) {
      std::pop_heap(early_.begin(), early_.end(), after);
      early_.pop_back();
      return;
    }
    std::vector<EventKey>& now = buckets_[0];
    if (heap_ties_) {
      std::pop_heap(now.begin(), now.end(), after);
      now.pop_back();
    } else if (++head_ == now.size()) {
      now.clear();
      head_ = 0;
    }
  }

  // The keys that will be popped next, in order, from the current-time FIFO (a hint for
  // prefetching what the next pops will touch; empty with heap_ties or a non-empty early_).
  [[nodiscard]] std::span<const EventKey> upcoming() const {
    if (heap_ties_ || !early_.empty()) return {};
    return std::span<const EventKey>(buckets_[0]).subspan(head_);
  }
  // True when the last pop took the first key of a FIFO that a refill had just filled.
  [[nodiscard]] bool batch_started() const { return head_ == 1; }

 private:
  static constexpr std::size_t kBuckets = 65;  // bucket 0 plus one per bit of a 64-bit time
  // Compaction of the current-time FIFO once this many read entries lead it (see push_now).
  static constexpr std::size_t kCompactAfter = 4096;

  // Heap comparator: true when a runs after b (std heaps keep the greatest on top).
  static bool after(const EventKey& a, const EventKey& b) {
    return a.when > b.when || (a.when == b.when && a.order > b.order);
  }

  void push_now(EventKey key) {
    std::vector<EventKey>& now = buckets_[0];
    if (heap_ties_) {
      now.push_back(key);
      std::push_heap(now.begin(), now.end(), after);
      return;
    }
    // A chain of same-time events that never lets the FIFO run dry would grow it forever.
    if (head_ >= kCompactAfter && 2 * head_ >= now.size()) {
      now.erase(now.begin(), now.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    now.push_back(key);
  }

  // Bucket 0 is empty: moves the least time of the lowest non-empty bucket to last_ and spreads
  // that bucket over the buckets below it. False when nothing is pending in the buckets.
  bool refill() {
    std::vector<EventKey>& now = buckets_[0];
    now.clear();
    head_ = 0;
    if (occupied_ == 0) return false;
    const int i = std::countr_zero(occupied_) + 1;
    std::vector<EventKey>& src = buckets_[static_cast<std::size_t>(i)];
    std::uint64_t least = src.front().when;
    for (const EventKey& k : src) least = std::min(least, k.when);
    last_ = least;
    // Every key of bucket i agrees with `least` above bit i - 1, so each lands strictly below i.
    for (const EventKey& k : src) {
      if (k.when == least) {
        now.push_back(k);
      } else {
        const int b = std::bit_width(k.when ^ least);
        buckets_[static_cast<std::size_t>(b)].push_back(k);
        occupied_ |= std::uint64_t{1} << (b - 1);
      }
    }
    src.clear();
    occupied_ &= ~(std::uint64_t{1} << (i - 1));
    if (heap_ties_) std::make_heap(now.begin(), now.end(), after);
    return true;
  }

  bool heap_ties_;
  std::uint64_t last_ = 0;
  std::uint64_t occupied_ = 0;  // bit b - 1 set when bucket b (1..64) is non-empty
  std::size_t head_ = 0;        // next unread key of bucket 0 (FIFO mode)
  std::size_t size_ = 0;
  std::array<std::vector<EventKey>, kBuckets> buckets_{};
  std::vector<EventKey> early_;  // keys below last_, a heap under `after`
};

}  // namespace mofasim::sim
