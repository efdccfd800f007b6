// Expert tensor parallelism of any size Megatron accepts (etp neither 1 nor tp), hand-worked on
// DeepSeek-V3's MoE layer: T = 4096 tokens per micro-batch, h = 7168, E = 256, k = 8, expert FFN
// 2048 (SwiGLU: fc1 is 2 x 2048 wide), FP8 dispatch (1 B), on tp 4 with sequence parallelism,
// dp 16, ep 8, etp 2: the expert group ep*etp = 16 folds over tp*dp = 64 ranks, edp = 64/16 = 4.
#include <gtest/gtest.h>

#include <vector>

#include "model/memory.h"
#include "model/moe_dispatch.h"
#include "model/params.h"
#include "test/model/model_presets_for_test.h"
#include "test/support/op_lookup.h"

namespace mofasim::model {
namespace {

using test::comms_on;
using test::find_op;

constexpr double kH = 7168;
constexpr double kTokensPerGpu = 4096.0 / 4;  // T_g: sequence parallelism splits T over tp = 4

ParallelSpec etp2(int ep = 8, int etp = 2) {
  return testing::parallel_spec({.tp = 4, .cp = 1, .pp = 1, .vpp = 1, .dp = 16, .ep = ep, .etp = etp,
                                 .micro_batch = 1, .global_batch = 16, .sequence_parallel = true});
}

TEST(MoeExpertTp, AllToAllThenGatherOverTheExpertTpPair) {
  const LayerOps ops = ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kAllToAll), etp2(), 3);
  // Dispatch: T_g·k·h·1 B = 1024·8·7168 = 58,720,256 B over EP 8.
  const auto ep = comms_on(ops, LayerGroup::kEp);
  ASSERT_EQ(ep.size(), 4U);
  EXPECT_EQ(ep[0].bytes, 58'720'256.0);
  EXPECT_EQ(ep[0].group_size, 8);
  // Each expert sees the tokens of its whole ETP x EP group: 8·2·1024·8/256 = 512 tokens, and holds
  // 2048/2 of the FFN width (fc1: 2 x 1024 columns); 32 local experts.
  const OpCost& fc1 = find_op(ops, OpKind::kExpertLinear1);
  EXPECT_EQ(fc1.gemm.m, 512.0);
  EXPECT_EQ(fc1.gemm.n, 2048.0);
  EXPECT_EQ(fc1.gemm.k, kH);
  EXPECT_EQ(fc1.gemm.instances, 32);
  // Expert TP: all-gather before fc1, reduce-scatter after fc2, mirrored in the backward, each of
  // the 32·512 = 16,384 routed tokens in bf16: 2·16384·7168 = 234,881,024 B, half on the wire.
  const auto etp = comms_on(ops, LayerGroup::kEtp);
  ASSERT_EQ(etp.size(), 4U);
  for (const CommOp& c : etp) {
    EXPECT_EQ(c.group_size, 2);
    EXPECT_EQ(c.bytes, 234'881'024.0);
    EXPECT_EQ(c.wire_bytes, 117'440'512.0);
  }
  EXPECT_EQ(etp[0].collective, CollectiveKind::kAllGather);
  EXPECT_EQ(etp[1].collective, CollectiveKind::kReduceScatter);
}

TEST(MoeExpertTp, AllGatherDispatchGathersOverTheEtpTimesEpGroup) {
  // Megatron's allgather dispatcher gathers over tp_ep (etp·ep = 16 ranks): 16·1024·7168·1 B =
  // 117,440,512 B; the combine reduce-scatters it in bf16. No expert-TP collective follows.
  const LayerOps ops = ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kAllGather), etp2(), 3);
  const auto g = comms_on(ops, LayerGroup::kEtpEp);
  ASSERT_EQ(g.size(), 4U);
  EXPECT_EQ(g[0].collective, CollectiveKind::kAllGather);
  EXPECT_EQ(g[0].group_size, 16);
  EXPECT_EQ(g[0].bytes, 16 * kTokensPerGpu * kH * 1);
  EXPECT_EQ(g[0].bytes, 117'440'512.0);
  EXPECT_EQ(g[0].wire_bytes, 117'440'512.0 * 15 / 16);
  EXPECT_EQ(g[1].collective, CollectiveKind::kReduceScatter);
  EXPECT_EQ(g[1].bytes, 16 * kTokensPerGpu * kH * 2);
  EXPECT_TRUE(comms_on(ops, LayerGroup::kEtp).empty());
  EXPECT_TRUE(comms_on(ops, LayerGroup::kEp).empty());
}

TEST(MoeExpertTp, ExpertWeightsGradsAndOptimizerStatePerGpu) {
  // One MoE layer's routed experts: 256 · 3·7168·2048 = 11,274,289,152 parameters, split over
  // ep·etp = 16 GPUs: 704,643,072 each.
  const ModelSpec m = testing::deepseek_v3_with(MoeDispatcher::kAllToAll);
  EXPECT_EQ(layer_params(m, 3).routed_experts, 11'274'289'152.0);
  const GpuParams p = stage_gpu_params(m, etp2(), 0);
  int moe_layers = 0;
  for (int l = 0; l < m.num_layers; ++l) moe_layers += m.is_moe_layer(l) ? 1 : 0;
  EXPECT_EQ(moe_layers, 58);
  EXPECT_DOUBLE_EQ(p.expert, (58 + m.mtp_depth) * 704'643'072.0);
  // The distributed optimizer shards the expert state over edp = 64/16 = 4 ranks: bf16 weights
  // (2 B), fp32 grads (4 B) and 12/4 B of fp32 master weights and moments per expert parameter.
  FeatureSpec f;
  f.distributed_optimizer = true;
  const ShardGroups shards = optimizer_shard_groups(etp2());
  EXPECT_EQ(shards.expert_dp, 4);
  EXPECT_EQ(shards.dense_dp, 16);
  const StaticMemory expert_only = static_memory(GpuParams{.expert = 1e9}, f, shards);
  EXPECT_DOUBLE_EQ(expert_only.weights, 2e9);
  EXPECT_DOUBLE_EQ(expert_only.grads, 4e9);
  EXPECT_DOUBLE_EQ(expert_only.optimizer_states, 3e9);
}

TEST(MoeExpertTp, EtpAboveTpIsAcceptedAsMegatronDoes) {
  // tp 4, etp 8, ep 2: ep·etp = 16 divides tp·dp = 64; each expert holds 2048/8 of the FFN.
  const LayerOps ops = ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kAllToAll), etp2(2, 8), 3);
  EXPECT_EQ(find_op(ops, OpKind::kExpertLinear1).gemm.n, 2 * 256.0);
  const auto etp = comms_on(ops, LayerGroup::kEtp);
  ASSERT_EQ(etp.size(), 4U);
  EXPECT_EQ(etp[0].group_size, 8);
  // 128 local experts, each 2·8·1024·8/256 = 512 tokens: 65,536 routed tokens in bf16.
  EXPECT_EQ(etp[0].bytes, 2 * 65536 * kH);
}

}  // namespace
}  // namespace mofasim::model
