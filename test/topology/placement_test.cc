// Rank orders and group membership, checked against groups listed by hand from the Megatron
// numbering rank = tp_i + tp·(cp_i + cp·(dp_i + dp·pp_i)).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "topology/group_shape.h"
#include "topology/placement.h"
#include "topology/topology.h"

namespace mofasim::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<int> v(std::span<const int> s) { return {s.begin(), s.end()}; }

// 64 GPUs, 8 per node, 2 nodes per supernode: GPU g is on node g/8, supernode g/16.
Topology three_level() {
  return Topology({.gpus = 64,
                   .gpus_per_node = 8,
                   .nodes_per_supernode = 2,
                   .intra_node = {.bandwidth = 370e9},
                   .inter_node = {.bandwidth = 46e9}});
}

std::string parse_error(std::string_view text) {
  try {
    RankOrder::parse(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(RankOrderTest, ParsesAndPrints) {
  EXPECT_EQ(RankOrder::parse("tp-cp-ep-dp-pp").to_string(), "tp-cp-ep-dp-pp");
  EXPECT_EQ(RankOrder().to_string(), kMegatronRankOrder);
  EXPECT_EQ(RankOrder::parse("pp-tp-dp-ep-cp").position(ParallelDim::kPp), 0);
}

TEST(RankOrderTest, RejectsBadOrders) {
  EXPECT_EQ(parse_error("tp-cp-dp-pp"), "no error");  // ep left out: allowed when its size is 1
  EXPECT_THAT(parse_error("tp-cp-xx-dp-pp"), HasSubstr("unknown name 'xx'"));
  EXPECT_THAT(parse_error("tp-tp-ep-dp-pp"), HasSubstr("names 'tp' twice"));
  EXPECT_THAT(parse_error(""), HasSubstr("parallelism.rank_order: '' has an empty name"));
}

TEST(PlacementTest, RejectsBadSizes) {
  EXPECT_THROW(Placement({.tp = 0}, RankOrder()), std::invalid_argument);
  try {
    Placement({.tp = 2, .cp = 2, .ep = 3, .dp = 8, .pp = 2}, RankOrder());
    FAIL() << "ep*etp = 3*2 does not divide tp*cp*dp = 32";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("parallelism.ep: ep*etp = 6 must divide tp*cp*dp = 32"));
  }
  const Placement p({.tp = 2}, RankOrder());
  EXPECT_THROW((void)p.group_of(GroupKind::kTp, 2), std::invalid_argument);
  EXPECT_THROW((void)p.members(GroupKind::kTp, 1), std::invalid_argument);
}

// tp2 cp2 pp2 dp8 ep4 in Megatron order on the 3-level cluster.
//   dense:  rank = tp + 2·cp + 4·dp + 32·pp
//   expert: rank = tp + 2·ep + 8·edp + 32·pp   (edp = cp·dp/ep = 4)
TEST(PlacementTest, MegatronOrderGroupsByHand) {
  const Placement p({.tp = 2, .cp = 2, .ep = 4, .dp = 8, .pp = 2}, RankOrder());
  const Topology t = three_level();
  ASSERT_EQ(p.world_size(), 64);

  EXPECT_THAT(v(p.members_of(GroupKind::kTp, 0)), ElementsAre(0, 1));
  EXPECT_THAT(v(p.members_of(GroupKind::kCp, 5)), ElementsAre(5, 7));  // tp1 cp0 dp1
  EXPECT_THAT(v(p.members_of(GroupKind::kDp, 0)), ElementsAre(0, 4, 8, 12, 16, 20, 24, 28));
  EXPECT_THAT(v(p.members_of(GroupKind::kPp, 3)), ElementsAre(3, 35));
  EXPECT_THAT(v(p.members_of(GroupKind::kEp, 0)), ElementsAre(0, 2, 4, 6));
  EXPECT_THAT(v(p.members_of(GroupKind::kEp, 9)), ElementsAre(9, 11, 13, 15));  // tp1, edp1
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDp, 0)), ElementsAre(0, 8, 16, 24));
  EXPECT_THAT(v(p.members_of(GroupKind::kDpCp, 33)),
              ElementsAre(33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63));

  // Counts, numbering by smallest member, and positions.
  EXPECT_EQ(p.group_count(GroupKind::kTp), 32);
  EXPECT_EQ(p.group_count(GroupKind::kDp), 8);
  EXPECT_EQ(p.group_count(GroupKind::kEp), 16);
  EXPECT_EQ(p.group_of(GroupKind::kTp, 5), 2);      // TP groups {0,1}, {2,3}, {4,5}
  EXPECT_EQ(p.group_of(GroupKind::kDp, 3), 3);      // DP groups start at 0, 1, 2, 3, 32, ...
  EXPECT_EQ(p.group_of(GroupKind::kDp, 33), 5);
  EXPECT_EQ(p.index_in_group(GroupKind::kDp, 12), 3);  // 12 = tp0 cp0 dp3
  // rank 45 = 1 + 2·0 + 4·3 + 32·1; expert: 45 = 1 + 2·2 + 8·1 + 32.
  EXPECT_EQ(p.coordinate(ParallelDim::kTp, 45), 1);
  EXPECT_EQ(p.coordinate(ParallelDim::kCp, 45), 0);
  EXPECT_EQ(p.coordinate(ParallelDim::kDp, 45), 3);
  EXPECT_EQ(p.coordinate(ParallelDim::kPp, 45), 1);
  EXPECT_EQ(p.coordinate(ParallelDim::kEp, 45), 2);

  // Bottleneck classes: TP, CP, EP inside node 0; DP spans GPUs 0..28 = nodes 0..3 = supernodes
  // 0 and 1; PP joins node 0 (supernode 0) and node 4 (supernode 2).
  EXPECT_EQ(bottleneck_class(t, p.members_of(GroupKind::kTp, 0)), LinkClass::kIntraNode);
  EXPECT_EQ(bottleneck_class(t, p.members_of(GroupKind::kCp, 0)), LinkClass::kIntraNode);
  EXPECT_EQ(bottleneck_class(t, p.members_of(GroupKind::kEp, 0)), LinkClass::kIntraNode);
  EXPECT_EQ(bottleneck_class(t, p.members_of(GroupKind::kDp, 0)), LinkClass::kInterSupernode);
  EXPECT_EQ(bottleneck_class(t, p.members_of(GroupKind::kPp, 0)), LinkClass::kInterSupernode);
}

// ep = 8 spans two nodes of one supernode; edp = 2 joins supernodes.
TEST(PlacementTest, ExpertGroupsSpanningNodes) {
  const Placement p({.tp = 2, .cp = 2, .ep = 8, .dp = 8, .pp = 2}, RankOrder());
  const Topology t = three_level();
  EXPECT_THAT(v(p.members_of(GroupKind::kEp, 0)), ElementsAre(0, 2, 4, 6, 8, 10, 12, 14));
  EXPECT_EQ(bottleneck_class(t, p.members_of(GroupKind::kEp, 0)), LinkClass::kInterNode);
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDp, 1)), ElementsAre(1, 17));
  EXPECT_EQ(bottleneck_class(t, p.members_of(GroupKind::kExpertDp, 1)), LinkClass::kInterSupernode);
}

// ep after dp: expert rank = tp + 2·edp + 8·ep + 32·pp, so EP groups are strided by 8.
TEST(PlacementTest, EpAfterDpIsStrided) {
  const Placement p({.tp = 2, .cp = 2, .ep = 4, .dp = 8, .pp = 2}, RankOrder::parse("tp-cp-dp-ep-pp"));
  EXPECT_THAT(v(p.members_of(GroupKind::kEp, 0)), ElementsAre(0, 8, 16, 24));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDp, 0)), ElementsAre(0, 2, 4, 6));
  EXPECT_THAT(v(p.members_of(GroupKind::kDp, 0)), ElementsAre(0, 4, 8, 12, 16, 20, 24, 28));
}

// pp fastest after tp: rank = tp + 2·pp + 4·cp + 8·dp.
TEST(PlacementTest, CustomOrderMovesPipelineInsideNode) {
  const Placement p({.tp = 2, .cp = 2, .ep = 1, .dp = 8, .pp = 2}, RankOrder::parse("tp-pp-cp-ep-dp"));
  const Topology t = three_level();
  EXPECT_THAT(v(p.members_of(GroupKind::kPp, 0)), ElementsAre(0, 2));
  EXPECT_THAT(v(p.members_of(GroupKind::kCp, 1)), ElementsAre(1, 5));
  EXPECT_THAT(v(p.members_of(GroupKind::kDp, 0)), ElementsAre(0, 8, 16, 24, 32, 40, 48, 56));
  EXPECT_EQ(bottleneck_class(t, p.members_of(GroupKind::kPp, 0)), LinkClass::kIntraNode);
  EXPECT_THAT(v(p.members_of(GroupKind::kEp, 3)), ElementsAre(3));  // ep = 1: groups of one
}

TEST(PlacementTest, EveryRankIsInExactlyOneGroupPerKind) {
  const Placement p({.tp = 2, .cp = 2, .ep = 4, .dp = 8, .pp = 2}, RankOrder::parse("tp-dp-ep-cp-pp"));
  for (int k = 0; k < kGroupKindCount; ++k) {
    const auto kind = static_cast<GroupKind>(k);
    std::vector<int> seen(64, 0);
    for (int g = 0; g < p.group_count(kind); ++g) {
      const auto members = p.members(kind, g);
      for (std::size_t i = 0; i < members.size(); ++i) {
        ++seen[static_cast<std::size_t>(members[i])];
        EXPECT_EQ(p.group_of(kind, members[i]), g);
        EXPECT_EQ(p.index_in_group(kind, members[i]), static_cast<int>(i));
      }
    }
    EXPECT_THAT(seen, ::testing::Each(1)) << group_kind_name(kind);
  }
}

}  // namespace
}  // namespace mofasim::topology
