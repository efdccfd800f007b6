// Collectives on the engine: a topology plan (topology/comm_group.h) decomposes a collective into
// bytes per link; run as one fluid activity per phase over those links, a collective alone takes
// its closed-form time, and two collectives that cross the same links share them max-min fairly
// and slow each other (issue: "a collective loads the links it crosses").
#include <gtest/gtest.h>

#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/fluid_model.h"
#include "topology/comm_group.h"
#include "topology/topology.h"

namespace mofasim::sim {
namespace {

struct Fixture {
  // 16 nodes x 8 GPUs, one 46 GB/s NIC per GPU, NVLink 370 GB/s (reference-formulas.md §8.5).
  topology::Topology topo{topology::TopologySpec{.gpus = 128,
                                                 .gpus_per_node = 8,
                                                 .intra_node = {.bandwidth = 370e9, .latency = 0},
                                                 .inter_node = {.bandwidth = 46e9, .latency = 0}}};
  EventQueue queue;
  FluidModel fluid{queue};
  std::vector<ResourceId> links;

  Fixture() {
    for (const topology::LinkResource& l : topo.links()) {
      links.push_back(fluid.add_resource({.name = "link", .capacity = l.capacity.bytes_per_second}));
    }
  }

  // Starts the single bandwidth phase of `plan` moving `bytes` (latency is zero here); returns
  // where its finish time will be written.
  void start(const topology::CollectivePlan& plan, double bytes, std::vector<ResourceUse>& uses, Time* finish) {
    ASSERT_EQ(plan.phases.size(), 1u);
    for (const topology::LinkShare& s : plan.phases[0].shares) {
      uses.push_back({.resource = links[topology::index_of(s.link)], .weight = s.bytes_per_byte});
    }
    fluid.start({.work = bytes, .uses = uses, .kind = ActivityKind::kCommunication}, [this, finish] { *finish = queue.now(); });
  }
};

std::vector<int> range(int first, int count, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i * stride);
  return v;
}

TEST(CollectiveContention, AloneARingAllReduceTakesItsClosedForm) {
  // Flat ring over 16 nodes x 8 GPUs: busBW = min(8 x 46, 8/7 x 370) = 368 GB/s, so 1 GiB takes
  // 2 (127/128) 2^30 / 368e9 = 5.7897 ms (§8.5).
  Fixture f;
  const topology::CommGroup all(f.topo, range(0, 128));
  const auto plan = all.plan(topology::CollectiveKind::kAllReduce, topology::CollectiveAlgorithm::kRing);
  std::vector<ResourceUse> uses;
  Time done{};
  f.start(plan, 1073741824.0, uses, &done);
  f.queue.run();
  EXPECT_NEAR(to_seconds(done), 2.0 * 127 / 128 * 1073741824.0 / 368e9, 2e-9);
  EXPECT_NEAR(to_seconds(done),
              all.seconds(topology::CollectiveKind::kAllReduce, topology::CollectiveAlgorithm::kRing, Bytes{1073741824.0}),
              2e-9);
}

TEST(CollectiveContention, TwoCollectivesOnTheSameLinksEachTakeTwiceAsLong) {
  // The ring {GPU 0, GPU 8} crosses rail 0 of nodes 0 and 1. Two all-reduces on it at once (two
  // DP buckets in flight) share those NICs: each alone takes 2 (1/2) S / 46 GB/s, together each
  // gets half of every link, so both finish at twice that.
  Fixture f;
  const topology::CommGroup pair(f.topo, std::vector<int>{0, 8});
  const auto plan = pair.plan(topology::CollectiveKind::kAllReduce, topology::CollectiveAlgorithm::kRing);
  const double bytes = 1e9;
  const double alone = pair.seconds(topology::CollectiveKind::kAllReduce, topology::CollectiveAlgorithm::kRing, Bytes{bytes});
  EXPECT_NEAR(alone, 2.0 * 0.5 * bytes / 46e9, 1e-12);
  std::vector<ResourceUse> uses_a, uses_b;
  Time a{}, b{};
  f.start(plan, bytes, uses_a, &a);
  f.start(plan, bytes, uses_b, &b);
  f.queue.run();
  EXPECT_NEAR(to_seconds(a), 2 * alone, 2e-9);
  EXPECT_NEAR(to_seconds(b), 2 * alone, 2e-9);
}

TEST(CollectiveContention, CollectivesOnDisjointRailsDoNotSlowEachOther) {
  // Group {0, 8} uses rail 0 of nodes 0 and 1; group {1, 9} uses rail 1: no shared link, so both
  // finish at the time each takes alone.
  Fixture f;
  const topology::CommGroup g0(f.topo, std::vector<int>{0, 8});
  const topology::CommGroup g1(f.topo, std::vector<int>{1, 9});
  const double bytes = 1e9;
  const double alone = g0.seconds(topology::CollectiveKind::kAllReduce, topology::CollectiveAlgorithm::kRing, Bytes{bytes});
  std::vector<ResourceUse> uses_a, uses_b;
  Time a{}, b{};
  f.start(g0.plan(topology::CollectiveKind::kAllReduce, topology::CollectiveAlgorithm::kRing), bytes, uses_a, &a);
  f.start(g1.plan(topology::CollectiveKind::kAllReduce, topology::CollectiveAlgorithm::kRing), bytes, uses_b, &b);
  f.queue.run();
  EXPECT_NEAR(to_seconds(a), alone, 2e-9);
  EXPECT_NEAR(to_seconds(b), alone, 2e-9);
}

}  // namespace
}  // namespace mofasim::sim
