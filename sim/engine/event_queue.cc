// EventQueue implementation: pooled slots + 4-ary min-heap of (when, tie, slot) keys.
#include "sim/engine/event_queue.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "sim/units/check.h"

namespace mofasim::sim {
namespace {

constexpr std::size_t kArity = 4;

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

EventQueue::EventQueue(EventQueueOptions options) : options_(options) { heap_.resize(kPad); }

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
  heap_push(Key{.when = when.time_since_epoch().count(), .order = (tie << kSlotBits) | slot});
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
  drop_cancelled_top();
  if (heap_size() == 0) return false;
  const Key top = heap_at(0);
  heap_pop();
  const std::uint32_t top_slot = slot_of(top);
  Slot& s = slots_[top_slot];
  MOFASIM_DCHECK(s.state == SlotState::kPending, "heap top is not pending");
  Action action = s.action;  // copy out: the action may schedule events and grow slots_
  free_slot(top_slot);
  now_ = Time{Duration{top.when}};
  ++fired_;
  --pending_;
  action();
  return true;
}

void EventQueue::run_until(Time horizon) {
  const std::int64_t h = horizon.time_since_epoch().count();
  for (;;) {
    drop_cancelled_top();
    if (heap_size() == 0 || heap_at(0).when > h) break;
    step();
  }
  if (horizon != kTimeMax && horizon > now_) now_ = horizon;
  check_bookkeeping();
}

void EventQueue::run() { run_until(kTimeMax); }

std::optional<Time> EventQueue::next_time() {
  drop_cancelled_top();
  if (heap_size() == 0) return std::nullopt;
  return Time{Duration{heap_at(0).when}};
}

void EventQueue::drop_cancelled_top() {
  while (heap_size() > 0 && slots_[slot_of(heap_at(0))].state == SlotState::kCancelled) {
    const std::uint32_t slot = slot_of(heap_at(0));
    heap_pop();
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
  MOFASIM_CHECK(heap_size() == pending_ + tombstones_, "event bookkeeping: heap size != pending + tombstones");
}

void EventQueue::heap_push(Key key) {
  std::size_t i = heap_size();
  heap_.push_back(key);
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!before(key, heap_at(parent))) break;
    heap_at(i) = heap_at(parent);
    i = parent;
  }
  heap_at(i) = key;
}

void EventQueue::heap_pop() {
  const Key last = heap_.back();
  heap_.pop_back();
  if (heap_size() > 0) sift_down_from_root(last);
}

void EventQueue::sift_down_from_root(Key key) {
  const std::size_t n = heap_size();
  Key* const h = heap_.data() + kPad;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + kArity < n ? first + kArity : n;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (before(h[c], h[best])) best = c;
    }
    if (!before(h[best], key)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = key;
}

}  // namespace mofasim::sim
