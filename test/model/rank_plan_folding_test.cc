// MoE parallel folding in the priced per-rank plan: the expert gradients reduce over the expert
// data-parallel group tp*cp*dp/(ep*etp) of the folded layout, the dense ones over DP.
// Model: tiny_gpt (h 4, GeLU, biases) with 4 routed experts of width 8 in both layers, top 2.
#include <gtest/gtest.h>

#include "model/params.h"
#include "model/rank_plan.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

ModelSpec tiny_moe() {
  ModelSpec m = testing::tiny_gpt();
  m.moe = {.num_experts = 8, .top_k = 2, .expert_ffn_hidden_size = 8};
  return m;
}

// One node of 8 GPUs on 100 GB/s NVLink, no latency: a ring all-reduce of S over n members takes
// 2(n-1)/n · S / 1e11.
const topology::TopologySpec kNode{.gpus = 8, .gpus_per_node = 8, .intra_node = {.bandwidth = 1e11}};

RankPlan plan_of(int tp, int dp, int ep, int etp) {
  static const ModelSpec model = tiny_moe();
  static const HardwareSpec hw = testing::round_gpu();
  const ParallelSpec par = testing::parallel_spec(
      {.tp = tp, .dp = dp, .ep = ep, .etp = etp, .global_batch = dp, .sequence_parallel = tp > 1});
  return build_rank_plan({.model = &model, .hardware = &hw, .parallel = par, .topology = &kNode});
}

TEST(RankPlanFolding, ExpertGradientsReduceOverTheFoldedExpertDpGroup) {
  // tp 2, dp 4. EP 4 folded (etp 1): expert DP = 8 / 4 = 2, each GPU holds 2 experts of each layer.
  // EP 8 folded: expert DP = 1, one expert per GPU, no expert reduction at all.
  const RankPlan ep4 = plan_of(2, 4, 4, 1);
  const RankPlan ep8 = plan_of(2, 4, 8, 1);
  const double routed = layer_params(tiny_moe(), 0).routed_experts;  // all 8 experts of one layer
  EXPECT_DOUBLE_EQ(ep4.dp[0].expert_grad_bytes, 2 * routed / 4 * 4.0);  // 2 layers, fp32 grads
  EXPECT_DOUBLE_EQ(ep8.dp[0].expert_grad_bytes, 2 * routed / 8 * 4.0);
  EXPECT_DOUBLE_EQ(ep4.dp[0].dense_grad_bytes, ep8.dp[0].dense_grad_bytes);
  // Dense: ring all-reduce over DP 4 (ranks 0, 2, 4, 6): 1.5 · S_d / 1e11. Expert: over the pair
  // {0, 4} (2 · 1/2 · S_e / 1e11) with EP 4, nothing with EP 8.
  const double dense = 1.5 * ep8.dp[0].dense_grad_bytes / 1e11;
  EXPECT_NEAR(ep8.dp[0].grad.bandwidth, dense, 1e-18);
  EXPECT_NEAR(ep4.dp[0].grad.bandwidth, dense + ep4.dp[0].expert_grad_bytes / 1e11, 1e-18);
}

TEST(RankPlanFolding, EtpEqualToTpCarvesEpOutOfDp) {
  // tp 2, dp 4, ep 2, etp 2: expert DP = 8 / 4 = 2 again, now every GPU holds half of the width of
  // 4 experts: the same expert gradient bytes as EP 4 folded, the same expert-DP pair size.
  const RankPlan carved = plan_of(2, 4, 2, 2);
  const RankPlan folded = plan_of(2, 4, 4, 1);
  EXPECT_DOUBLE_EQ(carved.dp[0].expert_grad_bytes, folded.dp[0].expert_grad_bytes);
  EXPECT_NEAR(carved.dp[0].grad.bandwidth, folded.dp[0].grad.bandwidth, 1e-18);
}

}  // namespace
}  // namespace mofasim::model
