// Closed-form collective costs against hand-worked values (reference-formulas §4 and §8.5).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/comm_group.h"

namespace mofasim::topology {
namespace {

using ::testing::HasSubstr;
using A = CollectiveAlgorithm;
using K = CollectiveKind;

constexpr double kGiB = 1073741824.0;  // 2^30

std::vector<int> iota(int first, int count, int stride = 1) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i * stride);
  return out;
}

// One DGX H100 node: 8 GPUs, NVLink busBW 370 GB/s (reference-formulas §4.2).
Topology one_node() { return Topology({.gpus = 8, .gpus_per_node = 8, .intra_node = {.bandwidth = 370e9}}); }

// 16 nodes × 8 H100, 8 NDR NICs per node at 46 GB/s each (§8.5).
TopologySpec sixteen_nodes() {
  return {.gpus = 128, .gpus_per_node = 8, .intra_node = {.bandwidth = 370e9}, .inter_node = {.bandwidth = 46e9}};
}

TEST(CollectiveTest, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(K::kAllReduce, 8), 14.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(K::kReduceScatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(K::kAllGather, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(K::kAllToAll, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(K::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(K::kSendRecv, 2), 1.0);
}

// §8.5: 2^30 · 2·7/8 / 370e9 = 5.0785 ms.
TEST(CollectiveTest, RingAllReduceOneNode) {
  const Topology t = one_node();
  const CommGroup g(t, iota(0, 8));
  EXPECT_NEAR(g.seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), 5.0785e-3, 1e-7);
  EXPECT_DOUBLE_EQ(g.bus_bandwidth(K::kAllReduce, A::kRing).bytes_per_second, 370e9);
  // RS and AG move half the bytes: 2^30 · 7/8 / 370e9 = 2.5393 ms.
  EXPECT_NEAR(g.seconds(K::kReduceScatter, A::kRing, Bytes{kGiB}), 2.5393e-3, 1e-7);
  EXPECT_NEAR(g.seconds(K::kAllGather, A::kRing, Bytes{kGiB}), 2.5393e-3, 1e-7);
  // Broadcast, factor 1: 2^30 / 370e9 = 2.9020 ms, plus its pipeline fill: 7 NVLink hops, each
  // one 128 KiB chunk of every one of the 8 channels (one per NIC) at 370 GB/s:
  // 7 · 8 · 131072 / 370e9 = 19.838 us -> 2.9218 ms.
  EXPECT_NEAR(g.seconds(K::kBroadcast, A::kRing, Bytes{kGiB}), 2.9218e-3, 1e-7);
  // A message below 8 chunks fills with the whole message: 7 · 65536 / 370e9 = 1.2399 us on top of
  // 65536 / 370e9 = 0.1771 us.
  EXPECT_NEAR(g.seconds(K::kBroadcast, A::kRing, Bytes{65536}), 1.4170e-6, 1e-10);
  // TP+SP per layer (§8.5): RS of 2·sbh = 67,108,864 B: 67108864 · 7/8 / 370e9 = 0.1587 ms.
  EXPECT_NEAR(g.seconds(K::kReduceScatter, A::kRing, Bytes{67108864}), 0.1587e-3, 1e-7);
}

// §8.5, flat ring: busBW = min(8·46, 8/7·370) = min(368, 422.9) = 368 GB/s;
// T = 2^30 · 2·127/128 / 368e9 = 5.790 ms.
TEST(CollectiveTest, FlatRingSixteenNodes) {
  const Topology t(sixteen_nodes());
  const CommGroup g(t, iota(0, 128));
  EXPECT_NEAR(g.seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), 5.790e-3, 1e-6);
  EXPECT_DOUBLE_EQ(g.bus_bandwidth(K::kAllReduce, A::kRing).bytes_per_second, 368e9);
  EXPECT_EQ(g.bottleneck(), LinkClass::kInterNode);
}

// A broadcast over the 16 nodes: 2^30 / 368e9 = 2.9178 ms of bytes, plus the fill of the first
// 128 KiB chunk per channel over 112 NVLink hops (8 channels share 370 GB/s) and 15 node-to-node
// hops (one NIC each, 46 GB/s): 131072 · (112 · 8 / 370e9 + 15 / 46e9) = 0.36015 ms -> 3.2779 ms.
TEST(CollectiveTest, BroadcastPaysItsPipelineFillAcrossNodes) {
  const Topology t(sixteen_nodes());
  const CommGroup g(t, iota(0, 128));
  EXPECT_NEAR(g.seconds(K::kBroadcast, A::kRing, Bytes{kGiB}), 3.2779e-3, 1e-7);
  // The plan carries the same fill for the step simulation.
  const CollectivePlan plan = g.plan(K::kBroadcast, A::kRing);
  EXPECT_NEAR(plan.fill.seconds(kGiB), 0.36015e-3, 1e-8);
  EXPECT_DOUBLE_EQ(g.plan(K::kAllGather, A::kRing).fill.seconds(kGiB), 0.0);
  // Every other GPU (a DP group beside TP 2): 4 members on each node use 4 of its 8 NICs, so 4
  // channels: 131072 · (48 · 4 / 370e9 + 15 / 46e9) = 0.110757 ms.
  std::vector<int> strided;
  for (int gpu = 0; gpu < 128; gpu += 2) strided.push_back(gpu);
  EXPECT_NEAR(CommGroup(t, strided).plan(K::kBroadcast, A::kRing).fill.seconds(kGiB), 0.110757e-3, 1e-9);
}

// §8.5, serialized 3-phase hierarchical:
//   intra RS + AG: 2 · 7/8 · 2^30 / 370e9           = 5.0785 ms
//   inter AR of a 1/8 shard: 2 · 15/16 · 2^27 / 46e9 = 5.4708 ms      total 10.549 ms.
TEST(CollectiveTest, HierarchicalSixteenNodes) {
  const Topology t(sixteen_nodes());
  const CommGroup g(t, iota(0, 128));
  EXPECT_NEAR(g.seconds(K::kAllReduce, A::kHierarchical, Bytes{kGiB}), 10.549e-3, 1e-6);
  EXPECT_GT(g.seconds(K::kAllReduce, A::kHierarchical, Bytes{kGiB}), g.seconds(K::kAllReduce, A::kRing, Bytes{kGiB}));
}

// Latency terms: α_intra = 2 us, α_inter = 5 us. Ring AR over 128 GPUs: 2·127 steps at the slowest
// α (5 us) = 1.27 ms on top of 5.790 ms. Tree: 2·⌈log2 128⌉ = 14 steps = 70 us.
// Hierarchical: 2·7·2 us + 2·15·5 us = 28 + 150 = 178 us.
TEST(CollectiveTest, LatencyTermsCountSteps) {
  TopologySpec spec = sixteen_nodes();
  spec.intra_node.latency = 2e-6;
  spec.inter_node.latency = 5e-6;
  const Topology t(spec);
  const CommGroup g(t, iota(0, 128));
  EXPECT_NEAR(g.cost(K::kAllReduce, A::kRing, Bytes{kGiB}).latency_seconds, 1.27e-3, 1e-12);
  EXPECT_NEAR(g.cost(K::kAllReduce, A::kTree, Bytes{kGiB}).latency_seconds, 70e-6, 1e-12);
  EXPECT_NEAR(g.cost(K::kAllReduce, A::kTree, Bytes{kGiB}).bandwidth_seconds,
              g.cost(K::kAllReduce, A::kRing, Bytes{kGiB}).bandwidth_seconds, 1e-15);
  EXPECT_NEAR(g.cost(K::kAllReduce, A::kHierarchical, Bytes{kGiB}).latency_seconds, 178e-6, 1e-12);
  // Zero bytes cost only latency.
  EXPECT_NEAR(g.seconds(K::kAllGather, A::kRing, Bytes{0}), 127 * 5e-6, 1e-12);
}

// A CP ring step: one α (not P−1) and each ring edge carries the block once. 128 GPUs on 16
// nodes, 1 GiB: NVLink side (8−1)/8 / 370e9 s/B, NIC side (1/8) / 46e9 s/B (one member per rail),
// so the NIC bounds it: 2^30 / 8 / 46e9 = 2.918 ms, plus the inter-node α of 5 µs.
TEST(CollectiveTest, RingStepIsOneLatencyAndOneBlockPerEdge) {
  TopologySpec spec = sixteen_nodes();
  spec.intra_node.latency = 2e-6;
  spec.inter_node.latency = 5e-6;
  const Topology t(spec);
  const CommGroup g(t, iota(0, 128));
  const CollectiveCost c = g.cost(K::kRingStep, A::kRing, Bytes{kGiB});
  EXPECT_NEAR(c.latency_seconds, 5e-6, 1e-15);
  EXPECT_NEAR(c.bandwidth_seconds, kGiB / 8 / 46e9, 1e-12);
  // One node of 4: every member sends 1 GiB over its own NVLink port, one intra α.
  const CommGroup four(t, iota(0, 4));
  EXPECT_NEAR(four.cost(K::kRingStep, A::kRing, Bytes{kGiB}).latency_seconds, 2e-6, 1e-15);
  EXPECT_NEAR(four.cost(K::kRingStep, A::kRing, Bytes{kGiB}).bandwidth_seconds, kGiB / 370e9, 1e-15);
  EXPECT_THROW((void)g.cost(K::kRingStep, A::kDirect, Bytes{1}), std::invalid_argument);
}

// One GPU per node (e.g. a DP group under tp = 8): the ring crosses each NIC with no NVLink
// help, busBW = 46 GB/s; T = 2^30 · 2·15/16 / 46e9 = 43.77 ms.
TEST(CollectiveTest, OneGpuPerNodeRingIsNicBound) {
  const Topology t(sixteen_nodes());
  const CommGroup g(t, iota(3, 16, 8));
  EXPECT_DOUBLE_EQ(g.bus_bandwidth(K::kAllReduce, A::kRing).bytes_per_second, 46e9);
  EXPECT_NEAR(g.seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), kGiB * 1.875 / 46e9, 1e-12);
}

// γ = 0.5 (MoFa(3)) halves the NIC: busBW = min(8·23, 422.9) = 184 GB/s, so the flat ring takes
// 2 × 5.790 = 11.58 ms; NVLink-only groups are unaffected.
TEST(CollectiveTest, BandwidthDecaySlowsScaleOutOnly) {
  TopologySpec spec = sixteen_nodes();
  spec.bandwidth_decay = 0.5;
  const Topology t(spec);
  EXPECT_NEAR(CommGroup(t, iota(0, 128)).seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), 11.580e-3, 1e-6);
  EXPECT_NEAR(CommGroup(t, iota(8, 8)).seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), 5.0785e-3, 1e-7);
}

// μ_b = 2 (MoFa(18)) doubles every level: one node AR takes 5.0785 / 2 ms.
TEST(CollectiveTest, BandwidthScaleSpeedsEveryLevel) {
  TopologySpec spec = sixteen_nodes();
  spec.bandwidth_scale = 2;
  const Topology t(spec);
  EXPECT_NEAR(CommGroup(t, iota(0, 8)).seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), 2.53925e-3, 1e-7);
  EXPECT_NEAR(CommGroup(t, iota(0, 128)).seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), 2.895e-3, 1e-6);
}

// 4 supernodes of 4 nodes, oversubscription 2: a spine port carries 46/2 = 23 GB/s per rail, so a
// ring crossing supernodes gets busBW = 8·23 = 184 GB/s (11.58 ms); a ring inside one supernode
// keeps 368 GB/s (2^30 · 2·31/32 / 368e9 = 5.653 ms).
TEST(CollectiveTest, OversubscriptionSlowsOnlySupernodeCrossings) {
  TopologySpec spec = sixteen_nodes();
  spec.nodes_per_supernode = 4;
  spec.oversubscription = 2;
  const Topology t(spec);
  const CommGroup all(t, iota(0, 128));
  EXPECT_EQ(all.bottleneck(), LinkClass::kInterSupernode);
  EXPECT_NEAR(all.seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), 11.580e-3, 1e-6);
  const CommGroup inside(t, iota(0, 32));
  EXPECT_EQ(inside.bottleneck(), LinkClass::kInterNode);
  EXPECT_NEAR(inside.seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), kGiB * 2 * 31 / 32 / 368e9, 1e-12);
  // A broadcast's fill crosses 12 node-to-node hops at a NIC's 46 GB/s and 3 supernode boundaries
  // at a spine port's 23 GB/s: 131072 · (112 · 8 / 370e9 + 12 / 46e9 + 3 / 23e9) = 0.36870 ms.
  EXPECT_NEAR(all.plan(K::kBroadcast, A::kRing).fill.seconds(kGiB), 0.36870e-3, 1e-8);
  spec.oversubscription = 1;
  EXPECT_NEAR(CommGroup(Topology(spec), iota(0, 128)).seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), 5.790e-3, 1e-6);
}

// Pairwise all-to-all, S = 2^30 (each member's whole send buffer).
//  * one node of 8: (7/8)·S / 370e9 = 2.5393 ms (nccl-tests factor (n−1)/n).
//  * 2 nodes × 8 (an EP16 group): each GPU sends 7·S/16 over NVLink and 8·S/16 through its own
//    NIC; NIC-bound: (8/16)·2^30 / 46e9 = 11.671 ms; plus 15 steps × α = 15·5 us.
TEST(CollectiveTest, AllToAllCosts) {
  EXPECT_NEAR(CommGroup(one_node(), iota(0, 8)).seconds(K::kAllToAll, A::kPairwise, Bytes{kGiB}), 2.5393e-3, 1e-7);
  TopologySpec spec = sixteen_nodes();
  spec.intra_node.latency = 2e-6;
  spec.inter_node.latency = 5e-6;
  const Topology t(spec);
  const CommGroup ep(t, iota(0, 16));
  const CollectiveCost c = ep.cost(K::kAllToAll, A::kPairwise, Bytes{kGiB});
  EXPECT_NEAR(c.bandwidth_seconds, 11.671e-3, 1e-6);
  EXPECT_NEAR(c.latency_seconds, 75e-6, 1e-12);
  // busBW = (15/16)·S / (S/2 / 46e9) = 86.25 GB/s.
  EXPECT_NEAR(ep.bus_bandwidth(K::kAllToAll, A::kPairwise).bytes_per_second, 86.25e9, 1e3);
}

// Send/recv of 2^27 B (128 MiB): NVLink 2^27/370e9 + 2 us = 0.36475 ms; across nodes
// 2^27/46e9 + 5 us = 2.92278 ms; across supernodes with oversubscription 2: 2^27/23e9 + 8 us.
TEST(CollectiveTest, SendRecvCosts) {
  TopologySpec spec = sixteen_nodes();
  spec.intra_node.latency = 2e-6;
  spec.inter_node.latency = 5e-6;
  spec.nodes_per_supernode = 8;
  spec.inter_supernode = LinkSpec{.bandwidth = 46e9, .latency = 8e-6};
  spec.oversubscription = 2;
  const Topology t(spec);
  const Bytes s{134217728};
  const std::vector<int> intra{0, 1}, inter{0, 8}, cross{3, 67};
  EXPECT_NEAR(CommGroup(t, intra).seconds(K::kSendRecv, A::kDirect, s), 0.36475e-3, 1e-8);
  EXPECT_NEAR(CommGroup(t, inter).seconds(K::kSendRecv, A::kDirect, s), 2.92278e-3, 1e-8);
  EXPECT_NEAR(CommGroup(t, cross).seconds(K::kSendRecv, A::kDirect, s), 134217728 / 23e9 + 8e-6, 1e-12);
}

TEST(CollectiveTest, GroupOfOneCostsNothing) {
  const Topology t = one_node();
  const std::vector<int> solo{5};
  const CommGroup g(t, solo);
  EXPECT_EQ(g.bottleneck(), LinkClass::kLocal);
  EXPECT_EQ(g.seconds(K::kAllReduce, A::kRing, Bytes{kGiB}), 0.0);
  EXPECT_TRUE(g.plan(K::kAllReduce, A::kRing).phases.empty());
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(CollectiveTest, InvalidInputsThrowWithMessage) {
  const Topology t(sixteen_nodes());
  const std::vector<int> dup{1, 2, 1}, out{0, 128}, empty{}, uneven{0, 1, 8};
  EXPECT_EQ(error_of([&] { CommGroup(t, dup); }), "communicator: GPU 1 is listed twice");
  EXPECT_EQ(error_of([&] { CommGroup(t, out); }), "communicator: GPU 128 is outside the cluster [0, 128)");
  EXPECT_EQ(error_of([&] { CommGroup(t, empty); }), "communicator: a group needs at least one GPU");
  const CommGroup g(t, uneven);
  EXPECT_EQ(error_of([&] { (void)g.seconds(K::kReduceScatter, A::kTree, Bytes{1}); }),
            "collective algorithm tree is not defined for reduce-scatter (allowed: ring)");
  EXPECT_EQ(error_of([&] { (void)g.seconds(K::kSendRecv, A::kDirect, Bytes{1}); }),
            "send-recv needs a group of exactly 2 GPUs (source, destination), got 3");
  EXPECT_THAT(error_of([&] { (void)g.plan(K::kAllReduce, A::kHierarchical); }),
              HasSubstr("hierarchical all-reduce needs the same number of group members on every node"));
  EXPECT_THAT(error_of([&] { (void)g.seconds(K::kAllReduce, A::kRing, Bytes{-1}); }),
              HasSubstr("collective size must be finite and >= 0 bytes"));
}

}  // namespace
}  // namespace mofasim::topology
