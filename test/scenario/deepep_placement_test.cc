// Where DeepEP (token_dispatcher_type: flex) can run (sim/scenario/validate_deepep.h): the rule on
// one dispatcher group against hand-placed groups, the validator's group enumeration against the
// placement every command builds (scenario_placement, topology::Placement), and the shipped
// DeepSeek-V3 scenario (EP 64 on whole nodes of 8) loading through it.
#include <gtest/gtest.h>

#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "sim/scenario/scenario_specs.h"
#include "sim/scenario/validate_deepep.h"
#include "topology/placement.h"

namespace mofasim::scenario {
namespace {

std::vector<int> range(int first, int count, int step = 1) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i * step);
  return out;
}

std::vector<int> join(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(DeepEpCanRun, InsideOneNode) {
  EXPECT_TRUE(deepep_can_run(range(0, 8), 8));
  EXPECT_TRUE(deepep_can_run(range(8, 4, 2), 8));   // 8, 10, 12, 14: node 1
  EXPECT_TRUE(deepep_can_run(range(0, 4), 4));      // nodes of 4, a group of 4
  EXPECT_TRUE(deepep_can_run(range(16, 8), 16));    // 8 of a 16-GPU node
  EXPECT_FALSE(deepep_can_run(range(6, 6), 8));     // GPUs 6..11 cross node 0 / node 1
  EXPECT_FALSE(deepep_can_run(range(0, 8), 4));     // 8 ranks over two nodes of 4
  EXPECT_FALSE(deepep_can_run(range(0, 8, 2), 8));  // 0, 2, ..., 14: 4 on each of 2 nodes
}

TEST(DeepEpCanRun, WholeNodes) {
  EXPECT_TRUE(deepep_can_run(range(0, 16), 8));                           // nodes 0 and 1
  EXPECT_TRUE(deepep_can_run(join(range(0, 8), range(24, 8)), 8));        // nodes 0 and 3
  EXPECT_TRUE(deepep_can_run(join(range(0, 8), range(16, 8)), 16));       // local 0..7 on nodes 0 and 1
  EXPECT_FALSE(deepep_can_run(join(range(0, 8), range(24, 8)), 16));      // local 0..7, then 8..15
  EXPECT_FALSE(deepep_can_run(range(0, 16), 16));                         // two RDMA ranks on one node
  EXPECT_FALSE(deepep_can_run(range(0, 16, 2), 8));                       // 4 NVLink peers per node
  EXPECT_FALSE(deepep_can_run(range(0, 12), 8));                          // neither <= 8 nor a multiple of 8
}

// The validator's first refused group is the placement's first (groups numbered by smallest rank).
std::vector<int> first_refused_by_placement(const topology::ParallelSizes& sizes, const std::string& order, int gpus_per_node) {
  const topology::Placement placement(sizes, topology::RankOrder::parse(order));
  for (int g = 0; g < placement.group_count(topology::GroupKind::kExpertTpEp); ++g) {
    const std::span<const int> m = placement.members(topology::GroupKind::kExpertTpEp, g);
    std::vector<int> members(m.begin(), m.end());
    if (!deepep_can_run(members, gpus_per_node)) return members;
  }
  return {};
}

TEST(DeepEpGroups, TheValidatorEnumeratesThePlacementsGroups) {
  struct Layout {
    topology::ParallelSizes sizes;
    std::string order;
    int gpus_per_node;
  };
  const std::vector<Layout> layouts = {
      {{.tp = 1, .ep = 8, .dp = 16, .etp = 1}, "tp-cp-dp-ep-pp", 8},   // ep outermost: 0, 2, ..., 14
      {{.tp = 1, .ep = 8, .dp = 16, .etp = 1}, "tp-cp-ep-dp-pp", 8},   // Megatron's: 0..7
      {{.tp = 2, .ep = 4, .dp = 16, .etp = 2}, "tp-cp-dp-ep-pp", 8},   // etp 2 fastest, ep strided by 4
      {{.tp = 1, .ep = 3, .dp = 24, .etp = 2}, "tp-cp-ep-dp-pp", 8},   // 6..11 crosses a node
      {{.tp = 1, .ep = 8, .dp = 16, .etp = 1}, "tp-cp-ep-dp-pp", 4},   // nodes of 4
      {{.tp = 4, .ep = 8, .dp = 16, .pp = 2, .etp = 2}, "tp-cp-ep-dp-pp", 8},
      {{.tp = 1, .ep = 16, .dp = 32, .etp = 1}, "tp-cp-dp-ep-pp", 16},  // 0, 2, ..., 30: 8 on each 16-GPU node
      {{.tp = 1, .ep = 16, .dp = 32, .etp = 1}, "tp-cp-ep-dp-pp", 16},  // 0..15: two RDMA ranks on node 0
  };
  const std::vector<std::vector<int>> expected = {
      range(0, 8, 2), {}, {0, 1, 8, 9, 16, 17, 24, 25}, range(6, 6), range(0, 8), {}, {}, range(0, 16)};
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    const Layout& l = layouts[i];
    SCOPED_TRACE(l.order + " layout " + std::to_string(i));
    EXPECT_EQ(first_group_deepep_cannot_run(l.sizes, topology::RankOrder::parse(l.order), l.gpus_per_node), expected[i]);
    EXPECT_EQ(first_refused_by_placement(l.sizes, l.order, l.gpus_per_node), expected[i]);
  }
}

TEST(DeepEpGroups, ShippedDeepSeekV3RunsOnWholeNodes) {
  const LoadedScenario s = cli::load_checked(std::string(MOFASIM_SOURCE_DIR) + "/scenarios/deepseek-v3-h800-2048.yaml", {});
  ASSERT_EQ(s.proto.model().moe().token_dispatcher_type(), proto::DISPATCHER_FLEX);
  const topology::Placement placement = cli::scenario_placement(s);
  // ep 64, etp 1 on 2048 GPUs: 32 groups of 64 ranks, each 8 whole nodes of 8.
  ASSERT_EQ(placement.group_size(topology::GroupKind::kExpertTpEp), 64);
  ASSERT_EQ(placement.group_count(topology::GroupKind::kExpertTpEp), 32);
  const std::span<const int> first = placement.members(topology::GroupKind::kExpertTpEp, 0);
  EXPECT_EQ(std::vector<int>(first.begin(), first.end()), range(0, 64));
  for (int g = 0; g < 32; ++g) {
    const std::span<const int> m = placement.members(topology::GroupKind::kExpertTpEp, g);
    EXPECT_TRUE(deepep_can_run(std::vector<int>(m.begin(), m.end()), s.proto.topology().gpus_per_node())) << "group " << g;
  }
}

TEST(DeepEpGroups, ShippedDeepSeekV3WithEpOutermostIsRefused) {
  // ep outermost in the expert layout (edp 2 faster): each EP group takes every other GPU.
  try {
    (void)cli::load_checked(std::string(MOFASIM_SOURCE_DIR) + "/scenarios/deepseek-v3-h800-2048.yaml",
                            {"parallelism.rank_order=tp-cp-dp-ep-pp"});
    FAIL() << "loaded";
  } catch (const ScenarioError& e) {
    const std::string expected =
        "--set:1:24: parallelism.rank_order: 'tp-cp-dp-ep-pp' places the flex (DeepEP) dispatcher group ep*etp = "
        "64*1 = 64 ranks on GPUs 0, 2, 4, 6, 8, 10, 12, 14, ... on 16 nodes of topology.gpus_per_node = 8; ";
    EXPECT_EQ(e.errors().front().substr(0, expected.size()), expected);
  }
}

}  // namespace
}  // namespace mofasim::scenario
