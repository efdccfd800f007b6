// NCCL's protocol model (topology/nccl_protocols.h) against hand-worked values from the constants
// of nccl_model.csv: base + per-hop latencies, protocol bandwidth factors, NVLS, and the plan that
// the replay runs agreeing with the closed form.
#include <gtest/gtest.h>

#include <vector>

#include "topology/comm_group.h"
#include "topology/nccl_protocols.h"

namespace mofasim::topology {
namespace {

using A = CollectiveAlgorithm;
using K = CollectiveKind;

constexpr double kGiB = 1073741824.0;

std::vector<int> first(int n) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(i);
  return out;
}

// One 8-GPU Hopper node, NVLink busBW 370 GB/s, NCCL model, LL capped at 141 GB/s.
TopologySpec hopper_node(bool sharp) {
  return {.gpus = 8, .gpus_per_node = 8, .intra_node = {.bandwidth = 370e9, .latency = 2e-6},
          .collectives = {.model = CollectiveModel::kNccl, .ll_max_bandwidth = 141e9, .nvlink_sharp = sharp}};
}

TEST(NcclProtocols, SmallAllReduceTakesLlWithItsLatencyAndHalvedBandwidth) {
  const Topology t(hopper_node(false));
  const CommGroup g(t, first(8));
  // LL: 6.6 + 2·7 steps · 0.6 µs = 15.0 µs; busBW min(141, 370/2) = 141 -> factor 370/141 on the
  // α–β term 1.75 · 8192 / 370e9. (LL128 would be 14 + 14·1.9 = 40.6 µs, Simple 8.4 + 14·3.4 = 56 µs.)
  const CollectiveCost c = g.cost(K::kAllReduce, A::kRing, Bytes{8192});
  EXPECT_EQ(c.protocol, Protocol::kLL);
  EXPECT_NEAR(c.latency_seconds, 15.0e-6, 1e-12);
  EXPECT_NEAR(c.bandwidth_seconds, 370.0 / 141.0 * 1.75 * 8192 / 370e9, 1e-15);
}

TEST(NcclProtocols, LargeAllReduceTakesSimpleAtFullBusBandwidth) {
  const Topology t(hopper_node(false));
  const CommGroup g(t, first(8));
  // Simple: 56 µs + 2^30 · 1.75 / 370e9 = 5.0785 ms; LL128 would pay 1/0.92 of the bytes.
  const CollectiveCost c = g.cost(K::kAllReduce, A::kRing, Bytes{kGiB});
  EXPECT_EQ(c.protocol, Protocol::kSimple);
  EXPECT_NEAR(c.latency_seconds, 56.0e-6, 1e-12);
  EXPECT_NEAR(c.seconds(), 56.0e-6 + kGiB * 1.75 / 370e9, 1e-12);
  // All-gather: 7 steps, Simple 8.4 + 7 · 3.4 = 32.2 µs.
  EXPECT_NEAR(g.cost(K::kAllGather, A::kRing, Bytes{kGiB}).latency_seconds, 32.2e-6, 1e-12);
  EXPECT_DOUBLE_EQ(g.bus_bandwidth(K::kAllReduce, A::kRing).bytes_per_second, 370e9);
}

TEST(NcclProtocols, MidSizeAllReduceTakesLl128) {
  const Topology t(hopper_node(false));
  const CommGroup g(t, first(8));
  // 16 MiB: α–β term 1.75 · 2^24 / 370e9 = 79.36 µs. LL 15 + 2.624·79.36 = 223.2; LL128
  // 40.6 + 79.36/0.92 = 126.9; Simple 56 + 79.36 = 135.4 µs.
  const double ab = 1.75 * 16777216 / 370e9;
  const CollectiveCost c = g.cost(K::kAllReduce, A::kRing, Bytes{16777216});
  EXPECT_EQ(c.protocol, Protocol::kLL128);
  EXPECT_NEAR(c.seconds(), 40.6e-6 + ab / 0.92, 1e-12);
}

TEST(NcclProtocols, NvlinkSharpTakesLargeAllReducesFromFiveGpus) {
  const Topology t(hopper_node(true));
  const CommGroup g(t, first(8));
  // NVLS: 25 µs; each GPU moves S once at 370e9 · 0.85 · 15/16 = 294.84 GB/s:
  // 2^30 / 294.84e9 = 3.6418 ms (+25 µs); the ring's Simple would take 5.1345 ms.
  const CollectiveCost c = g.cost(K::kAllReduce, A::kRing, Bytes{kGiB});
  EXPECT_EQ(c.protocol, Protocol::kNvls);
  EXPECT_NEAR(c.seconds(), 25e-6 + kGiB / (370e9 * 0.85 * 15 / 16), 1e-12);
  // nccl-tests busBW of NVLS on 8 GPUs: 294.84 · 1.75 = 515.98 GB/s.
  EXPECT_NEAR(g.bus_bandwidth(K::kAllReduce, A::kRing).bytes_per_second, 370e9 * 0.85 * 15 / 16 * 1.75, 1e3);
  // Small messages stay on LL (25 µs is more than LL's 15 µs).
  EXPECT_EQ(g.cost(K::kAllReduce, A::kRing, Bytes{8192}).protocol, Protocol::kLL);
  // Four GPUs: no NVLS (the H200 sweep used Ring at 4 GPUs).
  const CommGroup four(t, first(4));
  EXPECT_EQ(four.cost(K::kAllReduce, A::kRing, Bytes{kGiB}).protocol, Protocol::kSimple);
  // NVLS is all-reduce only.
  EXPECT_EQ(g.cost(K::kAllGather, A::kRing, Bytes{kGiB}).protocol, Protocol::kSimple);
}

TEST(NcclProtocols, MultiNodeRingAndTreeChargeNetworkHops) {
  const TopologySpec spec{.gpus = 16, .gpus_per_node = 8, .intra_node = {.bandwidth = 370e9},
                          .inter_node = {.bandwidth = 46e9},
                          .collectives = {.model = CollectiveModel::kNccl, .ll_max_bandwidth = 141e9}};
  const Topology t(spec);
  const CommGroup g(t, first(16));
  // Ring all-reduce over 2 nodes: 30 steps, 2 of them cross nodes.
  // Simple: 8.4 + 28·3.4 + 2·14 = 131.6 µs. busBW = min(8·46, 8/7·370) = 368 GB/s.
  const CollectiveCost ring = g.cost(K::kAllReduce, A::kRing, Bytes{kGiB});
  EXPECT_EQ(ring.protocol, Protocol::kSimple);
  EXPECT_NEAR(ring.latency_seconds, 131.6e-6, 1e-12);
  EXPECT_NEAR(ring.bandwidth_seconds, kGiB * 2 * 15 / 16 / 368e9, 1e-12);
  // LL on a small message: 6.6 + 28·0.6 + 2·2.7 = 28.8 µs.
  EXPECT_NEAR(g.cost(K::kAllReduce, A::kRing, Bytes{1024}).latency_seconds, 28.8e-6, 1e-12);
  // Tree over 2 nodes: LL128 (bytes · 128/120) beats Simple (bytes / 0.92) even at 1 GiB:
  // latency 14 + 2·(7·1.25 + 1·8.5) = 48.5 µs (Simple would be 8.4 + 2·(7·4.0 + 1·14) = 92.4 µs).
  const CollectiveCost tree = g.cost(K::kAllReduce, A::kTree, Bytes{kGiB});
  EXPECT_EQ(tree.protocol, Protocol::kLL128);
  EXPECT_NEAR(tree.latency_seconds, 48.5e-6, 1e-12);
  EXPECT_NEAR(tree.bandwidth_seconds, kGiB * 2 * 15 / 16 / 368e9 * 128 / 120, 1e-12);
}

TEST(NcclProtocols, AlphaBetaModelIsUnchanged) {
  TopologySpec spec = hopper_node(true);
  spec.collectives.model = CollectiveModel::kAlphaBeta;
  const Topology t(spec);
  const CommGroup g(t, first(8));
  // 14 steps · 2 µs + 2^30 · 1.75 / 370e9.
  const CollectiveCost c = g.cost(K::kAllReduce, A::kRing, Bytes{kGiB});
  EXPECT_EQ(c.protocol, Protocol::kAlphaBeta);
  EXPECT_NEAR(c.seconds(), 28e-6 + kGiB * 1.75 / 370e9, 1e-12);
  EXPECT_EQ(g.plan(K::kAllReduce, A::kRing).protocols.count, 0);
}

// The replay picks the plan's cheapest option for S · seconds_per_byte and multiplies the bytes:
// alone, that is exactly the closed form, for every size and protocol.
TEST(NcclProtocols, PlanOptionsReproduceTheClosedForm) {
  const Topology t(hopper_node(true));
  const CommGroup g(t, first(8));
  for (A alg : {A::kRing, A::kTree}) {
    const CollectivePlan plan = g.plan(K::kAllReduce, alg);
    ASSERT_EQ(plan.phases.size(), 1u);
    for (double bytes : {1024.0, 1048576.0, 16777216.0, kGiB}) {
      const int i = plan.protocols.cheapest(bytes * plan.seconds_per_byte);
      ASSERT_GE(i, 0);
      const ProtocolOption& o = plan.protocols.items[static_cast<std::size_t>(i)];
      const double per_byte_alone = plan.phases[0].shares[0].bytes_per_byte / 370e9;  // every NVLink port alike
      EXPECT_NEAR(o.latency_seconds + bytes * o.byte_factor * per_byte_alone,
                  g.seconds(K::kAllReduce, alg, Bytes{bytes}), 1e-12)
          << collective_algorithm_name(alg) << " " << bytes;
    }
  }
}

TEST(NcclProtocols, SpecRejectsBadTuning) {
  TopologySpec spec = hopper_node(true);
  spec.collectives.nvls_efficiency = 1.5;
  EXPECT_THROW(
      {
        try {
          spec.validate();
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "topology.collectives.nvls_efficiency: must be in (0, 1], got 1.5");
          throw;
        }
      },
      std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::topology
