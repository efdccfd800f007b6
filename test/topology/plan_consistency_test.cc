// Link decompositions (CollectivePlan) against the closed forms: a collective running alone, each
// phase lasting latency + max over its links of bytes / capacity (a one-collective fluid model),
// plus a broadcast's pipeline fill, must take exactly the closed-form time. Also checks which links a plan loads, and that
// collectives sharing a NIC appear on the same link ids (so an engine slows them down together).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "topology/comm_group.h"
#include "topology/placement.h"

namespace mofasim::topology {
namespace {

using A = CollectiveAlgorithm;
using K = CollectiveKind;

// The tiny fluid calculation: phases in series, links within a phase in parallel at full capacity.
double alone_seconds(const Topology& t, const CollectivePlan& plan, double bytes) {
  double total = 0;
  for (const CommPhase& phase : plan.phases) {
    double slowest = 0;
    for (const LinkShare& s : phase.shares) {
      slowest = std::max(slowest, bytes * s.bytes_per_byte / t.link(s.link).capacity.bytes_per_second);
    }
    total += phase.latency_seconds + slowest;
  }
  return total + plan.fill.seconds(bytes);  // a broadcast's pipeline fill (0 for the rest)
}

struct Case {
  std::string name;
  TopologySpec spec;
  std::vector<int> gpus;
};

std::vector<int> stride(int first, int count, int step) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i * step);
  return out;
}

TopologySpec cluster(int nodes_per_supernode, int nics, double oversub) {
  return {.gpus = 128,
          .gpus_per_node = 8,
          .nodes_per_supernode = nodes_per_supernode,
          .intra_node = {.bandwidth = 370e9, .latency = 2e-6},
          .inter_node = {.bandwidth = 46e9, .latency = 5e-6},
          .inter_supernode = LinkSpec{.bandwidth = 40e9, .latency = 9e-6},
          .nics_per_node = nics,
          .oversubscription = oversub,
          .bandwidth_decay = 0.8};
}

std::vector<Case> cases() {
  return {
      {"one_node", cluster(0, 8, 1), stride(8, 8, 1)},
      {"tp2_inside_node", cluster(0, 8, 1), {2, 3}},
      {"flat_16_nodes", cluster(0, 8, 1), stride(0, 128, 1)},
      {"dp_one_per_node", cluster(0, 8, 1), stride(5, 16, 8)},
      {"dp_two_per_node", cluster(4, 8, 1), stride(1, 32, 4)},
      {"shared_rails", cluster(4, 2, 2), stride(0, 64, 2)},
      {"supernodes_oversub", cluster(4, 8, 3), stride(0, 128, 1)},
      {"supernodes_one_per_node", cluster(2, 4, 2), stride(6, 16, 8)},
      {"uneven_members", cluster(2, 8, 2), {0, 1, 2, 9, 17, 40, 41, 127}},
      {"pair_across_supernodes", cluster(2, 8, 2), {3, 100}},
  };
}

class PlanConsistency : public ::testing::TestWithParam<Case> {};

TEST_P(PlanConsistency, AloneFluidTimeEqualsClosedForm) {
  const Case& c = GetParam();
  const Topology t(c.spec);
  const CommGroup g(t, c.gpus);
  struct Pair {
    K kind;
    A algorithm;
  };
  const std::vector<Pair> pairs = {{K::kAllReduce, A::kRing},     {K::kAllReduce, A::kTree},
                                   {K::kAllReduce, A::kHierarchical}, {K::kReduceScatter, A::kRing},
                                   {K::kAllGather, A::kRing},     {K::kBroadcast, A::kRing},
                                   {K::kAllToAll, A::kPairwise},  {K::kSendRecv, A::kDirect},
                                   {K::kRingStep, A::kRing},      {K::kAllToAllScaleOut, A::kPairwise},
                                   {K::kAllToAllScaleUp, A::kPairwise}};
  const double bytes = 3.5e8;
  for (const Pair& p : pairs) {
    if (p.kind == K::kSendRecv && g.size() != 2) continue;
    if (p.algorithm == A::kHierarchical && !g.shape().uniform()) continue;
    if (p.kind == K::kAllToAllScaleOut && g.shape().nodes == 1) continue;  // nothing leaves the node
    if (p.kind == K::kAllToAllScaleUp && g.shape().max_local == 1) continue;  // one member per node
    const CollectivePlan plan = g.plan(p.kind, p.algorithm);
    const double closed = g.seconds(p.kind, p.algorithm, Bytes{bytes});
    EXPECT_GT(closed, 0) << collective_kind_name(p.kind);
    EXPECT_NEAR(alone_seconds(t, plan, bytes), closed, closed * 1e-12)
        << c.name << ": " << collective_kind_name(p.kind) << " / " << collective_algorithm_name(p.algorithm);
    for (const CommPhase& phase : plan.phases) {
      EXPECT_TRUE(std::is_sorted(phase.shares.begin(), phase.shares.end(), [](const LinkShare& a, const LinkShare& b) {
        return index_of(a.link) < index_of(b.link);
      }));
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& param) { return param.param.name; }

INSTANTIATE_TEST_SUITE_P(Placements, PlanConsistency, ::testing::ValuesIn(cases()), case_name);

// One node, ring AR: every GPU sends and receives 2·7/8 = 1.75 bytes per byte over NVLink.
TEST(PlanTest, RingAllReduceOneNodeLoadsEveryNvlinkPort) {
  const Topology t({.gpus = 8, .gpus_per_node = 8, .intra_node = {.bandwidth = 370e9}});
  const CommGroup g(t, stride(0, 8, 1));
  const CollectivePlan plan = g.plan(K::kAllReduce, A::kRing);
  ASSERT_EQ(plan.phases.size(), 1u);
  ASSERT_EQ(plan.phases[0].shares.size(), 16u);
  for (const LinkShare& s : plan.phases[0].shares) EXPECT_DOUBLE_EQ(s.bytes_per_byte, 1.75);
}

// 16 nodes × 8, ring AR: per GPU NVLink 7/8 · E and per NIC E/8, with E = 2·127/128.
// Hierarchical: three phases; the middle one loads only NICs with 2·15/16 / 8 per byte.
TEST(PlanTest, FlatAndHierarchicalLinkLoads) {
  const Topology t({.gpus = 128, .gpus_per_node = 8, .intra_node = {.bandwidth = 370e9},
                    .inter_node = {.bandwidth = 46e9}});
  const CommGroup g(t, stride(0, 128, 1));
  const double e = 2.0 * 127 / 128;
  const CollectivePlan ring = g.plan(K::kAllReduce, A::kRing);
  ASSERT_EQ(ring.phases.size(), 1u);
  for (const LinkShare& s : ring.phases[0].shares) {
    const LinkKind kind = t.link(s.link).kind;
    const double expected = (kind == LinkKind::kNvlinkTx || kind == LinkKind::kNvlinkRx) ? e * 7 / 8 : e / 8;
    EXPECT_DOUBLE_EQ(s.bytes_per_byte, expected);
  }
  EXPECT_EQ(ring.phases[0].shares.size(), 128u * 2 + 16 * 8 * 2);
  const CollectivePlan hier = g.plan(K::kAllReduce, A::kHierarchical);
  ASSERT_EQ(hier.phases.size(), 3u);
  for (const LinkShare& s : hier.phases[1].shares) {
    EXPECT_THAT(t.link(s.link).kind, ::testing::AnyOf(LinkKind::kNicTx, LinkKind::kNicRx));
    EXPECT_DOUBLE_EQ(s.bytes_per_byte, 2.0 * 15 / 16 / 8);
  }
}

// Send/recv from GPU 3 (node 0, rail 3) to GPU 100 (node 12, rail 4) across supernodes.
TEST(PlanTest, SendRecvCrossesNicsAndSpinePorts) {
  const Topology t(cluster(2, 8, 2));
  const std::vector<int> pair{3, 100};
  const CollectivePlan plan = CommGroup(t, pair).plan(K::kSendRecv, A::kDirect);
  ASSERT_EQ(plan.phases.size(), 1u);
  std::set<std::uint32_t> links;
  for (const LinkShare& s : plan.phases[0].shares) {
    links.insert(index_of(s.link));
    EXPECT_DOUBLE_EQ(s.bytes_per_byte, 1.0);
  }
  EXPECT_EQ(links, (std::set<std::uint32_t>{index_of(t.nic_tx(0, 3)), index_of(t.nic_rx(12, 4)),
                                            index_of(t.spine_up(0, 3)), index_of(t.spine_down(12, 4))}));
  EXPECT_DOUBLE_EQ(plan.phases[0].latency_seconds, 9e-6);
}

std::set<std::uint32_t> links_of(const CollectivePlan& plan) {
  std::set<std::uint32_t> out;
  for (const CommPhase& p : plan.phases) {
    for (const LinkShare& s : p.shares) out.insert(index_of(s.link));
  }
  return out;
}

// Under tp = 8 the DP groups {0, 8, ...} and {1, 9, ...} use GPUs 0 and 1 of each of 16 nodes. With a
// NIC per GPU they touch disjoint links (they do not slow each other); with 4 NICs per node GPUs
// 0 and 1 share rail 0, so both plans load the same NIC ids and an engine splits that capacity.
TEST(PlanTest, ConcurrentGroupsShareLinksOnlyWhenRailsAreShared) {
  const Placement placement({.tp = 8, .dp = 16}, RankOrder());
  for (int nics : {8, 4}) {
    TopologySpec spec = cluster(0, nics, 1);
    const Topology t(spec);
    const CommGroup a(t, placement.members(GroupKind::kDp, 0));
    const CommGroup b(t, placement.members(GroupKind::kDp, 1));
    const auto la = links_of(a.plan(K::kAllReduce, A::kRing));
    const auto lb = links_of(b.plan(K::kAllReduce, A::kRing));
    std::vector<std::uint32_t> common;
    std::set_intersection(la.begin(), la.end(), lb.begin(), lb.end(), std::back_inserter(common));
    if (nics == 8) {
      EXPECT_TRUE(common.empty());
    } else {
      EXPECT_EQ(common.size(), 16u * 2);  // NIC tx and rx of rail 0 on each of 16 nodes
    }
  }
}

}  // namespace
}  // namespace mofasim::topology
