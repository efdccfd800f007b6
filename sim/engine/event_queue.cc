// EventQueue implementation: pooled slots + 4-ary min-heap of (when, tie, slot) keys.
#include "sim/engine/event_queue.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "sim/units/check.h"

namespace mofasim::sim {
namespace {

constexpr std::size_t kArity = 4;

// SplitMix64 finaliser: a bijection on 64-bit integers, so shuffled ties stay unique.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

EventQueue::EventQueue(EventQueueOptions options) : options_(options) {}

EventId EventQueue::schedule_at(Time when, Action action) {
  if (when < now_) {
    throw std::invalid_argument("EventQueue::schedule_at: time " + std::to_string(when.time_since_epoch().count()) +
                                " ns is before now " + std::to_string(now_.time_since_epoch().count()) + " ns");
  }
  std::uint32_t slot = free_head_;
  if (slot != kInvalidIndex) {
    free_head_ = slots_[slot].next_free;
  } else {
    MOFASIM_CHECK(slots_.size() < kInvalidIndex, "too many pending events");
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const std::uint64_t seq = next_seq_++;
  Slot& s = slots_[slot];
  s.action = action;
  s.seq = seq;
  s.state = SlotState::kPending;
  const std::uint64_t tie = options_.shuffle_ties_seed ? mix64(seq ^ *options_.shuffle_ties_seed) : seq;
  heap_push(Key{.when = when.time_since_epoch().count(), .tie = tie, .slot = slot});
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
  if (heap_.empty()) return false;
  const Key top = heap_.front();
  hole_ = true;  // heap_[0] is now free for the first event the action schedules
  Slot& s = slots_[top.slot];
  MOFASIM_DCHECK(s.state == SlotState::kPending, "heap top is not pending");
  Action action = s.action;  // copy out: the action may schedule events and grow slots_
  free_slot(top.slot);
  now_ = Time{Duration{top.when}};
  ++fired_;
  --pending_;
  action();
  settle();
  return true;
}

void EventQueue::run_until(Time horizon) {
  const std::int64_t h = horizon.time_since_epoch().count();
  for (;;) {
    drop_cancelled_top();
    if (heap_.empty() || heap_.front().when > h) break;
    step();
  }
  if (horizon != kTimeMax && horizon > now_) now_ = horizon;
  check_bookkeeping();
}

void EventQueue::run() { run_until(kTimeMax); }

std::optional<Time> EventQueue::next_time() {
  drop_cancelled_top();
  if (heap_.empty()) return std::nullopt;
  return Time{Duration{heap_.front().when}};
}

void EventQueue::settle() {
  if (!hole_) return;
  hole_ = false;
  heap_pop();
}

void EventQueue::drop_cancelled_top() {
  settle();
  while (!heap_.empty() && slots_[heap_.front().slot].state == SlotState::kCancelled) {
    const std::uint32_t slot = heap_.front().slot;
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
  MOFASIM_CHECK(!hole_, "event bookkeeping: heap left with a vacated root");
  MOFASIM_CHECK(scheduled_ == fired_ + cancelled_ + pending_, "event bookkeeping: scheduled != fired + cancelled + pending");
  MOFASIM_CHECK(heap_.size() == pending_ + tombstones_, "event bookkeeping: heap size != pending + tombstones");
}

void EventQueue::heap_push(Key key) {
  if (hole_) {
    hole_ = false;
    sift_down_from_root(key);
    return;
  }
  std::size_t i = heap_.size();
  heap_.push_back(key);
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!before(key, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = key;
}

void EventQueue::heap_pop() {
  const Key last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down_from_root(last);
}

void EventQueue::sift_down_from_root(Key key) {
  const std::size_t n = heap_.size();
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + kArity < n ? first + kArity : n;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], key)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = key;
}

}  // namespace mofasim::sim
