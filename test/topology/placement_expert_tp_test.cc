// Expert tensor parallelism of any size Megatron accepts (placement.h): the expert-TP, ETP×EP and
// expert-DP groups of the expert layout etp-ep-edp-pp, listed by hand from Megatron's expert
// RankGenerator (rank = etp_i + etp·(ep_i + ep·(edp_i + edp·pp_i)) for the default order).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "topology/placement.h"

namespace mofasim::topology {
namespace {

using ::testing::ElementsAre;

std::vector<int> v(std::span<const int> s) { return {s.begin(), s.end()}; }

TEST(PlacementExpertTp, EtpBelowTp) {
  // tp 4, dp 4, ep 4, etp 2 (16 GPUs): edp = 16 / (4·2) = 2. Expert TP pairs, EP strided by 2 over
  // the first 8 ranks, the ETP×EP group the first 8 ranks, expert-DP pairs 8 apart.
  const Placement p({.tp = 4, .cp = 1, .ep = 4, .dp = 4, .pp = 1, .etp = 2}, RankOrder());
  EXPECT_THAT(v(p.members_of(GroupKind::kTp, 0)), ElementsAre(0, 1, 2, 3));  // the dense TP group
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertTp, 0)), ElementsAre(0, 1));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertTp, 7)), ElementsAre(6, 7));
  EXPECT_THAT(v(p.members_of(GroupKind::kEp, 0)), ElementsAre(0, 2, 4, 6));
  EXPECT_THAT(v(p.members_of(GroupKind::kEp, 9)), ElementsAre(9, 11, 13, 15));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertTpEp, 0)), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDp, 3)), ElementsAre(3, 11));
  EXPECT_EQ(p.group_size(GroupKind::kExpertTpEp), 8);
  // Without building the placement: rank 0's groups as the analytic model asks for them.
  EXPECT_THAT(group_members_of(p.sizes(), RankOrder(), GroupKind::kExpertTp, 5), ElementsAre(4, 5));
  EXPECT_THAT(group_members_of(p.sizes(), RankOrder(), GroupKind::kExpertTpEp, 12),
              ElementsAre(8, 9, 10, 11, 12, 13, 14, 15));
}

TEST(PlacementExpertTp, EtpAboveTp) {
  // tp 2, dp 8, ep 2, etp 4 (Megatron only needs etp·ep·pp to divide the world): edp = 16/8 = 2.
  // An expert-TP group spans two dense TP pairs.
  const Placement p({.tp = 2, .cp = 1, .ep = 2, .dp = 8, .pp = 1, .etp = 4}, RankOrder());
  EXPECT_THAT(v(p.members_of(GroupKind::kTp, 0)), ElementsAre(0, 1));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertTp, 0)), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(v(p.members_of(GroupKind::kEp, 0)), ElementsAre(0, 4));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDp, 0)), ElementsAre(0, 8));
  EXPECT_EQ(p.sizes().expert_dp(), 2);
}

TEST(PlacementExpertTp, MetaOrderWithPipeline) {
  // tp-cp-ep-pp-dp, tp 4, dp 2, pp 2, ep 2, etp 2: edp = 8/4 = 2 = dp, as Megatron asserts for an
  // order not ending in pp. Expert layout: etp stride 1, ep stride 2, pp stride 4, edp stride 8.
  const RankOrder meta = RankOrder::parse("tp-cp-ep-pp-dp");
  const Placement p({.tp = 4, .cp = 1, .ep = 2, .dp = 2, .pp = 2, .etp = 2}, meta);
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertTp, 0)), ElementsAre(0, 1));
  EXPECT_THAT(v(p.members_of(GroupKind::kEp, 0)), ElementsAre(0, 2));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertTpEp, 0)), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDp, 0)), ElementsAre(0, 8));
  EXPECT_THAT(v(p.members_of(GroupKind::kPp, 0)), ElementsAre(0, 4));
}

}  // namespace
}  // namespace mofasim::topology
