// FluidModel interferences: a communication kernel's alpha in a domain without an activity (a
// collective's other members). Work in seconds of exclusive use: every resource has capacity 1.
#include <gtest/gtest.h>

#include <array>
#include <stdexcept>

#include "sim/engine/event_queue.h"
#include "sim/engine/fluid_model.h"
#include "test/engine/fluid_test_util.h"

namespace mofasim::sim {
namespace {

using testing::FinishLog;

constexpr Duration kMs{1'000'000};

// One GPU's domain with a compute and a communication engine, each of capacity 1.
struct OneGpu {
  EventQueue q;
  FluidModel m{q};
  DomainId gpu = m.add_domain("gpu0");
  std::array<ResourceUse, 1> compute{ResourceUse{.resource = m.add_resource({.name = "gpu0.compute", .capacity = 1})}};
  std::array<ResourceUse, 1> comm{ResourceUse{.resource = m.add_resource({.name = "gpu0.comm", .capacity = 1})}};
};

TEST(Interference, SlowsComputeByAlphaAfterItsLatencyUntilItEnds) {
  // Compute 10 ms; an interference of alpha 2 with 1 ms latency starts at 0 and ends at 5 ms.
  // 0-1 ms full speed (1 ms of work), 1-5 ms at 1/2 (2 ms), the last 7 ms at full speed: 12 ms.
  OneGpu g;
  auto& [q, m, gpu, compute, comm] = g;
  FinishLog log(1);
  m.start({.work = 0.010, .uses = compute, .domain = gpu}, log.on_done(q, 0));
  const InterferenceId i = m.start_interference(gpu, 2.0, kMs);
  q.schedule_in(5 * kMs, [&] { EXPECT_TRUE(m.end_interference(i)); });
  q.run();
  EXPECT_EQ(log.at[0], 12'000'000);
  EXPECT_FALSE(m.end_interference(i));  // already ended
}

TEST(Interference, TheLargestAlphaOfActivitiesAndInterferencesSlowsCompute) {
  // Compute 10 ms, a communication (alpha 1.2, beta 1, 4 ms on its own engine) and an
  // interference of alpha 2 ended at 2 ms. 0-2 ms at 1/2 (1 ms of work), 2-4 ms at 1/1.2
  // (1.6667 ms), then 7.3333 ms alone: 11.333333 ms.
  OneGpu g;
  auto& [q, m, gpu, compute, comm] = g;
  FinishLog log(2);
  m.start({.work = 0.010, .uses = compute, .domain = gpu}, log.on_done(q, 0));
  m.start({.work = 0.004, .uses = comm, .kind = ActivityKind::kCommunication, .domain = gpu,
           .coefficients = {.alpha = 1.2, .beta = 1.0}},
          log.on_done(q, 1));
  const InterferenceId i = m.start_interference(gpu, 2.0, Duration::zero());
  q.schedule_in(2 * kMs, [&] { m.end_interference(i); });
  q.run();
  EXPECT_EQ(log.at[1], 4'000'000);
  EXPECT_EQ(log.at[0], 11'333'333);
}

TEST(Interference, EndedInItsLatencyNeverSlowsAnything) {
  // Ended at 1 ms, before its 2 ms latency is over: compute 10 ms ends at 10 ms.
  OneGpu g;
  auto& [q, m, gpu, compute, comm] = g;
  FinishLog log(1);
  m.start({.work = 0.010, .uses = compute, .domain = gpu}, log.on_done(q, 0));
  const InterferenceId i = m.start_interference(gpu, 3.0, 2 * kMs);
  q.schedule_in(kMs, [&] { EXPECT_TRUE(m.end_interference(i)); });
  q.run();
  EXPECT_EQ(log.at[0], 10'000'000);
}

// The same step with the interference as an endless communication activity with no resource:
// the times and the number of fired events are identical (what the replay's byte-identical
// outputs rest on).
struct Step : OneGpu {
  FinishLog log{3};
  bool as_activity = false;

  // At 3 ms: a second compute, and the interference (alpha 2.5, 1 ms latency) for 4 ms.
  void at_3ms() {
    m.start({.work = 0.002, .uses = compute, .domain = gpu}, log.on_done(q, 2));
    if (as_activity) {
      const ActivityId a = m.start({.work = 1e6, .kind = ActivityKind::kCommunication, .domain = gpu,
                                    .coefficients = {.alpha = 2.5, .beta = 1.0}, .rate_bound = 1.0, .latency = kMs},
                                   [] {});
      q.schedule_in(4 * kMs, [this, a] { m.cancel(a); });
    } else {
      const InterferenceId i = m.start_interference(gpu, 2.5, kMs);
      q.schedule_in(4 * kMs, [this, i] { m.end_interference(i); });
    }
  }
};

std::array<std::int64_t, 3> run_with(bool as_activity, std::uint64_t& events) {
  Step s;
  s.as_activity = as_activity;
  s.m.start({.work = 0.010, .uses = s.compute, .domain = s.gpu}, s.log.on_done(s.q, 0));
  s.m.start({.work = 0.004, .uses = s.comm, .kind = ActivityKind::kCommunication, .domain = s.gpu,
             .coefficients = {.alpha = 1.5, .beta = 1.3}, .latency = kMs},
            s.log.on_done(s.q, 1));
  s.q.schedule_in(3 * kMs, [p = &s] { p->at_3ms(); });
  s.q.run();
  events = s.q.processed();
  return {s.log.at[0], s.log.at[1], s.log.at[2]};
}

TEST(Interference, ActsAsAnEndlessCommunicationActivityWithNoResource) {
  std::uint64_t events_activity = 0;
  std::uint64_t events_interference = 0;
  const auto with_activity = run_with(true, events_activity);
  const auto with_interference = run_with(false, events_interference);
  EXPECT_EQ(with_interference, with_activity);
  EXPECT_EQ(events_interference, events_activity);
  EXPECT_GT(with_interference[0], 10'000'000);  // it did slow the first compute
}

TEST(Interference, BadArgumentsAreRefused) {
  EventQueue q;
  FluidModel m(q);
  const DomainId gpu = m.add_domain("gpu0");
  EXPECT_THROW(m.start_interference(gpu, 0.5, Duration::zero()), std::invalid_argument);
  EXPECT_THROW(m.start_interference(DomainId{7}, 2.0, Duration::zero()), std::invalid_argument);
  EXPECT_THROW(m.start_interference(gpu, 2.0, -kMs), std::invalid_argument);
  EXPECT_FALSE(m.end_interference(InterferenceId{.slot = 3, .seq = 1}));
}

}  // namespace
}  // namespace mofasim::sim
