// ZeRO-3 / FSDP traffic in the priced per-rank plan and the closed form (model/rank_plan.h,
// model/analytic_model.h): each transformer layer's parameters all-gathered before its forward
// and again before its backward of every micro-batch, prefetched one layer ahead; no parameter
// all-gather after the update. ZeRO-2 keeps ZeRO-1's traffic.
#include <algorithm>

#include <gtest/gtest.h>

#include "model/analytic_model.h"
#include "model/compute_time.h"
#include "model/op_table.h"
#include "model/params.h"
#include "model/rank_plan.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using testing::Layout;
using testing::parallel_spec;

FeatureSpec sharded(DpSharding level) {
  FeatureSpec f;
  f.distributed_optimizer = true;
  f.dp_sharding = level;
  return f;
}

TEST(ShardedDpPlan, ZeroThreeGathersEachLayerAndNothingAfterTheUpdate) {
  // tiny_gpt, 2 layers of 244 parameters (rank_plan_test.cc), dp 4 on one node of 100 GB/s and
  // 10 µs links. A layer's bf16 weights are 244 × 2 = 488 B, all-gathered over the 4 ranks as a
  // ring: 3 steps of 10 µs, and 3/4 × 488 B = 366 B through each link at 100 GB/s.
  ModelSpec model = testing::tiny_gpt();
  model.num_layers = 2;
  const HardwareSpec hw = testing::round_gpu();
  const ParallelSpec par = parallel_spec({.dp = 4, .global_batch = 4});
  const topology::TopologySpec node{.gpus = 4, .gpus_per_node = 4, .intra_node = {.bandwidth = 100e9, .latency = 10e-6}};
  auto plan = [&](DpSharding level) {
    return build_rank_plan({.model = &model, .hardware = &hw, .parallel = par, .features = sharded(level),
                            .topology = &node, .simulation_detail = true});
  };
  const RankPlan z3 = plan(DpSharding::kOptimGradsParams);
  EXPECT_DOUBLE_EQ(z3.dense.fsdp_gather_bytes, 488);
  EXPECT_DOUBLE_EQ(z3.dense.fsdp_expert_gather_bytes, 0);
  EXPECT_NEAR(z3.dense.fsdp_gather.latency, 3 * 10e-6, 1e-15);
  EXPECT_NEAR(z3.dense.fsdp_gather.bandwidth, 366 / 100e9, 1e-20);
  // The embedding and head are not FSDP units here, and nothing is gathered after the update; the
  // gradients (568 parameters × 4 B) are still reduce-scattered and 1/4 of the state updated.
  EXPECT_DOUBLE_EQ(z3.embedding.fsdp_gather_bytes, 0);
  EXPECT_DOUBLE_EQ(z3.head.fsdp_gather_bytes, 0);
  EXPECT_DOUBLE_EQ(z3.dp[0].dense_param_bytes, 0);
  EXPECT_DOUBLE_EQ(z3.dp[0].params.latency + z3.dp[0].params.bandwidth, 0);
  EXPECT_DOUBLE_EQ(z3.dp[0].dense_grad_bytes, 2272);
  EXPECT_DOUBLE_EQ(z3.dp[0].updated_params, 142);
  // ZeRO-2: ZeRO-1's traffic, the 568 × 2 B parameters all-gathered once after the update.
  const RankPlan z2 = plan(DpSharding::kOptimGrads);
  EXPECT_DOUBLE_EQ(z2.dense.fsdp_gather_bytes, 0);
  EXPECT_DOUBLE_EQ(z2.dp[0].dense_param_bytes, 1136);
  EXPECT_DOUBLE_EQ(z2.dp[0].dense_grad_bytes, 2272);
}

TEST(ShardedDpPlan, ZeroThreeGathersRoutedExpertsOverExpertDp) {
  // DeepSeek-V3's layers (4 of them, the last MoE): with ep 2 over dp 4 the experts' DP group has
  // 2 ranks, so each MoE layer gathers its half of the routed experts' weights (× 2 B) over it
  // besides the dense part over dp.
  ModelSpec model = testing::deepseek_v3();
  model.num_layers = 4;
  const HardwareSpec hw = testing::round_gpu();
  const ParallelSpec par = parallel_spec({.dp = 4, .ep = 2, .global_batch = 4});
  const RankPlan z3 = build_rank_plan({.model = &model, .hardware = &hw, .parallel = par,
                                       .features = sharded(DpSharding::kOptimGradsParams)});
  ASSERT_TRUE(z3.moe.present);
  const LayerParams lp = layer_params(model, model.num_layers - 1);
  EXPECT_DOUBLE_EQ(z3.moe.fsdp_expert_gather_bytes, lp.routed_experts / 2 * 2);
  EXPECT_DOUBLE_EQ(z3.moe.fsdp_gather_bytes, (lp.attention + lp.mlp + lp.router + lp.norms) * 2);
}

// LLaMA2-70B layers (h 8192, ffn 28672, 8 KV heads of 128) on round_gpu, dp 4 on one node of
// 100 GB/s links without latency.
AnalyticInput llama_dp4(DpSharding level) {
  ModelSpec m = testing::llama2_70b();
  m.num_layers = 2;
  AnalyticInput in{.model = m,
                   .hardware = testing::round_gpu(),
                   .parallel = parallel_spec({.dp = 4, .global_batch = 8}),
                   .features = sharded(level),
                   .topology = {.gpus = 4, .gpus_per_node = 4, .intra_node = {.bandwidth = 100e9, .latency = 0}}};
  return in;
}

TEST(ShardedDpClosedForm, EachLayerPassExposesWhatItsGatherExceedsThePreviousPass) {
  // A layer: attention h(h + 2·1024) + h·h = 150,994,944, MLP 3·h·ffn = 704,643,072, two RMSNorms
  // 16,384: 855,654,400 parameters, 1,711,308,800 B in bf16. The ring all-gather over 4 ranks
  // moves 3/4 of it per link: g = 1,283,481,600 B / 100 GB/s = 12.834816 ms. The gather of each
  // layer runs under the pass before it, so a forward exposes max(0, g − F) and a backward
  // max(0, g − B), F and B one layer's pass; m = 2 micro-batches × 2 layers of each.
  const LayerParams lp = layer_params(llama_dp4(DpSharding::kOptim).model, 0);
  ASSERT_DOUBLE_EQ(lp.attention + lp.mlp + lp.norms, 855'654'400);
  const double g = 1'283'481'600 / 100e9;
  const AnalyticInput z3 = llama_dp4(DpSharding::kOptimGradsParams);
  const LayerSeconds layer = layer_compute_seconds(ops_for_layer(z3.model, z3.parallel, 0), z3.hardware, z3.features);
  const double exposed = 2 * 2 * (std::max(0.0, g - layer.forward) + std::max(0.0, g - layer.backward()));
  ASSERT_GT(g, layer.forward);  // the hand-worked case exposes part of each forward gather
  const StepTiming t3 = evaluate_mofa(z3).timing;
  // ZeRO-2 moves the same gradients, and all-gathers the stage's parameters once after the update
  // instead: 3/4 × stage parameters × 2 B at 100 GB/s.
  const AnalyticInput z2in = llama_dp4(DpSharding::kOptimGrads);
  const StepTiming t2 = evaluate_mofa(z2in).timing;
  const double end_gather = 0.75 * stage_gpu_params(z2in.model, z2in.parallel, 0).total() * 2 / 100e9;
  EXPECT_NEAR(t3.breakdown.dp_exposed, t2.breakdown.dp_exposed - end_gather + exposed, 1e-9);
  EXPECT_NEAR(t3.step_time_s, t2.step_time_s - end_gather + exposed, 1e-9);
}

}  // namespace
}  // namespace mofasim::model
