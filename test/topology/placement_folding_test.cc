// MoE parallel folding (placement.h): expert groups from the expert layout etp-ep-edp-pp, listed
// by hand from Megatron's expert RankGenerator, and the two hops of the DeepEP all-to-all
// (collective.h) against hand-worked costs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "topology/comm_group.h"
#include "topology/placement.h"

namespace mofasim::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<int> v(std::span<const int> s) { return {s.begin(), s.end()}; }

TEST(PlacementFolding, EtpOneFoldsEpOverTensorAndDataRanks) {
  // tp 2, dp 4, ep 4, etp 1 (8 GPUs): expert rank = etp_i + 1·(ep_i + 4·edp_i), edp = 8/(4·1) = 2.
  // EP groups are 4 consecutive ranks (spanning both TP ranks), expert-DP pairs are 4 apart.
  const Placement p({.tp = 2, .cp = 1, .ep = 4, .dp = 4, .pp = 1, .etp = 1}, RankOrder());
  EXPECT_EQ(p.group_size(GroupKind::kEp), 4);
  EXPECT_THAT(v(p.members(GroupKind::kEp, 0)), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(v(p.members(GroupKind::kEp, 1)), ElementsAre(4, 5, 6, 7));
  EXPECT_EQ(p.group_size(GroupKind::kExpertDp), 2);
  EXPECT_THAT(v(p.members(GroupKind::kExpertDp, 0)), ElementsAre(0, 4));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDp, 6)), ElementsAre(2, 6));
  // The dense groups do not move: TP pairs, DP strided by tp.
  EXPECT_THAT(v(p.members(GroupKind::kTp, 0)), ElementsAre(0, 1));
  EXPECT_THAT(v(p.members(GroupKind::kDp, 0)), ElementsAre(0, 2, 4, 6));
  EXPECT_EQ(p.sizes().expert_dp(), 2);
}

TEST(PlacementFolding, EpMayExceedDpTimesCp) {
  // ep 8 > dp·cp = 4: the whole world is one EP group and every expert has one copy (edp 1).
  const Placement p({.tp = 2, .cp = 1, .ep = 8, .dp = 4, .pp = 1, .etp = 1}, RankOrder());
  EXPECT_THAT(v(p.members(GroupKind::kEp, 0)), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(p.group_size(GroupKind::kExpertDp), 1);
  // Without folding (etp = tp) the same ep is refused: 8·2 does not divide 8.
  try {
    Placement({.tp = 2, .cp = 1, .ep = 8, .dp = 4, .pp = 1}, RankOrder());
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "parallelism.ep: ep*etp = 16 must divide tp*cp*dp = 8 (the expert layout folds over the tp*cp*dp ranks)");
  }
}

TEST(PlacementFolding, EtpEqualToTpIsTheUnfoldedLayout) {
  // etp = tp gives exactly the groups of the default (etp 0 = tp), for every kind and rank.
  for (const char* order : {"tp-cp-ep-dp-pp", "tp-cp-dp-ep-pp", "tp-pp-cp-ep-dp"}) {
    const ParallelSizes base{.tp = 2, .cp = 2, .ep = 2, .dp = 4, .pp = 2};
    ParallelSizes same = base;
    same.etp = 2;
    const Placement a(base, RankOrder::parse(order));
    const Placement b(same, RankOrder::parse(order));
    for (int k = 0; k < kGroupKindCount; ++k) {
      for (int r = 0; r < a.world_size(); ++r) {
        EXPECT_EQ(v(a.members_of(static_cast<GroupKind>(k), r)), v(b.members_of(static_cast<GroupKind>(k), r)))
            << order << " kind " << k << " rank " << r;
      }
    }
  }
}

TEST(PlacementFolding, FoldedPipelineGroupsMustMatchTheDenseOnes) {
  // With pp inside the order, etp != tp would move the pipeline stages of the expert layout:
  // tp-pp-cp-ep-dp puts tp = 2 dense ranks but etp = 1 expert rank before pp. Megatron takes the
  // pp-last order; any other order needs edp = dp, which pp first does not give here (edp 1, dp 2).
  const ParallelSizes sizes{.tp = 2, .cp = 1, .ep = 4, .dp = 2, .pp = 2, .etp = 1};
  EXPECT_NO_THROW(Placement(sizes, RankOrder()));
  EXPECT_THROW(Placement(sizes, RankOrder::parse("pp-tp-cp-ep-dp")), std::invalid_argument);
  try {
    Placement(sizes, RankOrder::parse("tp-pp-cp-ep-dp"));
    FAIL();
  } catch (const std::invalid_argument& e) {
    // Megatron's first refusal: the order does not end in pp and edp = 2*1*2/(4*1) = 1 != dp = 2.
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("parallelism.rank_order: 'tp-pp-cp-ep-dp' does not end in pp, so Megatron needs the "
                          "expert-DP size tp*cp*dp/(ep*etp) = 1 to equal dp = 2"));
  }
  // edp = dp (ep 2 over tp 2 with etp 1: edp = 2*1*2/2 = 2) passes the first check; the pipeline
  // strides still differ (dense tp 2 before pp, expert etp 1 * ... = 1), the second refusal.
  try {
    Placement({.tp = 2, .cp = 1, .ep = 2, .dp = 2, .pp = 2, .etp = 1}, RankOrder::parse("tp-pp-cp-ep-dp"));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("different pipeline groups (ranks 2 vs 1 apart)"));
  }
}

TEST(PlacementFolding, NodesSpannedByTheEpGroup) {
  // tp 2, dp 32, ep 16, etp 1 on 4-GPU nodes: EP = ranks 0..15 = 4 nodes; carved out of dp
  // (etp = tp) the EP group is strided by 2 and spans 8 nodes.
  EXPECT_EQ(nodes_spanned({.tp = 2, .cp = 1, .ep = 16, .dp = 32, .pp = 1, .etp = 1}, RankOrder(), GroupKind::kEp, 4), 4);
  EXPECT_EQ(nodes_spanned({.tp = 2, .cp = 1, .ep = 16, .dp = 32, .pp = 1, .etp = 2}, RankOrder(), GroupKind::kEp, 4), 8);
}

// EP 16 over 2 nodes of 8 GPUs, 46 GB/s NICs (one per GPU) and 370 GB/s NVLink, S = 2^30:
//   all-to-all:  NIC-bound, (8/16)·S / 46e9 = 11.671 ms (collective_test.cc);
//   scale-out:   the same NIC term, and only 1 scale-out α step (2 nodes);
//   scale-up:    (7/8)·S / 370e9 = 2.5393 ms, 7 NVLink α steps.
TEST(DeepEpHops, ScaleOutIsTheNicTermAndScaleUpTheNvlinkTerm) {
  const TopologySpec spec{.gpus = 16,
                          .gpus_per_node = 8,
                          .intra_node = {.bandwidth = 370e9, .latency = 2e-6},
                          .inter_node = {.bandwidth = 46e9, .latency = 5e-6}};
  const Topology t(spec);
  std::vector<int> gpus;
  for (int g = 0; g < 16; ++g) gpus.push_back(g);
  const CommGroup ep(t, gpus);
  constexpr double kS = 1073741824.0;
  const CollectiveCost out = ep.cost(CollectiveKind::kAllToAllScaleOut, CollectiveAlgorithm::kPairwise, Bytes{kS});
  EXPECT_NEAR(out.bandwidth_seconds, 0.5 * kS / 46e9, 1e-12);
  EXPECT_NEAR(out.latency_seconds, 5e-6, 1e-15);
  const CollectiveCost up = ep.cost(CollectiveKind::kAllToAllScaleUp, CollectiveAlgorithm::kPairwise, Bytes{kS});
  EXPECT_NEAR(up.bandwidth_seconds, 7.0 / 8 * kS / 370e9, 1e-12);
  EXPECT_NEAR(up.latency_seconds, 7 * 2e-6, 1e-15);
  // On one node the scale-up hop is the all-to-all itself.
  const CommGroup node(t, std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_DOUBLE_EQ(node.seconds(CollectiveKind::kAllToAllScaleUp, CollectiveAlgorithm::kPairwise, Bytes{kS}),
                   node.seconds(CollectiveKind::kAllToAll, CollectiveAlgorithm::kPairwise, Bytes{kS}));
  EXPECT_EQ(node.seconds(CollectiveKind::kAllToAllScaleOut, CollectiveAlgorithm::kPairwise, Bytes{kS}), 0);
}

}  // namespace
}  // namespace mofasim::topology
