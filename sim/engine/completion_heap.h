// CompletionHeap: indexed binary min-heap of activity slots keyed by (completion ns, start seq).
// Used by FluidModel to find the next activity to finish; supports update and removal of any
// entry in O(log n) through a position map, so no tombstones pile up when rates change.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/ids.h"

namespace mofasim::sim {

class CompletionHeap {
 public:
  struct Entry {
    std::int64_t when_ns;
    std::uint64_t seq;
    std::uint32_t slot;
  };

  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] const Entry& top() const { return heap_.front(); }
  [[nodiscard]] bool contains(std::uint32_t slot) const { return slot < pos_.size() && pos_[slot] != kInvalidIndex; }

  // Inserts or re-keys `slot`.
  void set(std::uint32_t slot, std::int64_t when_ns, std::uint64_t seq);
  // Removes `slot` if present.
  void erase(std::uint32_t slot);

 private:
  static bool before(const Entry& a, const Entry& b) {
    return a.when_ns < b.when_ns || (a.when_ns == b.when_ns && a.seq < b.seq);
  }
  void place(std::size_t i, const Entry& e) {
    heap_[i] = e;
    pos_[e.slot] = static_cast<std::uint32_t>(i);
  }
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);

  std::vector<Entry> heap_;
  std::vector<std::uint32_t> pos_;  // slot -> index in heap_, kInvalidIndex when absent
};

inline void CompletionHeap::set(std::uint32_t slot, std::int64_t when_ns, std::uint64_t seq) {
  if (slot >= pos_.size()) pos_.resize(slot + 1, kInvalidIndex);
  const Entry e{.when_ns = when_ns, .seq = seq, .slot = slot};
  if (pos_[slot] == kInvalidIndex) {
    heap_.push_back(e);
    place(heap_.size() - 1, e);
    sift_up(heap_.size() - 1);
    return;
  }
  const std::size_t i = pos_[slot];
  const bool up = before(e, heap_[i]);
  place(i, e);
  if (up) {
    sift_up(i);
  } else {
    sift_down(i);
  }
}

inline void CompletionHeap::erase(std::uint32_t slot) {
  if (!contains(slot)) return;
  const std::size_t i = pos_[slot];
  pos_[slot] = kInvalidIndex;
  const Entry last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  const bool up = before(last, heap_[i]);
  place(i, last);
  if (up) {
    sift_up(i);
  } else {
    sift_down(i);
  }
}

inline void CompletionHeap::sift_up(std::size_t i) {
  const Entry e = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(e, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, e);
}

inline void CompletionHeap::sift_down(std::size_t i) {
  const Entry e = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], e)) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, e);
}

}  // namespace mofasim::sim
