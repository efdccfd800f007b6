// CompletionIndex: FluidModel's index of running activities by completion time, grouped in
// buckets of equal time.
//
// Why buckets and not one binary heap of activities: a cluster replay finishes thousands of
// identical activities in the same nanosecond (every rank's copy of one GEMM), and the fluid
// model sets their completions one after the other. A heap pays a cache-missing O(log n) sift
// for each of them; here consecutive sets of one time share a bucket, so they cost O(1) (an
// append) and the heap holds one entry per bucket. A time set again later may get a second
// bucket: pop_earliest() merges every bucket of the earliest time.
//
// Order: pop_earliest() returns one whole time's slots sorted by start sequence, which is the
// order the completions are delivered in (FluidModel's tie rule). Buckets emptied by erase()
// leave a stale entry in the heap; it is dropped when it reaches the top, and the heap is rebuilt
// from the live buckets when stale entries outnumber them, so memory stays O(live activities).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/ids.h"

namespace mofasim::sim {

class CompletionIndex {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool contains(std::uint32_t slot) const {
    return slot < pos_.size() && pos_[slot].bucket != kInvalidIndex;
  }

  // Inserts `slot` at `when_ns`, or moves it there. `seq` orders slots of equal time.
  void set(std::uint32_t slot, std::int64_t when_ns, std::uint64_t seq);
  // Removes `slot` if present.
  void erase(std::uint32_t slot);
  // The earliest completion time. Requires !empty().
  [[nodiscard]] std::int64_t earliest_ns();
  // Removes every slot of the earliest time and appends them to `out` in ascending seq.
  // Requires !empty().
  void pop_earliest(std::vector<std::uint32_t>& out);

 private:
  struct Item {
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Bucket {
    std::int64_t when_ns = 0;
    std::uint32_t generation = 0;  // bumped when the bucket is freed: older heap entries are stale
    bool live = false;
    std::vector<Item> items;       // capacity kept across reuse
  };
  struct TimeEntry {
    std::int64_t when_ns;
    std::uint32_t bucket;
    std::uint32_t generation;
  };
  struct Pos {
    std::uint32_t bucket = kInvalidIndex;
    std::uint32_t index = 0;
  };

  [[nodiscard]] bool stale(const TimeEntry& e) const {
    return buckets_[e.bucket].generation != e.generation;
  }
  std::uint32_t bucket_for(std::int64_t when_ns);
  void remove(std::uint32_t slot);
  void free_bucket(std::uint32_t b);
  void drop_stale_top();
  void rebuild_heap();

  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_buckets_;
  std::vector<TimeEntry> heap_;                // min-heap on when_ns; may hold stale entries
  std::vector<Pos> pos_;                       // by slot
  std::uint32_t last_bucket_ = kInvalidIndex;  // the bucket of the last set()
  std::size_t live_buckets_ = 0;
  std::vector<Item> merged_;  // pop_earliest scratch
  std::size_t size_ = 0;
};

}  // namespace mofasim::sim
