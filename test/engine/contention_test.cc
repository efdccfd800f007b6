// MoFa contention coefficients in the fluid model: while a domain runs compute and communication
// together, compute progresses at share/alpha_max and each communication at share/beta.
// Work is measured in seconds of exclusive use: every resource has capacity 1 (unit/s).
#include "sim/engine/fluid_model.h"

#include <gtest/gtest.h>

#include <array>

#include "sim/engine/event_queue.h"
#include "test/engine/fluid_test_util.h"

namespace mofasim::sim {
namespace {

using testing::FinishLog;

struct Gpu {
  explicit Gpu(FluidModel& m)
      : domain(m.add_domain("gpu0")),
        compute{ResourceUse{.resource = m.add_resource({.name = "gpu0.compute", .capacity = 1})}},
        comm{ResourceUse{.resource = m.add_resource({.name = "gpu0.comm", .capacity = 1})}},
        copy{ResourceUse{.resource = m.add_resource({.name = "gpu0.h2d", .capacity = 1})}} {}
  DomainId domain;
  std::array<ResourceUse, 1> compute, comm, copy;
};

TEST(Contention, ComputeAndCommOverlapWithAlphaAndBeta) {
  // compute 10 ms of work, comm 4 ms, alpha = 1.2, beta = 1.5, both start at 0 on one GPU.
  // Overlapped: compute at 1/1.2, comm at 1/1.5. Comm ends at 4 * 1.5 = 6 ms; by then compute did
  // 6 / 1.2 = 5 ms of work, and the remaining 5 ms run alone at full speed: ends at 11 ms.
  // (MoFa's closed form for full overlap, max(alpha*10, beta*4) = 12 ms, assumes the pair stays
  // overlapped to the end; the fluid model releases the slowdown once comm ends.)
  EventQueue q;
  FluidModel m(q);
  const Gpu g(m);
  FinishLog log(2);
  m.start({.work = 0.010, .uses = g.compute, .kind = ActivityKind::kCompute, .domain = g.domain}, log.on_done(q, 0));
  m.start({.work = 0.004, .uses = g.comm, .kind = ActivityKind::kCommunication, .domain = g.domain,
           .coefficients = {.alpha = 1.2, .beta = 1.5}},
          log.on_done(q, 1));
  q.run();
  EXPECT_EQ(log.at[1], 6'000'000);
  EXPECT_EQ(log.at[0], 11'000'000);
}

TEST(Contention, UnitCoefficientsMakeOverlapFree) {
  // alpha = beta = 1: compute ends at 10 ms and comm at 4 ms, as if each ran alone.
  EventQueue q;
  FluidModel m(q);
  const Gpu g(m);
  FinishLog log(2);
  m.start({.work = 0.010, .uses = g.compute, .kind = ActivityKind::kCompute, .domain = g.domain}, log.on_done(q, 0));
  m.start({.work = 0.004, .uses = g.comm, .kind = ActivityKind::kCommunication, .domain = g.domain}, log.on_done(q, 1));
  q.run();
  EXPECT_EQ(log.at[0], 10'000'000);
  EXPECT_EQ(log.at[1], 4'000'000);
}

TEST(Contention, NoSlowdownAcrossDomainsOrWithoutADomain) {
  // Compute on gpu0, comm (alpha 2, beta 2) on gpu1, and a second comm with no domain on gpu0's
  // comm engine: none overlaps inside one domain, so compute ends at 10 ms, comms at 4 ms.
  EventQueue q;
  FluidModel m(q);
  const Gpu g0(m);
  const Gpu g1(m);
  FinishLog log(3);
  m.start({.work = 0.010, .uses = g0.compute, .kind = ActivityKind::kCompute, .domain = g0.domain}, log.on_done(q, 0));
  m.start({.work = 0.004, .uses = g1.comm, .kind = ActivityKind::kCommunication, .domain = g1.domain,
           .coefficients = {.alpha = 2, .beta = 2}},
          log.on_done(q, 1));
  m.start({.work = 0.004, .uses = g0.comm, .kind = ActivityKind::kCommunication, .coefficients = {.alpha = 2, .beta = 2}},
          log.on_done(q, 2));
  q.run();
  EXPECT_EQ(log.at[0], 10'000'000);
  EXPECT_EQ(log.at[1], 4'000'000);
  EXPECT_EQ(log.at[2], 4'000'000);
}

TEST(Contention, ComputeUsesTheLargestAlphaOfRunningComms) {
  // compute 10 ms; comm1 (alpha 1.2, beta 1.5) 4 ms on the comm engine; comm2 (alpha 2, beta 1)
  // 2 ms on the H2D engine.
  // [0, 2 ms]: alpha_max = 2: compute at 1/2 does 1 ms; comm1 at 1/1.5 does 4/3 ms; comm2 at 1 ends.
  // Then alpha_max = 1.2: comm1 has 8/3 ms left at 1/1.5: 4 ms more, ends at 6 ms; compute does
  // 4/1.2 = 10/3 ms, total 13/3 ms. Alone afterwards: 17/3 ms more: ends at 6 + 17/3 = 11.6667 ms.
  EventQueue q;
  FluidModel m(q);
  const Gpu g(m);
  FinishLog log(3);
  m.start({.work = 0.010, .uses = g.compute, .kind = ActivityKind::kCompute, .domain = g.domain}, log.on_done(q, 0));
  m.start({.work = 0.004, .uses = g.comm, .kind = ActivityKind::kCommunication, .domain = g.domain,
           .coefficients = {.alpha = 1.2, .beta = 1.5}},
          log.on_done(q, 1));
  m.start({.work = 0.002, .uses = g.copy, .kind = ActivityKind::kCommunication, .domain = g.domain,
           .coefficients = {.alpha = 2.0, .beta = 1.0}},
          log.on_done(q, 2));
  q.run();
  EXPECT_EQ(log.at[2], 2'000'000);
  EXPECT_EQ(log.at[1], 6'000'000);
  EXPECT_NEAR(static_cast<double>(log.at[0]), 6e6 + 17e6 / 3, 1.0);  // within the 1 ns rounding
}

TEST(Contention, CommOnlyOverlapIsNotSlowed) {
  // Two comms in one domain with no compute: coefficients do not apply; each alone on its engine
  // ends at its work: 4 ms and 2 ms.
  EventQueue q;
  FluidModel m(q);
  const Gpu g(m);
  FinishLog log(2);
  m.start({.work = 0.004, .uses = g.comm, .kind = ActivityKind::kCommunication, .domain = g.domain,
           .coefficients = {.alpha = 3, .beta = 3}},
          log.on_done(q, 0));
  m.start({.work = 0.002, .uses = g.copy, .kind = ActivityKind::kCommunication, .domain = g.domain,
           .coefficients = {.alpha = 3, .beta = 3}},
          log.on_done(q, 1));
  q.run();
  EXPECT_EQ(log.at[0], 4'000'000);
  EXPECT_EQ(log.at[1], 2'000'000);
}

TEST(Contention, SlowedCommKeepsItsLinkShare) {
  // A link of capacity 1 carries comm A (gpu0, beta 2, 4 ms of work) and flow F (no domain, 4 ms).
  // gpu0 also computes 100 ms (alpha 1). Max-min gives each 1/2; A is slowed to 1/4 and the
  // unused 1/4 is NOT handed to F (documented rule). F ends at 4 / (1/2) = 8 ms, having let A do
  // 2 ms of work; then A gets the whole link, slowed by beta: 2 / (1/2) = 4 ms more: 12 ms.
  EventQueue q;
  FluidModel m(q);
  const Gpu g(m);
  const std::array link{ResourceUse{.resource = m.add_resource({.name = "link", .capacity = 1})}};
  FinishLog log(2);
  m.start({.work = 0.100, .uses = g.compute, .kind = ActivityKind::kCompute, .domain = g.domain}, [] {});
  m.start({.work = 0.004, .uses = link, .kind = ActivityKind::kCommunication, .domain = g.domain,
           .coefficients = {.alpha = 1, .beta = 2}},
          log.on_done(q, 0));
  m.start({.work = 0.004, .uses = link, .kind = ActivityKind::kCommunication}, log.on_done(q, 1));
  q.run_until(at_ns(12'000'000));
  EXPECT_EQ(log.at[1], 8'000'000);
  EXPECT_EQ(log.at[0], 12'000'000);
}

// Starts `first` (logged as label 1); its completion starts `then` (label 2) in the same instant.
struct Chain {
  FluidModel* m;
  FinishLog* log;
  ActivitySpec first;
  ActivitySpec then;
  void start() {
    m->start(first, [c = this] {
      c->log->on_done(c->m->queue(), 1)();
      c->m->start(c->then, c->log->on_done(c->m->queue(), 2));
    });
  }
};

TEST(Contention, ComputeChainedOnAnOverlappedDomainKeepsTheSlowdown) {
  // comm 100 ms of work (alpha = 2, beta = 1) runs throughout. Compute c1 (10 ms of work) runs at
  // 1/2 and ends at 20 ms; its completion starts c2 (10 ms) at the same instant: the domain is
  // overlapped again, so c2 also runs at 1/2 and ends at 40 ms. Between the two the domain drops
  // out of overlap and back within one nanosecond, which must leave the comm untouched: beta = 1,
  // so it ends at 100 ms.
  EventQueue q;
  FluidModel m(q);
  const Gpu g(m);
  FinishLog log(3);
  m.start({.work = 0.100, .uses = g.comm, .kind = ActivityKind::kCommunication, .domain = g.domain,
           .coefficients = {.alpha = 2.0, .beta = 1.0}},
          log.on_done(q, 0));
  const ActivitySpec compute{.work = 0.010, .uses = g.compute, .kind = ActivityKind::kCompute, .domain = g.domain};
  Chain chain{.m = &m, .log = &log, .first = compute, .then = compute};
  chain.start();
  q.run();
  EXPECT_EQ(log.at[1], 20'000'000);
  EXPECT_EQ(log.at[2], 40'000'000);
  EXPECT_EQ(log.at[0], 100'000'000);
}

TEST(Contention, CommLeavingAndAnotherJoiningInOneInstantAppliesTheNewAlpha) {
  // Compute 30 ms of work. comm a (alpha 1.5, 6 ms of work, beta 1) overlaps from 0: compute runs
  // at 1/1.5 and has done 4 ms of work when a ends at 6 ms. a's completion starts comm b (alpha 3,
  // 10 ms, beta 1): compute now runs at 1/3 until b ends at 16 ms (10/3 ms more work, 22/3 ms done),
  // then alone: 30 - 22/3 = 68/3 ms more, ending at 16 + 68/3 = 38.667 ms.
  EventQueue q;
  FluidModel m(q);
  const Gpu g(m);
  FinishLog log(3);
  m.start({.work = 0.030, .uses = g.compute, .kind = ActivityKind::kCompute, .domain = g.domain}, log.on_done(q, 0));
  Chain chain{.m = &m,
              .log = &log,
              .first = {.work = 0.006, .uses = g.comm, .kind = ActivityKind::kCommunication, .domain = g.domain,
                        .coefficients = {.alpha = 1.5, .beta = 1.0}},
              .then = {.work = 0.010, .uses = g.comm, .kind = ActivityKind::kCommunication, .domain = g.domain,
                       .coefficients = {.alpha = 3.0, .beta = 1.0}}};
  chain.start();
  q.run();
  EXPECT_EQ(log.at[1], 6'000'000);
  EXPECT_EQ(log.at[2], 16'000'000);
  EXPECT_NEAR(static_cast<double>(log.at[0]), 38'666'667.0, 1.0);
}

}  // namespace
}  // namespace mofasim::sim
