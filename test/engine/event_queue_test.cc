// EventQueue: (when, seq) order with FIFO ties, O(1) cancel, bookkeeping, horizon, shuffle-ties.
#include "sim/engine/event_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace mofasim::sim {
namespace {

using namespace std::chrono_literals;

TEST(EventQueue, RunsByTimeThenInsertionOrder) {
  // Inserted as (5,a=0) (3,b=1) (5,c=2) (3,d=3) (4,e=4): time order 3,3,4,5,5 with FIFO ties
  // gives b d e a c.
  EventQueue q;
  std::vector<int> order;
  auto* out = &order;
  q.schedule_at(at_ns(5), [out] { out->push_back(0); });
  q.schedule_at(at_ns(3), [out] { out->push_back(1); });
  q.schedule_at(at_ns(5), [out] { out->push_back(2); });
  q.schedule_at(at_ns(3), [out] { out->push_back(3); });
  q.schedule_at(at_ns(4), [out] { out->push_back(4); });
  q.run();
  EXPECT_EQ(order, (std::vector<int>{1, 3, 4, 0, 2}));
  EXPECT_EQ(q.now(), at_ns(5));
  EXPECT_EQ(q.processed(), 5u);
}

TEST(EventQueue, EventsScheduledAtNowFromAnActionRunAfterExistingTies) {
  // At t=1: A then B are queued. A schedules C at now (t=1): seq(C) > seq(B), so A B C.
  EventQueue q;
  std::vector<int> order;
  struct Ctx {
    EventQueue* q;
    std::vector<int>* out;
  } ctx{&q, &order};
  auto* c = &ctx;
  q.schedule_at(at_ns(1), [c] {
    c->out->push_back(0);
    c->q->schedule_in(0ns, [c] { c->out->push_back(2); });
  });
  q.schedule_at(at_ns(1), [c] { c->out->push_back(1); });
  q.run();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

TEST(EventQueue, CancelledEventNeverFiresAndCancelTwiceIsFalse) {
  EventQueue q;
  int fired = 0;
  auto* f = &fired;
  const EventId a = q.schedule_at(at_ns(10), [f] { *f += 1; });
  const EventId b = q.schedule_at(at_ns(20), [f] { *f += 10; });
  EXPECT_TRUE(q.cancel(a));
  EXPECT_FALSE(q.cancel(a));          // already cancelled
  EXPECT_FALSE(q.cancel(EventId{}));  // refers to nothing
  q.run();
  EXPECT_EQ(fired, 10);               // only b fired
  EXPECT_FALSE(q.cancel(b));          // already fired
  EXPECT_EQ(q.cancelled(), 1u);
  EXPECT_EQ(q.processed(), 1u);
}

TEST(EventQueue, StaleIdDoesNotCancelTheEventReusingItsSlot) {
  // a fires, its slot is reused by b; cancelling a's id must not touch b.
  EventQueue q;
  int fired = 0;
  auto* f = &fired;
  const EventId a = q.schedule_at(at_ns(1), [f] { *f += 1; });
  q.run();
  const EventId b = q.schedule_at(at_ns(2), [f] { *f += 1; });
  EXPECT_EQ(a.slot, b.slot);
  EXPECT_FALSE(q.cancel(a));
  q.run();
  EXPECT_EQ(fired, 2);
}

TEST(EventQueue, BookkeepingScheduledEqualsFiredPlusCancelledPlusPending) {
  // 10 events at t = 0..9 ns; cancel the 3 at t = 7, 8, 9; run to t = 4: 5 fired, 3 cancelled,
  // 2 pending (t = 5, 6).
  EventQueue q;
  std::vector<EventId> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(q.schedule_at(at_ns(i), [] {}));
  for (int i = 7; i < 10; ++i) EXPECT_TRUE(q.cancel(ids[static_cast<std::size_t>(i)]));
  q.run_until(at_ns(4));
  EXPECT_EQ(q.scheduled(), 10u);
  EXPECT_EQ(q.processed(), 5u);
  EXPECT_EQ(q.cancelled(), 3u);
  EXPECT_EQ(q.pending(), 2u);
  EXPECT_EQ(q.now(), at_ns(4));
  EXPECT_EQ(q.next_time(), at_ns(5));
  q.run();
  EXPECT_EQ(q.processed(), 7u);
  EXPECT_EQ(q.pending(), 0u);
  EXPECT_FALSE(q.step());
  EXPECT_EQ(q.next_time(), std::nullopt);
}

TEST(EventQueue, RunUntilAdvancesClockToHorizonAndKeepsLaterEvents) {
  EventQueue q;
  int fired = 0;
  auto* f = &fired;
  q.schedule_at(at_ns(100), [f] { ++*f; });
  q.run_until(at_ns(50));
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(q.now(), at_ns(50));
  q.schedule_in(10ns, [f] { *f += 10; });  // at 60, before the one at 100
  q.run_until(at_ns(100));                 // inclusive horizon
  EXPECT_EQ(fired, 11);
}

TEST(EventQueue, RejectsSchedulingInThePast) {
  EventQueue q;
  q.schedule_at(at_ns(10), [] {});
  q.run();
  EXPECT_THROW(q.schedule_at(at_ns(9), [] {}), std::invalid_argument);
  EXPECT_THROW(q.schedule_in(Duration{-1}, [] {}), std::invalid_argument);
}

std::vector<int> tie_order(std::optional<std::uint64_t> seed) {
  // 8 events at t=1 and 8 at t=2, ids 0..15 in insertion order.
  EventQueue q({.shuffle_ties_seed = seed});
  std::vector<int> order;
  auto* out = &order;
  for (int i = 0; i < 16; ++i) q.schedule_at(at_ns(1 + i / 8), [out, i] { out->push_back(i); });
  q.run();
  return order;
}

TEST(EventQueue, ShuffleTiesPermutesOnlyWithinATimestampAndIsDeterministic) {
  std::vector<int> fifo(16);
  for (int i = 0; i < 16; ++i) fifo[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(tie_order(std::nullopt), fifo);
  int differs = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const std::vector<int> a = tie_order(seed);
    EXPECT_EQ(a, tie_order(seed));  // same seed, same permutation
    for (std::size_t k = 0; k < 16; ++k) {
      EXPECT_EQ(a[k] / 8, static_cast<int>(k / 8)) << "an event left its timestamp";
    }
    if (a != fifo) ++differs;
  }
  // A seed keeps both timestamps in FIFO order with probability (1/8!)^2; 4 seeds never all do.
  EXPECT_GT(differs, 0);
}

}  // namespace
}  // namespace mofasim::sim
