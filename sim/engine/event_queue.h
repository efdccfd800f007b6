// EventQueue: the discrete-event core. One object per simulation (no globals), so several
// simulations can run in one process.
//
// Order: events run by (when, seq), where seq increments on every schedule, so events at the same
// time run in insertion order (FIFO). With EventQueueOptions::shuffle_ties_seed set, the seq part
// of the key is replaced by a bijective hash of (seq, seed): same-time events then run in a
// deterministic pseudo-random permutation (a debug aid: a result that changes under shuffling
// depends on tie order, see style.md S9). Time order is never changed.
//
// Cost: schedule O(log n), step O(log n) amortised, cancel O(1) (a tombstone, dropped when it
// reaches the top). Limits (checked): 2^24 - 1 events pending at once, 2^40 events scheduled. Events live in a pooled slot vector with a free list and a 4-ary heap of
// (when, tie, slot) keys; the Action is stored inline. After warm-up no event allocates.
// NOTE: reusing the fired event's root entry for the first event its action schedules (one
// sift-down instead of pop + push) measured ~15% slower on the hold benchmark, so it is not done.
// Bookkeeping checked at the end of run_until()/run(): scheduled = fired + cancelled + pending.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <vector>

#include "sim/engine/action.h"
#include "sim/engine/ids.h"
#include "sim/units/time.h"

namespace mofasim::sim {

struct EventQueueOptions {
  // Debug: permute events that share a timestamp, deterministically from this seed.
  std::optional<std::uint64_t> shuffle_ties_seed{};
};

class EventQueue {
 public:
  explicit EventQueue(EventQueueOptions options = {});

  // Schedules `action` at `when` (>= now(), else std::invalid_argument).
  EventId schedule_at(Time when, Action action);
  // Schedules `action` at now() + delay (delay >= 0, else std::invalid_argument).
  EventId schedule_in(Duration delay, Action action);
  // Cancels a pending event in O(1). False if it already fired, was cancelled, or is not an id.
  bool cancel(EventId id);

  [[nodiscard]] Time now() const { return now_; }
  // Runs the earliest pending event. False (and nothing happens) when none is pending.
  bool step();
  // Runs every event with when <= horizon, then sets now() to horizon (if horizon > now() and
  // horizon != kTimeMax). Events scheduled by actions at times <= horizon also run.
  void run_until(Time horizon);
  // Runs until no event is pending; now() stays at the last event's time.
  void run();

  [[nodiscard]] std::uint64_t processed() const { return fired_; }   // events fired
  [[nodiscard]] std::uint64_t cancelled() const { return cancelled_; }
  [[nodiscard]] std::uint64_t scheduled() const { return scheduled_; }
  [[nodiscard]] std::uint64_t pending() const { return pending_; }   // scheduled, not yet fired/cancelled
  // Time of the earliest pending event, if any (drops cancelled events from the top first).
  [[nodiscard]] std::optional<Time> next_time();

 private:
  enum class SlotState : std::uint8_t { kFree, kPending, kCancelled };
  struct Slot {
    Action action;
    std::uint64_t seq = 0;
    std::uint32_t next_free = kInvalidIndex;
    SlotState state = SlotState::kFree;
  };
  // 16 bytes: `order` packs the tie key (high 40 bits) over the slot (low 24 bits), so comparing
  // `order` compares ties (unique), and four siblings fill one 64-byte cache line.
  struct Key {
    std::int64_t when;
    std::uint64_t order;
  };
  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  static constexpr std::uint64_t kTieLimit = std::uint64_t{1} << (64 - kSlotBits);
  // The heap's logical index i lives at heap_[i + kPad]: children 4i+1..4i+4 then start at a
  // multiple of 4 entries, i.e. on a cache-line boundary of the 64-byte-aligned buffer.
  static constexpr std::size_t kPad = 3;
  template <class T>
  struct CacheLineAllocator {
    using value_type = T;
    CacheLineAllocator() = default;
    template <class U>
    explicit CacheLineAllocator(const CacheLineAllocator<U>&) {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
    void deallocate(T* p, std::size_t n) { ::operator delete(p, n * sizeof(T), std::align_val_t{64}); }
    friend bool operator==(CacheLineAllocator, CacheLineAllocator) { return true; }
  };

  static bool before(const Key& a, const Key& b) {
    return a.when < b.when || (a.when == b.when && a.order < b.order);
  }
  static std::uint32_t slot_of(const Key& k) { return static_cast<std::uint32_t>(k.order & kSlotMask); }
  [[nodiscard]] std::size_t heap_size() const { return heap_.size() - kPad; }
  Key& heap_at(std::size_t i) { return heap_[i + kPad]; }
  void heap_push(Key key);
  void heap_pop();
  void sift_down_from_root(Key key);
  void free_slot(std::uint32_t slot);
  void drop_cancelled_top();
  void check_bookkeeping() const;

  EventQueueOptions options_;
  Time now_ = kTimeZero;
  std::vector<Slot> slots_;
  std::vector<Key, CacheLineAllocator<Key>> heap_;
  std::uint32_t free_head_ = kInvalidIndex;
  std::uint64_t next_seq_ = 1;
  std::uint64_t scheduled_ = 0;
  std::uint64_t fired_ = 0;
  std::uint64_t cancelled_ = 0;
  std::uint64_t pending_ = 0;
  std::uint64_t tombstones_ = 0;  // cancelled events still in heap_
};

}  // namespace mofasim::sim
