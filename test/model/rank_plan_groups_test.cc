// Rank 0's groups on their compact clusters and the remembered α–β prices (model/rank_plan_groups.h).
#include "model/rank_plan_groups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "sim/units/check.h"

namespace mofasim::model {
namespace {

using ::testing::ElementsAre;
using topology::CollectiveKind;

topology::TopologySpec cluster(int gpus, int per_node, int nodes_per_supernode, int nics) {
  return {.gpus = gpus,
          .gpus_per_node = per_node,
          .nodes_per_supernode = nodes_per_supernode,
          .intra_node = {.bandwidth = 300e9, .latency = 2e-6},
          .inter_node = {.bandwidth = 50e9, .latency = 5e-6},
          .inter_supernode = topology::LinkSpec{.bandwidth = 25e9, .latency = 10e-6},
          .nics_per_node = nics};
}

TEST(CompactGroup, NodesJumpedSupernodesAndRailsRenumberedDensely) {
  // 64 GPUs, 8 per node (one NIC each), 2 nodes per supernode. GPUs 0, 1 on node 0 (rails 0, 1),
  // 8 on node 1 (the next node), 40, 41 on node 5 (a jump: supernode 2), 49 on node 6 (supernode 3).
  // Slots (supernode, node, rail, place): (0,0,0,0) (0,0,1,0) (0,1,0,0) (1,0,0,0) (1,0,1,0) (2,0,0,0);
  // widest 2 nodes, 2 rails, 3 supernodes: id = ((s*2 + n)*2 + r)*1 + place.
  const std::vector<int> gpus{0, 1, 8, 40, 41, 49};
  const CompactGroup g(cluster(64, 8, 2, 8), gpus);
  EXPECT_THAT(std::vector<int>(g.gpus().begin(), g.gpus().end()), ElementsAre(0, 1, 2, 4, 5, 8));
  const topology::TopologySpec& s = g.topology().spec();
  EXPECT_EQ(s.gpus, 12);  // 3 supernodes x 2 nodes x 2 GPUs
  EXPECT_EQ(s.gpus_per_node, 2);
  EXPECT_EQ(s.nics(), 2);
  EXPECT_EQ(s.nodes_per_supernode, 2);
}

TEST(CompactGroup, GpusSharingANicKeepTheirPlaceOnTheRail) {
  // 8 GPUs per node on 2 NICs (4 per rail), one supernode. 0 | 4, 5 on node 0 (rails 0, 1), 16 on
  // node 2 (a jump). Widest 2 nodes, 2 rails: id = ((n*2) + r)*4 + place = 0, 4, 5, 8.
  const std::vector<int> gpus{0, 4, 5, 16};
  const CompactGroup g(cluster(32, 8, 0, 2), gpus);
  EXPECT_THAT(std::vector<int>(g.gpus().begin(), g.gpus().end()), ElementsAre(0, 4, 5, 8));
  const topology::TopologySpec& s = g.topology().spec();
  EXPECT_EQ(s.gpus, 16);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.nics(), 2);
  EXPECT_EQ(s.nodes_per_supernode, 0);
}

TEST(CommCostCache, AnswersWhatCommCostAnswersAcrossEvictions) {
  const topology::TopologySpec spec = cluster(32, 8, 0, 8);
  const std::vector<int> node{0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<int> nodes{0, 8, 16, 24};
  const CompactGroup a(spec, node);
  const CompactGroup b(spec, nodes);
  const topology::CommGroup on_node(a.topology(), a.gpus());
  const topology::CommGroup across(b.topology(), b.gpus());
  CommCostCache cache;
  // 40 distinct questions (more than the 16 remembered), each asked twice in a row and again
  // after 8 others: every answer is comm_cost's, bit for bit.
  std::vector<double> sizes;
  for (int i = 0; i < 20; ++i) sizes.push_back(1e6 * (i + 1));
  for (int round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      for (const topology::CommGroup* g : {&on_node, &across}) {
        for (const CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather}) {
          const CommCost want = comm_cost(*g, kind, sizes[i]);
          const CommCost got = cache(*g, kind, sizes[i]);
          EXPECT_EQ(got.latency, want.latency);
          EXPECT_EQ(got.bandwidth, want.bandwidth);
          EXPECT_EQ(cache(*g, kind, sizes[i]).bandwidth, want.bandwidth);
        }
      }
    }
  }
  // The cache tells groups, kinds and sizes apart: across nodes costs more than on one node, an
  // all-reduce more than an all-gather of the same payload (2(n-1)/n against (n-1)/n per byte).
  EXPECT_GT(cache(across, CollectiveKind::kAllReduce, 1e8).bandwidth,
            cache(on_node, CollectiveKind::kAllReduce, 1e8).bandwidth);
  EXPECT_DOUBLE_EQ(cache(on_node, CollectiveKind::kAllReduce, 1e8).bandwidth,
                   2 * cache(on_node, CollectiveKind::kAllGather, 1e8).bandwidth);
}

// DeepEP's two hops pair by CommOp::pipelined_with, not by their place in the list: with another EP
// all-to-all between them, the NVLink hop (the shorter: 8 MB at 300 GB/s against 80 MB at 50 GB/s
// over the NIC) hides under the NIC hop for all but its last of n = 4 chunks, and the comm between
// them keeps its whole price.
TEST(PriceBlock, DeepEpHopsPairByTheirNamedPartnerNotByListPosition) {
  const topology::TopologySpec spec = cluster(16, 8, 0, 8);
  std::vector<int> members(16);
  for (int i = 0; i < 16; ++i) members[static_cast<std::size_t>(i)] = i;
  const CompactGroup ep(spec, members);
  const topology::CommGroup group(ep.topology(), ep.gpus());
  PlanBlock block;
  const int nic = add_comm_op(block.ops, CollectiveKind::kAllToAllScaleOut, LayerGroup::kEp, 16, Phase::kForward,
                              OpKind::kExpertLinear1, true, 80e6, 40e6);
  const int other = add_comm_op(block.ops, CollectiveKind::kAllToAll, LayerGroup::kEp, 16, Phase::kForward,
                                OpKind::kExpertLinear2, false, 50e6, 50e6 * 15 / 16);
  const int nvlink = add_comm_op(block.ops, CollectiveKind::kAllToAllScaleUp, LayerGroup::kEp, 16, Phase::kForward,
                                 OpKind::kExpertLinear1, true, 8e6, 7e6, 1, nic, 4);
  ASSERT_EQ(nic, 0);
  ASSERT_EQ(other, 1);
  ASSERT_EQ(nvlink, 2);
  CommCostCache cost;
  price_block(block, LayerGroups{.ep = &group}, 1, cost);
  const auto& c = block.comm;
  EXPECT_EQ(block.comm_hidden[0], 0.0);
  EXPECT_EQ(block.comm_hidden[1], 0.0);
  EXPECT_EQ(block.comm_hidden[2], 0.75);
  EXPECT_EQ(c[0].bandwidth, comm_cost(group, CollectiveKind::kAllToAllScaleOut, 80e6).bandwidth);
  EXPECT_EQ(c[1].bandwidth, comm_cost(group, CollectiveKind::kAllToAll, 50e6).bandwidth);
  EXPECT_EQ(c[2].bandwidth, comm_cost(group, CollectiveKind::kAllToAllScaleUp, 8e6 / 4).bandwidth);
  EXPECT_GT(c[0].bandwidth, comm_cost(group, CollectiveKind::kAllToAllScaleUp, 8e6).bandwidth);
  // A hop may name only an earlier comm that is paired with none.
  EXPECT_THROW(add_comm_op(block.ops, CollectiveKind::kAllToAllScaleUp, LayerGroup::kEp, 16, Phase::kForward,
                           OpKind::kExpertLinear1, true, 8e6, 7e6, 1, nvlink, 4),
               InternalError);
}

}  // namespace
}  // namespace mofasim::model
