// HSDP (Megatron's num_distributed_optimizer_instances, FSDP's hybrid shard) in the memory model
// and the priced per-rank plan: the data_parallel_sharding_strategy shards within a shard group
// of dp*cp/N ranks, the N groups keep replicas, and each bucket's reduced gradient shard is
// all-reduced across them (Megatron's param_and_grad_buffer.py: reduce-scatter over the
// intra-instance group, then all-reduce of the local shard over the inter-instance group).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "model/memory.h"
#include "model/rank_plan.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using testing::parallel_spec;

FeatureSpec hsdp(DpSharding level, int instances) {
  FeatureSpec f;
  f.distributed_optimizer = true;
  f.dp_sharding = level;
  f.dist_opt_instances = instances;
  return f;
}

TEST(HsdpMemory, SeventyBOverDp64AsEightGroupsOfEightKeepsAnEighthOfTheState) {
  // LLaMA2-70B, tp 8, dp 64 (512 GPUs): ZeRO-1 within groups of 8 keeps the optimizer state's
  // 12 B per parameter / 8 on each GPU (not / 64); weights (2 B) and fp32 gradients (4 B) stay whole.
  const ModelSpec model = testing::llama2_70b();
  const HardwareSpec hw = testing::round_gpu();
  const ParallelSpec par = parallel_spec({.tp = 8, .dp = 64, .global_batch = 64});
  const std::vector<double> inflight{1};
  const MemoryReport whole = memory_report(model, hw, par, hsdp(DpSharding::kOptim, 1), inflight);
  const MemoryReport groups = memory_report(model, hw, par, hsdp(DpSharding::kOptim, 8), inflight);
  const double params = groups.stages[0].params.total();
  EXPECT_DOUBLE_EQ(groups.stages[0].static_bytes.optimizer_states, params * 12 / 8);
  EXPECT_DOUBLE_EQ(whole.stages[0].static_bytes.optimizer_states, params * 12 / 64);
  EXPECT_DOUBLE_EQ(groups.stages[0].static_bytes.weights, params * 2);
  EXPECT_DOUBLE_EQ(groups.stages[0].static_bytes.grads, params * 4);
  // ZeRO-3 within the groups: everything / 8.
  const MemoryReport z3 = memory_report(model, hw, par, hsdp(DpSharding::kOptimGradsParams, 8), inflight);
  EXPECT_DOUBLE_EQ(z3.stages[0].static_bytes.weights, params * 2 / 8);
  EXPECT_DOUBLE_EQ(z3.stages[0].static_bytes.grads, params * 4 / 8);
  EXPECT_DOUBLE_EQ(z3.stages[0].static_bytes.optimizer_states, params * 12 / 8);
}

TEST(HsdpMemory, ShardGroupsAreTheDataParallelGroupsCutByTheInstances) {
  const ParallelSpec par = parallel_spec({.cp = 2, .dp = 16, .ep = 4, .global_batch = 16});
  const ShardGroups g = hsdp_shard_groups(par, hsdp(DpSharding::kOptim, 4));
  EXPECT_EQ(g.dense_dp, 8);   // dp*cp = 32 / 4
  EXPECT_EQ(g.expert_dp, 2);  // tp*cp*dp/(ep*etp) = 8 / 4
  EXPECT_EQ(g.instances, 4);
  try {
    (void)hsdp_shard_groups(par, hsdp(DpSharding::kOptim, 16));
    FAIL() << "16 does not divide the expert-DP size 8";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("must divide dp*cp = 32 and the expert-DP size 8, got 16"));
  }
  FeatureSpec unsharded;
  unsharded.dist_opt_instances = 2;
  EXPECT_THROW((void)hsdp_shard_groups(par, unsharded), std::invalid_argument);
}

// tiny_gpt: 2 layers of 244 parameters, 568 on each GPU with the embedding and head
// (sharded_dp_test.cc), dp 64 on 8 nodes of 8 GPUs: NVLink 100 GB/s and 10 us, NICs 10 GB/s and
// 20 us. With 8 instances the shard groups are the nodes (ranks 8k .. 8k+7) and the replica
// groups one GPU per node (ranks j, j+8, ..., j+56).
TEST(HsdpPlan, ReduceScatterWithinTheNodeThenAllReduceOfAnEighthAcrossNodes) {
  const ModelSpec model = testing::tiny_gpt();
  const HardwareSpec hw = testing::round_gpu();
  const ParallelSpec par = parallel_spec({.dp = 64, .global_batch = 64});
  const topology::TopologySpec cluster = testing::eight_nodes_of_eight();
  const RankPlan plan = build_rank_plan({.model = &model, .hardware = &hw, .parallel = par,
                                         .features = hsdp(DpSharding::kOptim, 8), .topology = &cluster});
  const RankDp& d = plan.dp[0];
  EXPECT_DOUBLE_EQ(d.dense_grad_bytes, 2272);      // 568 x 4 B, one 40 MB bucket
  EXPECT_EQ(d.dense_grad_buckets, 1);
  EXPECT_DOUBLE_EQ(d.dense_replica_bytes, 284);    // 2272 / 8
  EXPECT_DOUBLE_EQ(d.updated_params, 71);          // 568 / 8
  EXPECT_DOUBLE_EQ(d.dense_param_bytes, 1136);     // 568 x 2 B all-gathered within the group
  // Reduce-scatter over 8 on NVLink: 7 x 10 us + 7/8 x 2272 B / 100 GB/s; all-reduce of 284 B
  // over 8 nodes: 2 x 7 x 20 us + 2 x 7/8 x 284 B / 10 GB/s.
  EXPECT_NEAR(d.grad.latency, 7 * 10e-6 + 14 * 20e-6, 1e-15);
  EXPECT_NEAR(d.grad.bandwidth, 7.0 / 8 * 2272 / 100e9 + 2 * 7.0 / 8 * 284 / 10e9, 1e-18);
  // The parameter all-gather stays within the node: 7 x 10 us + 7/8 x 1136 B / 100 GB/s.
  EXPECT_NEAR(d.params.latency, 7 * 10e-6, 1e-15);
  EXPECT_NEAR(d.params.bandwidth, 7.0 / 8 * 1136 / 100e9, 1e-18);
  // ZeRO-1 over all 64 ranks for comparison: the reduce-scatter crosses the nodes.
  const RankPlan flat = build_rank_plan({.model = &model, .hardware = &hw, .parallel = par,
                                         .features = hsdp(DpSharding::kOptim, 1), .topology = &cluster});
  EXPECT_DOUBLE_EQ(flat.dp[0].dense_replica_bytes, 0);
  EXPECT_DOUBLE_EQ(flat.dp[0].updated_params, 568.0 / 64);
}

TEST(HsdpPlan, ZeroThreeGathersEachLayerWithinTheShardGroup) {
  // A layer's 244 x 2 B = 488 B gathered over the 8 GPUs of a node: 7 x 10 us + 7/8 x 488 B.
  const ModelSpec model = testing::tiny_gpt();
  const HardwareSpec hw = testing::round_gpu();
  const ParallelSpec par = parallel_spec({.dp = 64, .global_batch = 64});
  const topology::TopologySpec cluster = testing::eight_nodes_of_eight();
  const RankPlan plan = build_rank_plan({.model = &model, .hardware = &hw, .parallel = par,
                                         .features = hsdp(DpSharding::kOptimGradsParams, 8), .topology = &cluster});
  EXPECT_DOUBLE_EQ(plan.dense.fsdp_gather_bytes, 488);
  EXPECT_NEAR(plan.dense.fsdp_gather.latency, 7 * 10e-6, 1e-15);
  EXPECT_NEAR(plan.dense.fsdp_gather.bandwidth, 7.0 / 8 * 488 / 100e9, 1e-18);
  EXPECT_DOUBLE_EQ(plan.dp[0].dense_param_bytes, 0);
  EXPECT_DOUBLE_EQ(plan.dp[0].dense_replica_bytes, 284);
}

}  // namespace
}  // namespace mofasim::model
