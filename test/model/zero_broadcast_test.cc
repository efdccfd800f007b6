// InternEvo's ZeRO-1 broadcast sync (model/zero_broadcast.h, DpParamSync::kBroadcast): which ranks
// own parameters, and what the priced plan charges for their broadcasts and the gradient all-reduce.
#include <gtest/gtest.h>

#include <vector>

#include "model/rank_plan.h"
#include "model/zero_broadcast.h"
#include "test/model/model_presets_for_test.h"
#include "topology/comm_group.h"

namespace mofasim::model {
namespace {

using testing::parallel_spec;

TEST(ZeroBroadcastOwners, TheTensorThatCrossesTheLineOpensTheNextRank) {
  // 27 parameters over 4 ranks: line = floor(27 / 4) x 1.01 = 6.06. The 10 crosses it at once and
  // opens rank 1 (rank 0 keeps nothing); 1 and 5 stay (6); the next 5 crosses (11) and opens rank 2,
  // which takes 1 and 5 (6). Owners: ranks 1 and 2.
  const std::vector<double> tensors{10, 1, 5, 5, 1, 5};
  EXPECT_EQ(zero_broadcast_owners(tensors, 4), 2);
  // 300 over 2 ranks: line 151.5; rank 0 takes the first 100, the second crosses and opens rank 1,
  // which also keeps the third (the last rank never closes).
  EXPECT_EQ(zero_broadcast_owners(std::vector<double>{100, 100, 100}, 2), 2);
  EXPECT_EQ(zero_broadcast_owners(std::vector<double>{100, 100, 100}, 1), 1);
  EXPECT_EQ(zero_broadcast_owners(std::vector<double>{}, 8), 0);
}

// InternLM-7B as InternEvo holds it (testing::internlm_7b): embedding and head 103,168 x 4,096 =
// 422,576,128 each; per layer two 4,096 norms, Wqkv 50,331,648, out_proj 16,777,216 and w1 / w2 / w3
// 45,088,768 each; the final norm. 7,321,423,872 parameters in all.
int owners_at(int dp) {
  const ModelSpec model = testing::internlm_7b();
  const HardwareSpec hw = testing::round_gpu();
  FeatureSpec f;
  f.distributed_optimizer = true;
  f.dp_sharding = DpSharding::kOptim;
  f.param_sync = DpParamSync::kBroadcast;
  const RankPlan plan = build_rank_plan(
      {.model = &model, .hardware = &hw, .parallel = parallel_spec({.dp = dp, .global_batch = dp}), .features = f});
  return plan.dp[0].dense_param_broadcasts;
}

TEST(ZeroBroadcastOwners, InternLm7bHasAtMostOneOwnerPerLargeTensor) {
  // 1,024 ranks: line = floor(7,321,423,872 / 1,024) x 1.01 = 7,221,326 parameters; every GEMM
  // weight and the two vocab matrices are larger, so each opens a rank and the norms ride along:
  // 1 + 32 x 5 + 1 = 162 owners (ranks 1 .. 162), the same at 512 ranks (line 14.4 M).
  EXPECT_EQ(owners_at(1024), 162);
  EXPECT_EQ(owners_at(512), 162);
  // 8 ranks: line 924,329,764; each rank holds more than the line (its opening tensor is not
  // counted), so all 8 are used.
  EXPECT_EQ(owners_at(8), 8);
  // 32 ranks: line 231,082,441. The embedding opens rank 1; a layer holds 202,383,360, so a rank
  // fills with the tensor that opened it plus about 231 M more: 27 owners (ranks 1 .. 27).
  EXPECT_EQ(owners_at(32), 27);
}

TEST(ZeroBroadcastPlan, EachOwnerPaysABroadcastAndTheGradientsAreAllReduced) {
  // tiny_gpt (568 parameters per GPU, sharded_dp_test.cc), dp 64 on 8 nodes of 8 GPUs.
  const ModelSpec model = testing::tiny_gpt();
  const HardwareSpec hw = testing::round_gpu();
  const ParallelSpec par = parallel_spec({.dp = 64, .global_batch = 64});
  const topology::TopologySpec cluster = testing::eight_nodes_of_eight();
  FeatureSpec f;
  f.distributed_optimizer = true;
  f.dp_sharding = DpSharding::kOptim;
  f.param_sync = DpParamSync::kBroadcast;
  const RankPlan plan = build_rank_plan({.model = &model, .hardware = &hw, .parallel = par, .features = f,
                                         .topology = &cluster});
  const RankDp& d = plan.dp[0];
  // Its tensors in module order: embedding 72 (40 + 32 learned positions); per layer norm 8, qkv 64,
  // out_proj 16, norm 8, fc1 64, fc2 64; the final norm 8 (the head is tied). 528 over 64 ranks:
  // line floor(528 / 64) x 1.01 = 8.08, so each tensor above 8 opens a rank and the 8s ride along:
  // the embedding opens rank 1, then 4 GEMM weights per layer: ranks 1 .. 9.
  const int owners = d.dense_param_broadcasts;
  EXPECT_EQ(owners, 9);
  EXPECT_DOUBLE_EQ(d.dense_param_bytes, 1136);  // 568 x 2 B
  const topology::Topology topo(cluster);
  std::vector<int> all(64);
  for (int i = 0; i < 64; ++i) all[static_cast<std::size_t>(i)] = i;
  const topology::CommGroup dp(topo, all);
  const topology::CollectiveCost one = dp.cost(topology::CollectiveKind::kBroadcast, topology::CollectiveAlgorithm::kRing,
                                               Bytes{1136.0 / owners});
  EXPECT_NEAR(d.params.latency, owners * one.latency_seconds, 1e-15);
  EXPECT_NEAR(d.params.bandwidth, owners * one.bandwidth_seconds, 1e-18);
  // The gradients: one all-reduce of 2,272 B over the 64 ranks (2 x 63 steps of 20 us on the ring).
  const topology::CollectiveCost ar = dp.cost(topology::CollectiveKind::kAllReduce, topology::CollectiveAlgorithm::kRing,
                                              Bytes{2272});
  EXPECT_NEAR(d.grad.latency, ar.latency_seconds, 1e-15);
  EXPECT_NEAR(d.grad.bandwidth, ar.bandwidth_seconds, 1e-18);
  EXPECT_NEAR(ar.latency_seconds, 126 * 20e-6, 1e-15);
  // Megatron's sync on the same cluster all-gathers instead: no broadcasts.
  f.param_sync = DpParamSync::kAllGather;
  const RankPlan megatron = build_rank_plan({.model = &model, .hardware = &hw, .parallel = par, .features = f,
                                             .topology = &cluster});
  EXPECT_EQ(megatron.dp[0].dense_param_broadcasts, 0);
}

}  // namespace
}  // namespace mofasim::model
