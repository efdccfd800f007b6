// FluidModel load recording (the link counters of `simulate --trace`): the history of a watched
// resource's load, Σ weight × rate over its running activities, against hand-worked max-min cases.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/fluid_model.h"

namespace mofasim::sim {
namespace {

using Samples = std::vector<std::pair<std::int64_t, double>>;

Samples samples(const FluidModel& m, ResourceId r) {
  const FluidModel::LoadHistory& h = m.load_history(r);
  Samples out;
  for (std::size_t i = 0; i < h.t_ns.size(); ++i) out.emplace_back(h.t_ns[i], h.load[i]);
  return out;
}

TEST(FluidLoadHistory, TwoFlowsSharingALinkGetHalfEachAndTheOtherLinkShowsHalf) {
  // L1 and L2 carry 100 B/s each. Flow A (100 B) crosses L1 and L2, flow B (300 B) only L2.
  // Max-min: L2 is the bottleneck, 50 B/s each; L1 carries A alone at 50 B/s, half its capacity.
  // A ends at 100 / 50 = 2 s; B then has 300 - 100 = 200 B left, alone on L2 at 100 B/s: ends at 4 s.
  EventQueue q;
  FluidModel m(q);
  const ResourceId l1 = m.add_resource({.name = "l1", .capacity = 100});
  const ResourceId l2 = m.add_resource({.name = "l2", .capacity = 100});
  const ResourceId unwatched = m.add_resource({.name = "l3", .capacity = 100});
  m.watch_load(l1);
  m.watch_load(l2);
  const std::array both{ResourceUse{.resource = l1}, ResourceUse{.resource = l2}};
  const std::array only_l2{ResourceUse{.resource = l2}, ResourceUse{.resource = unwatched}};
  m.start({.work = 100, .uses = both}, [] {});
  m.start({.work = 300, .uses = only_l2}, [] {});
  q.run();
  EXPECT_EQ(samples(m, l1), (Samples{{0, 50}, {2'000'000'000, 0}}));
  // 50 + 50 until A ends, then B alone at 100: the same load, so no new sample until 4 s.
  EXPECT_EQ(samples(m, l2), (Samples{{0, 100}, {4'000'000'000, 0}}));
  EXPECT_TRUE(m.load_history(unwatched).t_ns.empty());
}

TEST(FluidLoadHistory, WeightsCountInTheLoadOfAJoinedLink) {
  // One 100 B/s link. Flow A (weight 2, 100 units) starts alone: 50 units/s, load 2 × 50 = 100.
  // At 1 s (A has 50 units left) flow B (weight 1, 25 units) joins: max-min gives equal rates r with
  // 2r + r = 100, r = 100/3 each; load stays 100. B ends at 1 + 25 / (100/3) = 1.75 s; A has
  // 50 - 0.75 × 100/3 = 25 units left, alone again at 50 units/s: ends at 2.25 s.
  EventQueue q;
  FluidModel m(q);
  const ResourceId link = m.add_resource({.name = "l", .capacity = 100});
  m.watch_load(link);
  const std::array heavy{ResourceUse{.resource = link, .weight = 2}};
  const std::array light{ResourceUse{.resource = link}};
  m.start({.work = 100, .uses = heavy}, [] {});
  q.schedule_at(Time{std::chrono::seconds(1)}, [&] { m.start({.work = 25, .uses = light}, [] {}); });
  q.run();
  const Samples s = samples(m, link);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], (std::pair<std::int64_t, double>{0, 100}));
  EXPECT_EQ(s[1].first, 2'250'000'000);
  EXPECT_EQ(s[1].second, 0);
}

TEST(FluidLoadHistory, ContentionSlowsTheRecordedLoad) {
  // A communication activity with beta = 2 alone on a 100 B/s link runs at 50 B/s while a compute
  // activity of its domain runs (1 s of work on a capacity-1 compute resource), then at 100 B/s.
  // 150 B: 50 B in the first second, the last 100 B at 100 B/s, ending at 2 s.
  EventQueue q;
  FluidModel m(q);
  const ResourceId link = m.add_resource({.name = "l", .capacity = 100});
  const ResourceId gpu = m.add_resource({.name = "gpu", .capacity = 1});
  const DomainId d = m.add_domain("gpu0");
  m.watch_load(link);
  const std::array on_link{ResourceUse{.resource = link}};
  const std::array on_gpu{ResourceUse{.resource = gpu}};
  m.start({.work = 150, .uses = on_link, .kind = ActivityKind::kCommunication, .domain = d,
           .coefficients = {.alpha = 1, .beta = 2}},
          [] {});
  m.start({.work = 1, .uses = on_gpu, .kind = ActivityKind::kCompute, .domain = d}, [] {});
  q.run();
  EXPECT_EQ(samples(m, link), (Samples{{0, 50}, {1'000'000'000, 100}, {2'000'000'000, 0}}));
}

TEST(FluidLoadHistory, UnknownResourceIsRefused) {
  EventQueue q;
  FluidModel m(q);
  EXPECT_THROW(m.watch_load(ResourceId{3}), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::sim
