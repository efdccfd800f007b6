// A small cache of at most Capacity entries, searched front to back with the caller's own match.
// The project's caches hold a handful to a few tens of entries whose keys compare by hand-written
// rules (schedules' same_shape, a chunk's memory effects), so a linear scan over a flat array is
// both the simplest and the fastest lookup; what differs between them is only which entry a miss
// replaces once all are used:
//   kLeastRecentlyUsed  a hit moves to the back and a miss replaces the front (the least recently
//                       found or stored): for few, costly values that callers return to, such as
//                       a tuner thread's schedules and rank orders;
//   kOldestInserted     entries stay where they were stored and a full cache replaces them in
//                       turn (round robin): a hit costs nothing beyond the scan, for caches looked
//                       up far more often than filled (the memory walk, the α–β prices).
// Not thread-safe: each user keeps one per thread (thread_local) or per computation. Entry must be
// default-constructible and movable; the results it holds must be pure functions of its key, so
// an evicted entry only costs the time to compute it again.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

namespace mofasim {

enum class Eviction { kLeastRecentlyUsed, kOldestInserted };

template <class Entry, std::size_t Capacity, Eviction kEviction>
class BoundedCache {
  static_assert(Capacity > 0, "BoundedCache: Capacity must be at least 1");

 public:
  // The first stored entry for which match(entry) is true, or nullptr. Under kLeastRecentlyUsed the
  // hit becomes the most recently used. The pointer is valid until the next find or insert.
  template <class Match>
  const Entry* find(const Match& match) {
    for (std::size_t i = 0; i < size_; ++i) {
      if (!match(static_cast<const Entry&>(entries_[i]))) continue;
      if constexpr (kEviction == Eviction::kLeastRecentlyUsed) {
        std::rotate(entries_.begin() + static_cast<std::ptrdiff_t>(i),
                    entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                    entries_.begin() + static_cast<std::ptrdiff_t>(size_));
        return &entries_[size_ - 1];
      } else {
        return &entries_[i];
      }
    }
    return nullptr;
  }

  // Stores `entry` (the caller has found no match for it), replacing the entry the eviction rule
  // picks when all Capacity are used. Returns the stored entry, valid as find's result is.
  const Entry& insert(Entry entry) {
    std::size_t slot = size_;
    if (size_ < Capacity) {
      ++size_;
    } else if constexpr (kEviction == Eviction::kLeastRecentlyUsed) {
      std::rotate(entries_.begin(), entries_.begin() + 1, entries_.end());  // the front goes last
      slot = Capacity - 1;
    } else {
      slot = next_;
      next_ = (next_ + 1) % Capacity;
    }
    entries_[slot] = std::move(entry);
    return entries_[slot];
  }

  std::size_t size() const { return size_; }

 private:
  std::array<Entry, Capacity> entries_{};  // [0, size_) in use; under LRU least recent first
  std::size_t size_ = 0;
  std::size_t next_ = 0;  // kOldestInserted: the slot the next insert into a full cache replaces
};

}  // namespace mofasim
