// The flex (DeepEP) dispatcher with expert tensor parallelism, as Megatron-Core's
// MoEFlexTokenDispatcher runs it: one DeepEP dispatch over the tp_ep group (ep·etp ranks) that
// sends each routed copy to every expert-TP rank of its expert, and a combine that sums their
// partial outputs; no expert-TP gather. Hand-worked on DeepSeek-V3's MoE layer (T = 4096 tokens,
// h = 7168, E = 256, k = 8, FP8 dispatch 1 B, bf16 combine 2 B) on tp 4 with sequence
// parallelism, dp 16, ep 8, etp 2: T_g = 4096/4 = 1024 tokens per GPU; Megatron's expert order
// (tp-ep-dp-pp) puts the 16 ranks of a tp_ep group side by side, 2 nodes of 8 GPUs.
#include <gtest/gtest.h>

#include <vector>

#include "model/memory.h"
#include "model/moe_deepep.h"
#include "model/moe_dispatch.h"
#include "test/model/flex_memory_for_test.h"
#include "test/model/model_presets_for_test.h"
#include "test/support/op_lookup.h"

namespace mofasim::model {
namespace {

using test::comms_on;
using test::find_op;

ParallelSpec layout(int etp, int ep_nodes) {
  ParallelSpec p = testing::parallel_spec({.tp = 4, .cp = 1, .pp = 1, .vpp = 1, .dp = 16, .ep = 8, .etp = etp,
                                           .micro_batch = 1, .global_batch = 16, .sequence_parallel = true});
  p.ep_nodes = ep_nodes;
  return p;
}

// Before, flex with etp 2 was priced in two steps: an EP dispatch of T_g·k·h·1 B = 1024·8·7168 =
// 58,720,256 B (the NVLink hop over EP 8), then an expert-TP all-gather of the 16,384 received
// copies in bf16, 2·16384·7168 = 234,881,024 B. Megatron sends each copy in the dispatch dtype
// to both expert-TP ranks at once, so the one NVLink hop carries T_g·k·etp·h·1 B =
// 1024·8·2·7168 = 117,440,512 B (twice the old EP step) and nothing else follows.
TEST(MoeFlexExpertTp, OneDispatchOverTheEtpTimesEpGroup) {
  const LayerOps ops = ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kFlex), layout(2, 2), 3);
  EXPECT_TRUE(comms_on(ops, LayerGroup::kEtp).empty());
  EXPECT_TRUE(comms_on(ops, LayerGroup::kEp).empty());
  const auto g = comms_on(ops, LayerGroup::kEtpEp);
  ASSERT_EQ(g.size(), 8U);  // two hops for each of dispatch, combine and their gradients
  for (const CommOp& c : g) EXPECT_EQ(c.group_size, 16);
  // Dispatch, scale-out: a token's 8 distinct experts over the group's 2 nodes (128 each) reach
  // D = 2·(1 − C(128, 8) / C(256, 8)) = 1.99302 nodes: 1024·1.99302·7168 = 14,628,831.42 B, half
  // of it off the node.
  EXPECT_EQ(g[0].collective, CollectiveKind::kAllToAllScaleOut);
  EXPECT_NEAR(g[0].bytes, 14'628'831.42, 0.01);
  EXPECT_DOUBLE_EQ(g[0].wire_bytes, g[0].bytes / 2);
  // Then the forward to each destination GPU: DeepEP sends a token once per expert slot holding
  // any of its 8 experts (32 a slot), S = 8·(1 − C(224, 8) / C(256, 8)) = 5.2947 of the 8 slots,
  // to each of its etp = 2 ranks: 1024·5.2947·2·7168 = 77,725,830.22 B, 7/8 over NVLink (8 group
  // ranks per node), pipelined with the NIC hop over 1024/(10·20) = 5.12 chunks.
  EXPECT_EQ(g[1].collective, CollectiveKind::kAllToAllScaleUp);
  EXPECT_NEAR(g[1].bytes, 77'725'830.22, 0.01);
  EXPECT_DOUBLE_EQ(g[1].wire_bytes, g[1].bytes * 7 / 8);
  ASSERT_GE(g[1].pipelined_with, 0);
  EXPECT_EQ(ops.comms()[static_cast<std::size_t>(g[1].pipelined_with)].bytes, g[0].bytes);
  EXPECT_DOUBLE_EQ(g[1].pipeline_chunks, 5.12);
  // Combine, mirrored in bf16: the NVLink hop first (the node reduces the etp partial outputs and
  // the node's experts), 155,451,660.45 B, then the NIC hop 29,257,662.85 B over 1024/(10·12) chunks.
  EXPECT_EQ(g[2].collective, CollectiveKind::kAllToAllScaleUp);
  EXPECT_NEAR(g[2].bytes, 155'451'660.45, 0.01);
  EXPECT_EQ(g[3].collective, CollectiveKind::kAllToAllScaleOut);
  EXPECT_NEAR(g[3].bytes, 29'257'662.85, 0.01);
  EXPECT_DOUBLE_EQ(g[3].pipeline_chunks, 1024.0 / 120);
  // Per GPU and forward dispatch: 14,628,831 + 77,725,830 = 92,354,661 B, against 14,622,720 +
  // 58,720,256 + 234,881,024 = 308,224,000 B in the two-step model (its node copies at 1.9921875).
}

TEST(MoeFlexExpertTp, ReceivedTokensAndExpertShapesAreUnchanged) {
  // Each expert-TP rank receives the full hidden vector of its experts' copies: 32 local experts
  // of 8·2·1024·8/256 = 512 tokens, 16,384 copies stored as fc1's bf16 input, 234,881,024 B, as
  // after the alltoall dispatcher's gather.
  const LayerOps flex = ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kFlex), layout(2, 2), 3);
  const LayerOps a2a = ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kAllToAll), layout(2, 2), 3);
  const OpCost& fc1 = find_op(flex, OpKind::kExpertLinear1);
  EXPECT_EQ(fc1.gemm.m, 512.0);
  EXPECT_EQ(fc1.gemm.instances, 32);
  EXPECT_EQ(fc1.activation_bytes, 234'881'024.0);
  EXPECT_EQ(fc1.activation_bytes, find_op(a2a, OpKind::kExpertLinear1).activation_bytes);
  EXPECT_EQ(flex.totals().activation_bytes, a2a.totals().activation_bytes);
}

TEST(MoeFlexExpertTp, EtpOneKeepsTheEpGroup) {
  // etp 1: the tp_ep group is the EP group; the hops stay on it with one copy per slot a token's
  // experts sit on: 1024·5.2947·7168 = 38,862,915.11 B (the alltoall dispatcher's 8 copies:
  // 58,720,256).
  const LayerOps ops = ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kFlex), layout(1, 1), 3);
  EXPECT_TRUE(comms_on(ops, LayerGroup::kEtpEp).empty());
  const auto ep = comms_on(ops, LayerGroup::kEp);
  ASSERT_EQ(ep.size(), 4U);  // one node: the NVLink hop only
  EXPECT_EQ(ep[0].collective, CollectiveKind::kAllToAllScaleUp);
  EXPECT_NEAR(ep[0].bytes, 38'862'915.11, 0.01);
}

TEST(MoeFlexExpertTp, ExpertSlotWiderThanANodeReachesEachOfItsNodes) {
  // ep 2, etp 16 on nodes of 8: the 32-rank group spans 4 nodes and each expert slot 2 of them. A
  // token's 8 distinct experts over the 2 slots (128 each) reach 2·(1 − C(128, 8) / C(256, 8)) =
  // 1.99302 slots, each 2 nodes: 3.98604 nodes.
  const ModelSpec m = testing::deepseek_v3_with(MoeDispatcher::kFlex);
  EXPECT_NEAR(dispatch_nodes_per_token(m.moe, 2, 4), 3.98604, 1e-5);
  // A slot within a node: the 2 nodes themselves.
  EXPECT_NEAR(dispatch_nodes_per_token(m.moe, 8, 2), 1.99302, 1e-5);
}

// DeepEP's buffers for the 16-rank group (moe_deepep.h; slot 16,392 B, 2 RDMA ranks):
//   NVLink: 10·8·(2·2 + 3)·4 = 2,240 + 10·8·288·16,392 = 377,671,680 -> 377,673,920, aligned
//     377,673,984 (both configs keep 288 NVLink receive tokens);
//   RDMA, dispatch (send 20, receive 128 -> 140): 10·2·18·2·4 = 2,880 + 2·10·2·140·16,408 =
//     91,884,800 -> 91,887,680, aligned 91,887,744; the combine's (132) is smaller.
TEST(MoeFlexExpertTp, MemoryHoldsBuffersForTheEtpTimesEpGroup) {
  const DeepEpBuffers b = deepep_buffers(7168, 16);
  EXPECT_EQ(b.nvl_bytes, 377'673'984.0);
  EXPECT_EQ(b.rdma_bytes, 91'887'744.0);
  const auto [a2a, flex] = testing::flex_and_alltoall_memory(testing::deepseek_v3(), layout(2, 2));
  for (std::size_t s = 0; s < flex.stages.size(); ++s) {
    EXPECT_EQ(flex.stages[s].static_bytes.deepep_buffers, 469'561'728.0);
    EXPECT_DOUBLE_EQ(flex.stages[s].peak_bytes - a2a.stages[s].peak_bytes, 469'561'728.0);
  }
}

}  // namespace
}  // namespace mofasim::model
