// EventQueue implementation: pooled slots + a radix heap of (when, tie|slot) keys.
#include "sim/engine/event_queue.h"

#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/units/check.h"

namespace mofasim::sim {
namespace {

// How many events ahead fire() prefetches a slot (tried 4 to 24 on the hold benchmark: 8 to 16
// are alike, fewer leave misses, more get evicted before use).
constexpr std::size_t kPrefetchAhead = 12;

// A bijection on 40-bit integers (odd multiplies and xor-shifts modulo 2^40), so shuffled ties
// stay unique.
std::uint64_t mix40(std::uint64_t x) {
  constexpr std::uint64_t kMask = (std::uint64_t{1} << 40) - 1;
  x = (x * 0x9E3779B97F4A7C15ULL) & kMask;
  x ^= x >> 19;
  x = (x * 0xBF58476D1CE4E5B9ULL) & kMask;
  x ^= x >> 23;
  x = (x * 0x94D049BB133111EBULL) & kMask;
  return x ^ (x >> 17);
}

}  // namespace

EventQueue::EventQueue(EventQueueOptions options)
    : options_(options), events_({.heap_ties = options.shuffle_ties_seed.has_value()}) {}

EventId EventQueue::schedule_at(Time when, Action action) {
  if (when < now_) {
    throw std::invalid_argument("EventQueue::schedule_at: time " + std::to_string(when.time_since_epoch().count()) +
                                " ns is before now " + std::to_string(now_.time_since_epoch().count()) + " ns");
  }
  std::uint32_t slot = free_head_;
  if (slot != kInvalidIndex) {
    free_head_ = slots_[slot].next_free;
  } else {
    MOFASIM_CHECK(slots_.size() < kSlotMask, "more than 2^24 - 1 events pending at once");
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  MOFASIM_CHECK(next_seq_ < kTieLimit, "more than 2^40 events scheduled");
  const std::uint64_t seq = next_seq_++;
  Slot& s = slots_[slot];
  s.action = action;
  s.seq = seq;
  s.state = SlotState::kPending;
  const std::uint64_t tie = options_.shuffle_ties_seed ? mix40(seq ^ (*options_.shuffle_ties_seed & (kTieLimit - 1))) : seq;
  events_.push(EventKey{.when = static_cast<std::uint64_t>(when.time_since_epoch().count()), .order = (tie << kSlotBits) | slot});
  ++scheduled_;
  ++pending_;
  return EventId{.slot = slot, .seq = seq};
}

EventId EventQueue::schedule_in(Duration delay, Action action) {
  if (delay < Duration::zero()) {
    throw std::invalid_argument("EventQueue::schedule_in: delay " + std::to_string(delay.count()) +
                                " ns is negative; allowed: >= 0");
  }
  return schedule_at(now_ + delay, action);
}

bool EventQueue::cancel(EventId id) {
  if (id.slot >= slots_.size()) return false;
  Slot& s = slots_[id.slot];
  if (s.seq != id.seq || s.state != SlotState::kPending) return false;
  s.state = SlotState::kCancelled;
  s.action = Action{};
  ++cancelled_;
  --pending_;
  ++tombstones_;
  return true;
}

bool EventQueue::step() {
  const EventKey* top = live_top();
  if (top == nullptr) return false;
  const EventKey key = *top;
  events_.pop();
  fire(key);
  return true;
}

void EventQueue::fire(EventKey key) {
  // The FIFO of current-time keys says which slots the next events will touch: fetch them
  // kPrefetchAhead events early (all of the first ones when a batch starts). This hides most of
  // the cache miss on the slot, which otherwise costs as much as the rest of the event.
  const std::span<const EventKey> next = events_.upcoming();
  if (next.size() >= kPrefetchAhead) __builtin_prefetch(&slots_[slot_of(next[kPrefetchAhead - 1])]);
  if (events_.batch_started()) {
    for (std::size_t i = 0; i + 1 < kPrefetchAhead && i < next.size(); ++i) __builtin_prefetch(&slots_[slot_of(next[i])]);
  }
  const std::uint32_t slot = slot_of(key);
  Slot& s = slots_[slot];
  MOFASIM_DCHECK(s.state == SlotState::kPending, "front event is not pending");
  Action action = s.action;  // copy out: the action may schedule events and grow slots_
  free_slot(slot);
  now_ = Time{Duration{static_cast<std::int64_t>(key.when)}};
  ++fired_;
  --pending_;
  action();
}

void EventQueue::run_until(Time horizon) {
  const std::int64_t h = horizon.time_since_epoch().count();
  for (;;) {
    const EventKey* top = live_top();
    if (top == nullptr || static_cast<std::int64_t>(top->when) > h) break;
    const EventKey key = *top;
    events_.pop();
    fire(key);
  }
  if (horizon != kTimeMax && horizon > now_) now_ = horizon;
  check_bookkeeping();
}

void EventQueue::run() { run_until(kTimeMax); }

std::optional<Time> EventQueue::next_time() {
  const EventKey* top = live_top();
  if (top == nullptr) return std::nullopt;
  return Time{Duration{static_cast<std::int64_t>(top->when)}};
}

const EventKey* EventQueue::live_top() {
  for (;;) {
    const EventKey* top = events_.top();
    if (top == nullptr || tombstones_ == 0) return top;
    const std::uint32_t slot = slot_of(*top);
    if (slots_[slot].state != SlotState::kCancelled) return top;
    events_.pop();
    free_slot(slot);
    --tombstones_;
  }
}

void EventQueue::free_slot(std::uint32_t slot) {
  Slot& s = slots_[slot];
  s.state = SlotState::kFree;
  s.next_free = free_head_;
  free_head_ = slot;
}

void EventQueue::check_bookkeeping() const {
  MOFASIM_CHECK(scheduled_ == fired_ + cancelled_ + pending_, "event bookkeeping: scheduled != fired + cancelled + pending");
  MOFASIM_CHECK(events_.size() == pending_ + tombstones_, "event bookkeeping: queued keys != pending + tombstones");
}

}  // namespace mofasim::sim
