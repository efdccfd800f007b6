// FluidModel without contention: fair sharing of one link, a late joiner, classic max-min with
// 3 flows on 2 links, weights, rate bounds, latency, cancel and input validation.
#include "sim/engine/fluid_model.h"

#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <stdexcept>

#include "sim/engine/event_queue.h"
#include "test/engine/fluid_test_util.h"

namespace mofasim::sim {
namespace {

using testing::FinishLog;

constexpr double kS = 1e9;   // bytes
constexpr double kB = 1e11;  // bytes/s; S/B = 10 ms

TEST(FluidModel, OneFlowGetsTheWholeLink) {
  // S / B = 1e9 / 1e11 = 10 ms.
  EventQueue q;
  FluidModel m(q);
  const ResourceId link = m.add_resource({.name = "l0", .capacity = kB});
  const std::array uses{ResourceUse{.resource = link}};
  FinishLog log(1);
  m.start({.work = kS, .uses = uses}, log.on_done(q, 0));
  q.run();
  EXPECT_EQ(log.at[0], 10'000'000);
}

TEST(FluidModel, TwoFlowsOnOneLinkEachFinishAtTwoSOverB) {
  // Each gets B/2 for its S bytes: 2 S / B = 20 ms.
  EventQueue q;
  FluidModel m(q);
  const ResourceId link = m.add_resource({.name = "l0", .capacity = kB});
  const std::array uses{ResourceUse{.resource = link}};
  FinishLog log(2);
  const ActivityId a = m.start({.work = kS, .uses = uses}, log.on_done(q, 0));
  m.start({.work = kS, .uses = uses}, log.on_done(q, 1));
  q.run_until(kTimeZero);
  EXPECT_DOUBLE_EQ(m.rate(a), kB / 2);
  EXPECT_EQ(m.expected_completion(a), at_ns(20'000'000));
  q.run();
  EXPECT_EQ(log.at[0], 20'000'000);
  EXPECT_EQ(log.at[1], 20'000'000);
  EXPECT_EQ(m.completed(), 2u);
  EXPECT_EQ(m.running(), 0u);
}

TEST(FluidModel, FlowJoiningHalfWay) {
  // Flow 1 alone at B until t0 = S/(2B) = 5 ms: it has S/2 left. Then both at B/2:
  // flow 1 ends at t0 + (S/2)/(B/2) = 5 + 10 = 15 ms; flow 2 has moved S/2 by then and finishes its
  // last S/2 alone at B: 15 + 5 = 20 ms.
  EventQueue q;
  FluidModel m(q);
  const ResourceId link = m.add_resource({.name = "l0", .capacity = kB});
  const std::array uses{ResourceUse{.resource = link}};
  FinishLog log(2);
  const ActivityId one = m.start({.work = kS, .uses = uses}, log.on_done(q, 0));
  struct Ctx {
    FluidModel* m;
    FinishLog* log;
    const std::array<ResourceUse, 1>* uses;
  } ctx{&m, &log, &uses};
  auto* c = &ctx;
  q.schedule_at(at_ns(5'000'000), [c] {
    c->m->start({.work = kS, .uses = *c->uses}, c->log->on_done(c->m->queue(), 1));
  });
  q.run_until(at_ns(5'000'000));
  EXPECT_NEAR(m.remaining(one), kS / 2, 1.0);  // S - B * 5 ms
  EXPECT_DOUBLE_EQ(m.rate(one), kB / 2);       // the joiner has been solved in at 5 ms
  q.run();
  EXPECT_EQ(log.at[0], 15'000'000);
  EXPECT_EQ(log.at[1], 20'000'000);
}

TEST(FluidModel, ThreeFlowsOnTwoLinksMaxMin) {
  // L1 capacity 10, L2 capacity 4. Flow A uses L1 and L2, B uses L1, C uses L2.
  // Water-filling: L2 saturates first at level 4/2 = 2 (L1 would allow 10/2 = 5): A = C = 2.
  // L1 has 10 - 2 = 8 left for B alone: B = 8.
  // Works A = 4, B = 40, C = 8: A ends at 4/2 = 2 s. Then B (24 left) alone on L1 at 10 ends at
  // 2 + 2.4 = 4.4 s; C (4 left) alone on L2 at 4 ends at 2 + 1 = 3 s.
  EventQueue q;
  FluidModel m(q);
  const ResourceId l1 = m.add_resource({.name = "L1", .capacity = 10});
  const ResourceId l2 = m.add_resource({.name = "L2", .capacity = 4});
  const std::array uses_a{ResourceUse{.resource = l1}, ResourceUse{.resource = l2}};
  const std::array uses_b{ResourceUse{.resource = l1}};
  const std::array uses_c{ResourceUse{.resource = l2}};
  FinishLog log(3);
  const ActivityId a = m.start({.work = 4, .uses = uses_a}, log.on_done(q, 0));
  const ActivityId b = m.start({.work = 40, .uses = uses_b}, log.on_done(q, 1));
  const ActivityId c = m.start({.work = 8, .uses = uses_c}, log.on_done(q, 2));
  q.run_until(kTimeZero);
  EXPECT_DOUBLE_EQ(m.rate(a), 2.0);
  EXPECT_DOUBLE_EQ(m.rate(b), 8.0);
  EXPECT_DOUBLE_EQ(m.rate(c), 2.0);
  q.run_until(at_ns(2'500'000'000));
  EXPECT_DOUBLE_EQ(m.rate(b), 10.0);
  EXPECT_NEAR(m.remaining(b), 24.0 - 10.0 * 0.5, 1e-9);
  q.run();
  EXPECT_EQ(log.at[0], 2'000'000'000);
  EXPECT_EQ(log.at[1], 4'400'000'000);
  EXPECT_EQ(log.at[2], 3'000'000'000);
}

TEST(FluidModel, WeightAndRateBound) {
  // Link of capacity 10. X uses it with weight 2, Y with weight 1 and bound 1.
  // Y reaches its bound 1 first (X alone could reach 10/3 with both growing equally: level
  // 10/(2+1) = 3.33 > 1). Y = 1 uses 1 unit; X gets (10 - 1) / 2 = 4.5.
  EventQueue q;
  FluidModel m(q);
  const ResourceId link = m.add_resource({.name = "l", .capacity = 10});
  const std::array ux{ResourceUse{.resource = link, .weight = 2}};
  const std::array uy{ResourceUse{.resource = link, .weight = 1}};
  const ActivityId x = m.start({.work = 100, .uses = ux}, [] {});
  const ActivityId y = m.start({.work = 100, .uses = uy, .rate_bound = 1.0}, [] {});
  q.run_until(kTimeZero);
  EXPECT_DOUBLE_EQ(m.rate(x), 4.5);
  EXPECT_DOUBLE_EQ(m.rate(y), 1.0);
}

TEST(FluidModel, BoundOnlyActivityAndLatency) {
  // A rate-bound-only activity of 3 units at 2 units/s with 1 ms latency ends at 1 ms + 1.5 s.
  // A zero-work activity with 7 us latency is a timer: ends at 7 us.
  EventQueue q;
  FluidModel m(q);
  FinishLog log(2);
  const ActivityId a = m.start({.work = 3, .rate_bound = 2.0, .latency = std::chrono::milliseconds(1)}, log.on_done(q, 0));
  m.start({.work = 0, .latency = std::chrono::microseconds(7)}, log.on_done(q, 1));
  EXPECT_EQ(m.rate(a), 0.0);         // still in its latency phase
  EXPECT_EQ(m.remaining(a), 3.0);
  q.run();
  EXPECT_EQ(log.at[0], 1'000'000 + 1'500'000'000);
  EXPECT_EQ(log.at[1], 7'000);
}

TEST(FluidModel, CancelFreesCapacityAndSkipsTheCallback) {
  // Two S flows share B. At 5 ms flow 2 is cancelled: flow 1 has moved S/4 (B/2 for 5 ms) and
  // finishes its 3S/4 alone at B: 5 + 7.5 = 12.5 ms. Flow 2's callback never runs.
  EventQueue q;
  FluidModel m(q);
  const ResourceId link = m.add_resource({.name = "l0", .capacity = kB});
  const std::array uses{ResourceUse{.resource = link}};
  FinishLog log(2);
  m.start({.work = kS, .uses = uses}, log.on_done(q, 0));
  const ActivityId two = m.start({.work = kS, .uses = uses}, log.on_done(q, 1));
  struct Ctx {
    FluidModel* m;
    ActivityId id;
  } ctx{&m, two};
  auto* c = &ctx;
  q.schedule_at(at_ns(5'000'000), [c] { EXPECT_TRUE(c->m->cancel(c->id)); });
  q.run();
  EXPECT_EQ(log.at[0], 12'500'000);
  EXPECT_EQ(log.at[1], -1);
  EXPECT_FALSE(m.cancel(two));
}

TEST(FluidModel, RejectsBadInputWithInvalidArgument) {
  EventQueue q;
  FluidModel m(q);
  EXPECT_THROW(m.add_resource({.name = "zero", .capacity = 0}), std::invalid_argument);
  const ResourceId link = m.add_resource({.name = "l", .capacity = 1});
  const std::array zero_weight{ResourceUse{.resource = link, .weight = 0}};
  const std::array unknown{ResourceUse{.resource = ResourceId{7}}};
  const std::array ok{ResourceUse{.resource = link}};
  EXPECT_THROW(m.start({.work = 1, .uses = zero_weight}, [] {}), std::invalid_argument);
  EXPECT_THROW(m.start({.work = 1, .uses = unknown}, [] {}), std::invalid_argument);
  EXPECT_THROW(m.start({.work = 1}, [] {}), std::invalid_argument);  // no resource, no bound
  EXPECT_THROW(m.start({.work = -1, .uses = ok}, [] {}), std::invalid_argument);
  EXPECT_THROW(m.start({.work = 1, .uses = ok, .rate_bound = 0.0}, [] {}), std::invalid_argument);
  EXPECT_THROW(m.start({.work = 1, .uses = ok, .kind = ActivityKind::kCommunication, .coefficients = {.alpha = 0.5}}, [] {}),
               std::invalid_argument);
  EXPECT_THROW(m.start({.work = 1, .uses = ok, .domain = DomainId{3}}, [] {}), std::invalid_argument);
  EXPECT_EQ(m.running(), 0u);
}

// Work or durations the clock cannot hold are the input's fault (SimulationOutOfRange, exit 2 in
// the CLI), never an internal check: the schema's bounds keep real scenarios away from them.
TEST(FluidModel, WorkOrTimeOutsideTheClockIsOutOfRange) {
  EventQueue q;
  FluidModel m(q);
  const ResourceId link = m.add_resource({.name = "l0", .capacity = kB});
  const std::array uses{ResourceUse{.resource = link}};
  FinishLog log(2);
  EXPECT_THROW(m.start({.work = std::numeric_limits<double>::infinity(), .uses = uses}, log.on_done(q, 0)),
               SimulationOutOfRange);
  // 1e21 bytes at 1e11 B/s = 1e10 s, past the 2^63 ns (about 9.22e9 s) the clock holds.
  EXPECT_THROW(
      {
        m.start({.work = 1e21, .uses = uses}, log.on_done(q, 1));
        q.run();
      },
      SimulationOutOfRange);
}

}  // namespace
}  // namespace mofasim::sim
