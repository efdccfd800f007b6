// Rank orders Megatron accepts beyond the default (Meta's Llama 3 order tp-cp-ep-pp-dp among
// them) and HSDP's shard / replica groups, checked against groups worked out by hand from
// Megatron's RankGenerator (generate_masked_orthogonal_rank_groups: a dimension's stride is the
// product of the sizes listed before it) and its partial distributed optimizer
// (parallel_state.py: consecutive intra-partial slices of the ascending dp-cp group;
// create_hierarchical_groups for the inter-partial ones).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "topology/placement.h"

namespace mofasim::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<int> v(std::span<const int> s) { return {s.begin(), s.end()}; }

std::string placement_error(const ParallelSizes& sizes, const std::string& order) {
  try {
    Placement(sizes, RankOrder::parse(order));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(RankOrderMegatron, AcceptsAnyPermutation) {
  EXPECT_EQ(RankOrder::parse("tp-cp-ep-pp-dp").to_string(), "tp-cp-ep-pp-dp");
  EXPECT_EQ(RankOrder::parse("cp-tp-ep-dp-pp").to_string(), "cp-tp-ep-dp-pp");
  EXPECT_EQ(RankOrder::parse("tp-cp-pp-ep-dp").position(ParallelDim::kPp), 2);
}

TEST(RankOrderMegatron, MetaOrderPutsRanksWhereMegatronDoes) {
  // tp 2, cp 2, pp 2, dp 2 in tp-cp-ep-pp-dp: strides tp 1, cp 2, (ep 1), pp 4, dp 8.
  const Placement p({.tp = 2, .cp = 2, .ep = 1, .dp = 2, .pp = 2}, RankOrder::parse("tp-cp-ep-pp-dp"));
  EXPECT_THAT(v(p.members_of(GroupKind::kTp, 5)), ElementsAre(4, 5));
  EXPECT_THAT(v(p.members_of(GroupKind::kCp, 5)), ElementsAre(5, 7));
  EXPECT_THAT(v(p.members_of(GroupKind::kPp, 5)), ElementsAre(1, 5));
  EXPECT_THAT(v(p.members_of(GroupKind::kDp, 5)), ElementsAre(5, 13));
  // Megatron's get_ranks('dp-cp'): cp and dp vary, tp and pp fixed.
  EXPECT_THAT(v(p.members_of(GroupKind::kDpCp, 0)), ElementsAre(0, 2, 8, 10));
  EXPECT_THAT(v(p.members_of(GroupKind::kDpCp, 5)), ElementsAre(5, 7, 13, 15));
  // Without EP the experts' gradients go with the dense ones, over dp-cp.
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDp, 5)), ElementsAre(5, 7, 13, 15));
  EXPECT_EQ(p.coordinate(ParallelDim::kPp, 5), 1);
  EXPECT_EQ(p.coordinate(ParallelDim::kDp, 13), 1);
  // The default order tp-cp-ep-dp-pp on the same grid: dp stride 4, pp stride 8.
  const Placement d({.tp = 2, .cp = 2, .ep = 1, .dp = 2, .pp = 2}, RankOrder());
  EXPECT_THAT(v(d.members_of(GroupKind::kDp, 5)), ElementsAre(1, 5));
  EXPECT_THAT(v(d.members_of(GroupKind::kPp, 5)), ElementsAre(5, 13));
}

TEST(RankOrderMegatron, MetaOrderWithExpertsNeedsEpEqualToCp) {
  // pp not last: Megatron asserts edp = tp*cp*dp/(ep*etp) == dp. With cp = ep = 2 the EP groups are the
  // CP groups and the expert-DP groups the DP groups.
  const Placement p({.tp = 1, .cp = 2, .ep = 2, .dp = 2, .pp = 2}, RankOrder::parse("tp-cp-ep-pp-dp"));
  EXPECT_THAT(v(p.members_of(GroupKind::kEp, 2)), ElementsAre(2, 3));
  EXPECT_THAT(v(p.members_of(GroupKind::kCp, 2)), ElementsAre(2, 3));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDp, 2)), ElementsAre(2, 6));
  EXPECT_THAT(v(p.members_of(GroupKind::kDp, 2)), ElementsAre(2, 6));
  EXPECT_THAT(placement_error({.tp = 1, .cp = 1, .ep = 2, .dp = 4, .pp = 2}, "tp-cp-ep-pp-dp"),
              HasSubstr("parallelism.rank_order: 'tp-cp-ep-pp-dp' does not end in pp, so Megatron needs the expert-DP "
                        "size tp*cp*dp/(ep*etp) = 2 to equal dp = 4"));
  // tp-ep-pp-cp-dp: before pp come tp and ep, so the attention layout (ep of size 1) has PP
  // stride 1 and the expert one stride ep = 2; the two layouts' pipelines differ.
  EXPECT_THAT(placement_error({.tp = 1, .cp = 2, .ep = 2, .dp = 2, .pp = 2}, "tp-ep-pp-cp-dp"),
              HasSubstr("gives the attention and the MoE layers different pipeline groups (ranks 1 vs 2 apart)"));
  // pp last: any order is Megatron's, e.g. cp before tp.
  EXPECT_EQ(placement_error({.tp = 2, .cp = 2, .ep = 2, .dp = 2, .pp = 2}, "cp-tp-ep-dp-pp"), "no error");
}

TEST(HsdpPlacement, ShardGroupsAreConsecutiveSlicesAndReplicasStrided) {
  // cp 2 x dp 4 = one dp-cp group of all 8 ranks, N = 2 instances: shards of 4.
  const Placement p({.tp = 1, .cp = 2, .ep = 2, .dp = 4, .pp = 1, .dist_opt_instances = 2}, RankOrder());
  EXPECT_EQ(p.group_size(GroupKind::kDpCpShard), 4);
  EXPECT_EQ(p.group_size(GroupKind::kDpCpReplica), 2);
  EXPECT_THAT(v(p.members(GroupKind::kDpCpShard, 0)), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(v(p.members(GroupKind::kDpCpShard, 1)), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(v(p.members_of(GroupKind::kDpCpReplica, 6)), ElementsAre(2, 6));
  EXPECT_EQ(p.index_in_group(GroupKind::kDpCpReplica, 6), 1);
  // Experts: ep 2 before dp, edp = 4: expert-DP groups {0,2,4,6} and {1,3,5,7}, each cut in 2;
  // level 1 of create_hierarchical_groups([2, 2]) on 0,2,4,6 gives {0,4} and {2,6}.
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDp, 0)), ElementsAre(0, 2, 4, 6));
  EXPECT_THAT(v(p.members(GroupKind::kExpertDpShard, 0)), ElementsAre(0, 2));
  EXPECT_THAT(v(p.members(GroupKind::kExpertDpShard, 1)), ElementsAre(1, 3));
  EXPECT_THAT(v(p.members(GroupKind::kExpertDpShard, 2)), ElementsAre(4, 6));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDpReplica, 2)), ElementsAre(2, 6));
  EXPECT_THAT(v(p.members_of(GroupKind::kExpertDpReplica, 5)), ElementsAre(1, 5));
}

TEST(HsdpPlacement, OneInstanceIsTheWholeGroup) {
  const Placement p({.tp = 2, .cp = 1, .ep = 1, .dp = 4, .pp = 2}, RankOrder());
  for (int r = 0; r < p.world_size(); ++r) {
    EXPECT_EQ(v(p.members_of(GroupKind::kDpCpShard, r)), v(p.members_of(GroupKind::kDpCp, r)));
    EXPECT_THAT(v(p.members_of(GroupKind::kDpCpReplica, r)), ElementsAre(r));
  }
}

TEST(HsdpPlacement, RankZeroGroupsMatchThePlacement) {
  // group_members_of (what the closed form prices) against the full placement, every kind.
  for (const char* order : {"tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp", "tp-dp-ep-cp-pp", "dp-cp-ep-tp-pp"}) {
    const ParallelSizes sizes{.tp = 2, .cp = 2, .ep = 1, .dp = 6, .pp = 2, .dist_opt_instances = 3};
    const Placement p(sizes, RankOrder::parse(order));
    for (int k = 0; k < kGroupKindCount; ++k) {
      const auto kind = static_cast<GroupKind>(k);
      for (int rank : {0, 7, 47}) {
        EXPECT_EQ(group_members_of(sizes, RankOrder::parse(order), kind, rank), v(p.members_of(kind, rank)))
            << group_kind_name(kind) << " of rank " << rank << " in " << order;
      }
    }
  }
}

TEST(HsdpPlacement, InstancesMustDivideBothDataParallelGroups) {
  EXPECT_THAT(placement_error({.tp = 1, .cp = 1, .ep = 1, .dp = 6, .pp = 1, .dist_opt_instances = 4}, "tp-cp-ep-dp-pp"),
              HasSubstr("num_distributed_optimizer_instances: must divide dp*cp = 6 and the expert-DP size 6, got 4"));
  // dp 8, ep 4: edp = 2, so 4 instances divide dp but not edp.
  EXPECT_THAT(placement_error({.tp = 1, .cp = 1, .ep = 4, .dp = 8, .pp = 1, .dist_opt_instances = 4}, "tp-cp-ep-dp-pp"),
              HasSubstr("must divide dp*cp = 8 and the expert-DP size 2, got 4"));
}

}  // namespace
}  // namespace mofasim::topology
