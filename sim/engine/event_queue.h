// EventQueue: the discrete-event core. One object per simulation (no globals), so several
// simulations can run in one process.
//
// Order: events run by (when, seq), where seq increments on every schedule, so events at the same
// time run in insertion order (FIFO). With EventQueueOptions::shuffle_ties_seed set, the seq part
// of the key is replaced by a bijective hash of (seq, seed): same-time events then run in a
// deterministic pseudo-random permutation (a debug aid: a result that changes under shuffling
// depends on tie order, see style.md S9). Time order is never changed.
//
// Cost: schedule O(1), step O(log C) amortised where C is the span in ns between now and the
// latest pending event (a radix heap on integer times, see radix_event_heap.h), cancel O(1) (a
// tombstone, dropped when it reaches the front). Limits (checked): 2^24 - 1 events pending at
// once, 2^40 events scheduled. Events live in a pooled slot vector with a free list; the Action
// is stored inline in the slot and the heap holds only 16-byte (when, tie|slot) keys, so a slot
// is touched only to schedule, cancel and fire. After warm-up no event allocates.
// Bookkeeping checked at the end of run_until()/run(): scheduled = fired + cancelled + pending.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/engine/action.h"
#include "sim/engine/ids.h"
#include "sim/engine/radix_event_heap.h"
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
  // One cache line per slot, so firing an event (read the action, free the slot) is one fetch.
  struct alignas(64) Slot {
    Action action;
    std::uint64_t seq = 0;
    std::uint32_t next_free = kInvalidIndex;
    SlotState state = SlotState::kFree;
  };
  // EventKey::order packs the tie key (high 40 bits) over the slot (low 24 bits), so comparing
  // `order` compares ties (unique).
  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
  static constexpr std::uint64_t kTieLimit = std::uint64_t{1} << (64 - kSlotBits);

  static std::uint32_t slot_of(const EventKey& k) { return static_cast<std::uint32_t>(k.order & kSlotMask); }
  // The earliest pending event's key after dropping cancelled ones from the front; null if none.
  const EventKey* live_top();
  void fire(EventKey key);
  void free_slot(std::uint32_t slot);
  void check_bookkeeping() const;

  EventQueueOptions options_;
  Time now_ = kTimeZero;
  std::vector<Slot> slots_;
  RadixEventHeap events_;
  std::uint32_t free_head_ = kInvalidIndex;
  std::uint64_t next_seq_ = 1;
  std::uint64_t scheduled_ = 0;
  std::uint64_t fired_ = 0;
  std::uint64_t cancelled_ = 0;
  std::uint64_t pending_ = 0;
  std::uint64_t tombstones_ = 0;  // cancelled events still in events_
};

}  // namespace mofasim::sim
