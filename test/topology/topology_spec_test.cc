// TopologySpec validation and Topology's id mapping, link classes and effective bandwidths.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "topology/topology.h"

namespace mofasim::topology {
namespace {

using ::testing::HasSubstr;

// 64 GPUs, 8 per node (8 nodes), 2 nodes per supernode (4 supernodes).
TopologySpec three_level() {
  return {.gpus = 64,
          .gpus_per_node = 8,
          .nodes_per_supernode = 2,
          .intra_node = {.bandwidth = 370e9, .latency = 2e-6},
          .inter_node = {.bandwidth = 46e9, .latency = 5e-6},
          .inter_supernode = LinkSpec{.bandwidth = 40e9, .latency = 8e-6}};
}

std::string error_of(const TopologySpec& spec) {
  try {
    spec.validate();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(TopologySpecTest, RejectsBadFieldsNamingFieldAndRange) {
  TopologySpec s = three_level();
  s.gpus = 60;
  EXPECT_EQ(error_of(s), "topology.gpus: must be a multiple of gpus_per_node (8), got 60");
  s = three_level();
  s.gpus_per_node = 0;
  EXPECT_EQ(error_of(s), "topology.gpus_per_node: must be >= 1, got 0");
  s = three_level();
  s.nodes_per_supernode = 3;  // 8 nodes
  EXPECT_EQ(error_of(s), "topology.nodes_per_supernode: must divide the node count (8), got 3");
  s = three_level();
  s.bandwidth_decay = 1.5;
  EXPECT_EQ(error_of(s), "topology.bandwidth_decay: must be in (0, 1], got 1.5");
  s = three_level();
  s.bandwidth_decay = 0;
  EXPECT_THAT(error_of(s), HasSubstr("topology.bandwidth_decay"));
  s = three_level();
  s.oversubscription = 0.5;
  EXPECT_EQ(error_of(s), "topology.oversubscription: must be a finite ratio >= 1, got 0.5");
  s = three_level();
  s.bandwidth_scale = -1;
  EXPECT_THAT(error_of(s), HasSubstr("topology.bandwidth_scale: must be a finite factor > 0"));
  s = three_level();
  s.nics_per_node = 3;
  EXPECT_EQ(error_of(s), "topology.nics_per_node: must divide gpus_per_node (8), got 3");
  s = three_level();
  s.inter_node.bandwidth = 0;
  EXPECT_EQ(error_of(s), "topology.inter_node.bandwidth: must be a finite bandwidth > 0 bytes/s, got 0");
  s = three_level();
  s.intra_node.latency = -1e-6;
  EXPECT_THAT(error_of(s), HasSubstr("topology.intra_node.latency: must be a finite latency >= 0 s"));
  EXPECT_THROW(Topology{s}, std::invalid_argument);
}

TEST(TopologySpecTest, SingleNodeNeedsNoScaleOutLink) {
  const TopologySpec s{.gpus = 8, .gpus_per_node = 8, .intra_node = {.bandwidth = 370e9}};
  EXPECT_EQ(error_of(s), "no error");
}

TEST(TopologyTest, MapsGpusToNodesSupernodesAndRails) {
  TopologySpec spec = three_level();
  spec.nics_per_node = 4;  // two GPUs per rail
  const Topology t(spec);
  EXPECT_EQ(t.nodes(), 8);
  EXPECT_EQ(t.supernodes(), 4);
  // GPU 45 = node 45/8 = 5, local 5, rail 5/(8/4) = 2, supernode 5/2 = 2.
  EXPECT_EQ(t.node_of(45), 5);
  EXPECT_EQ(t.local_index(45), 5);
  EXPECT_EQ(t.rail_of(45), 2);
  EXPECT_EQ(t.supernode_of(45), 2);
  EXPECT_EQ(t.link_class(3, 3), LinkClass::kLocal);
  EXPECT_EQ(t.link_class(3, 7), LinkClass::kIntraNode);
  EXPECT_EQ(t.link_class(3, 15), LinkClass::kInterNode);       // nodes 0, 1: supernode 0
  EXPECT_EQ(t.link_class(3, 16), LinkClass::kInterSupernode);  // node 2: supernode 1
}

TEST(TopologyTest, LinkResourcesAreDenseWithCapacities) {
  TopologySpec spec = three_level();
  spec.nics_per_node = 4;
  const Topology t(spec);
  // 2 NVLink ports × 64 GPUs + 4 (NIC tx/rx, spine up/down) × 8 nodes × 4 rails = 128 + 128.
  ASSERT_EQ(t.links().size(), 256u);
  EXPECT_EQ(index_of(t.nvlink_tx(0)), 0u);
  EXPECT_EQ(index_of(t.nvlink_rx(63)), 127u);
  EXPECT_EQ(index_of(t.spine_down(7, 3)), 255u);
  const LinkResource& nic = t.link(t.nic_rx(5, 2));
  EXPECT_EQ(nic.kind, LinkKind::kNicRx);
  EXPECT_EQ(nic.owner, 5);
  EXPECT_EQ(nic.rail, 2);
  // A NIC serves 8/4 = 2 GPUs at 46 GB/s each.
  EXPECT_DOUBLE_EQ(nic.capacity.bytes_per_second, 92e9);
  EXPECT_DOUBLE_EQ(t.link(t.nvlink_tx(9)).capacity.bytes_per_second, 370e9);
  EXPECT_DOUBLE_EQ(t.link(t.spine_up(1, 1)).capacity.bytes_per_second, 80e9);
}

TEST(TopologyTest, NoSpinePortsWithOneSupernode) {
  TopologySpec spec = three_level();
  spec.nodes_per_supernode = 0;
  const Topology t(spec);
  EXPECT_FALSE(t.has_spine());
  EXPECT_EQ(t.links().size(), 2u * 64 + 2u * 8 * 8);
  EXPECT_EQ(t.link_class(0, 63), LinkClass::kInterNode);
}

TEST(TopologyTest, DecayScaleAndOversubscriptionSetClassBandwidths) {
  TopologySpec spec = three_level();
  spec.bandwidth_decay = 0.5;     // γ, MoFa(3): scale-out only
  spec.bandwidth_scale = 2.0;     // μ_b, MoFa(18): every level
  spec.oversubscription = 4.0;    // inter-supernode only
  const Topology t(spec);
  EXPECT_DOUBLE_EQ(t.bandwidth(LinkClass::kIntraNode).bytes_per_second, 370e9 * 2);
  EXPECT_DOUBLE_EQ(t.bandwidth(LinkClass::kInterNode).bytes_per_second, 46e9 * 0.5 * 2);
  // 40 GB/s · 0.5 · 2 / 4 = 10 GB/s, below the NIC's 46 GB/s.
  EXPECT_DOUBLE_EQ(t.bandwidth(LinkClass::kInterSupernode).bytes_per_second, 10e9);
  EXPECT_DOUBLE_EQ(t.latency(LinkClass::kInterSupernode), 8e-6);
}

TEST(TopologyTest, UnsetSupernodeLinkFallsBackToInterNode) {
  TopologySpec spec = three_level();
  spec.inter_supernode.reset();
  spec.oversubscription = 2.0;
  const Topology t(spec);
  EXPECT_DOUBLE_EQ(t.bandwidth(LinkClass::kInterSupernode).bytes_per_second, 23e9);
  EXPECT_DOUBLE_EQ(t.latency(LinkClass::kInterSupernode), 5e-6);
}

}  // namespace
}  // namespace mofasim::topology
