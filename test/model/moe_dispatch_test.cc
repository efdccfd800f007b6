// MoE token dispatch per GPU and micro-batch (model/moe_dispatch.h), hand-worked on DeepSeek-V3's
// MoE layer: T = 4096 tokens, h = 7168, E = 256, k = 8, FP8 dispatch (1 B) and bf16 combine (2 B),
// EP 64 over 8 nodes of 8 GPUs.
#include "model/moe_dispatch.h"

#include <gtest/gtest.h>

#include <cmath>

#include <stdexcept>
#include <string>

#include "test/model/model_presets_for_test.h"
#include "test/support/op_lookup.h"

namespace mofasim::model {
namespace {

using test::find_op;
using testing::deepseek_v3;

constexpr double kT = 4096;
constexpr double kH = 7168;

ParallelSpec layout(int tp, int dp, int ep, int etp, int ep_nodes) {
  ParallelSpec p = testing::parallel_spec({.tp = tp, .cp = 1, .pp = 1, .vpp = 1, .dp = dp, .ep = ep, .etp = etp,
                                           .micro_batch = 1, .global_batch = dp, .sequence_parallel = tp > 1});
  p.ep_nodes = ep_nodes;
  return p;
}

// The forward dispatch's collectives (before fc1), in issue order.
std::vector<CommOp> dispatch(const LayerOps& ops) {
  std::vector<CommOp> out;
  for (const CommOp& c : ops.comms()) {
    const bool ep = c.group == LayerGroup::kEp || c.group == LayerGroup::kEtpEp;
    if (ep && c.phase == Phase::kForward && c.before_op) out.push_back(c);
  }
  return out;
}

const OpCost& expert_fc1(const LayerOps& ops) { return find_op(ops, OpKind::kExpertLinear1); }

TEST(MoeDispatch, AllToAllSendsOneCopyPerRoutedExpert) {
  const auto d = dispatch(ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kAllToAll), layout(1, 64, 64, 1, 8), 3));
  ASSERT_EQ(d.size(), 1U);
  EXPECT_EQ(d[0].collective, CollectiveKind::kAllToAll);
  EXPECT_EQ(d[0].bytes, kT * 8 * kH * 1);  // 234,881,024 B
  EXPECT_EQ(d[0].bytes, 234'881'024.0);
  EXPECT_EQ(d[0].wire_bytes, d[0].bytes * 63 / 64);
}

TEST(MoeDispatch, FlexSendsOneCopyPerDestinationNodeThenForwardsOverNvlink) {
  // Unlimited: a token's 8 distinct experts among 256, 32 a node, miss a node with probability
  // C(224, 8) / C(256, 8) = (224 · 223 ··· 217) / (256 · 255 ··· 249) = 0.33817, so they reach
  // 8 · 0.66183 = 5.2947 nodes: S = 4096 · 7168 · 5.2947 = 155,451,660.45 B, 7/8 of it off the node.
  const auto d = dispatch(ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kFlex), layout(1, 64, 64, 1, 8), 3));
  ASSERT_EQ(d.size(), 2U);
  EXPECT_EQ(d[0].collective, CollectiveKind::kAllToAllScaleOut);
  EXPECT_NEAR(d[0].bytes, 155'451'660.45, 0.01);
  EXPECT_DOUBLE_EQ(d[0].wire_bytes, d[0].bytes * 7 / 8);
  // Then it is forwarded inside the node once to each GPU holding any of its experts (DeepEP's
  // is_token_in_rank), 4 experts a GPU: missed with C(252, 8) / C(256, 8) = 0.88007, reached
  // 64 · 0.11993 = 7.6758 of the 64 ranks, 4096 · 7168 · 7.6758 = 225,361,008.13 B, 7/8 to the
  // other GPUs (the alltoall dispatcher's copy per expert: 234,881,024).
  EXPECT_EQ(d[1].collective, CollectiveKind::kAllToAllScaleUp);
  EXPECT_NEAR(dispatch_slots_per_token(testing::deepseek_v3_with(MoeDispatcher::kFlex).moe, 64), 7.67575, 1e-5);
  EXPECT_NEAR(d[1].bytes, 225'361'008.13, 0.01);
  EXPECT_DOUBLE_EQ(d[1].wire_bytes, d[1].bytes * 7 / 8);
  EXPECT_EQ(d[0].group_size, 64);
  EXPECT_EQ(d[1].group_size, 64);
}

// Each of the four transfers (dispatch, combine and their gradients) pairs its NVLink hop with its
// own NIC hop by index: the second hop names the first, same phase, op and side, the other link.
// DeepSeek-V3 at EP 64: 4096 tokens in chunks of 8 tokens on 10 channels, n = 51.2 each way.
TEST(MoeDispatch, FlexSecondHopNamesItsOwnFirstHop) {
  const LayerOps ops = ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kFlex), layout(1, 64, 64, 1, 8), 3);
  const auto comms = ops.comms();
  int pairs = 0;
  for (std::size_t j = 0; j < comms.size(); ++j) {
    const CommOp& second = comms[j];
    if (second.pipelined_with < 0) {
      EXPECT_EQ(second.pipeline_chunks, 0.0);
      continue;
    }
    ++pairs;
    ASSERT_LT(static_cast<std::size_t>(second.pipelined_with), j);
    const CommOp& first = comms[static_cast<std::size_t>(second.pipelined_with)];
    EXPECT_EQ(first.pipelined_with, -1);
    EXPECT_EQ(first.phase, second.phase);
    EXPECT_EQ(first.op, second.op);
    EXPECT_EQ(first.before_op, second.before_op);
    EXPECT_NE(first.collective, second.collective);
    EXPECT_TRUE(first.collective == CollectiveKind::kAllToAllScaleOut || first.collective == CollectiveKind::kAllToAllScaleUp);
    EXPECT_TRUE(second.collective == CollectiveKind::kAllToAllScaleOut || second.collective == CollectiveKind::kAllToAllScaleUp);
    EXPECT_DOUBLE_EQ(second.pipeline_chunks, 51.2);
  }
  EXPECT_EQ(pairs, 4);
  // On one node there is one hop per transfer: nothing to pair.
  for (const CommOp& c : ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kFlex), layout(1, 8, 8, 1, 1), 3).comms()) {
    EXPECT_EQ(c.pipelined_with, -1);
  }
}

TEST(MoeDispatch, NodeLimitedRoutingCutsTheNicBytes) {
  // DeepSeek-V3: 8 groups (one per node), at most 4 per token: 8 distinct experts among the 128
  // of 4 nodes miss a node with C(96, 8) / C(128, 8) = 0.092747, so reach 4 · 0.90725 = 3.6290
  // nodes, S = 4096 · 7168 · 3.6290 = 106,548,225.25 B; the NIC carries 7/8 of it, against
  // 205,520,896 B under alltoall (45 %).
  ModelSpec m = testing::deepseek_v3_with(MoeDispatcher::kFlex);
  m.moe.router_num_groups = 8;
  m.moe.router_group_topk = 4;
  const auto d = dispatch(ops_for_layer(m, layout(1, 64, 64, 1, 8), 3));
  ASSERT_EQ(d.size(), 2U);
  EXPECT_NEAR(d[0].bytes, 106'548'225.25, 0.01);
  EXPECT_NEAR(d[0].wire_bytes, 93'229'697.10, 0.01);
  EXPECT_NEAR(dispatch_nodes_per_token(m.moe, 64, 8), 3.62901, 1e-5);
  // The alltoall dispatcher moves a copy per expert whatever the node limit.
  m.moe.token_dispatcher = MoeDispatcher::kAllToAll;
  EXPECT_EQ(dispatch(ops_for_layer(m, layout(1, 64, 64, 1, 8), 3))[0].bytes, 234'881'024.0);
}

TEST(MoeDispatch, FlexOnOneNodeSendsATokenOncePerGpu) {
  // EP 8 on one node: one node copy stays home (no scale-out hop); the forward is an all-to-all
  // that sends a token once to each GPU holding any of its 8 experts (32 per GPU): 8 · (1 −
  // C(224, 8) / C(256, 8)) = 5.2947 copies, where the alltoall dispatcher sends 8.
  const auto flex = dispatch(ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kFlex), layout(1, 8, 8, 1, 1), 3));
  const auto a2a = dispatch(ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kAllToAll), layout(1, 8, 8, 1, 1), 3));
  ASSERT_EQ(flex.size(), 1U);
  EXPECT_EQ(flex[0].collective, CollectiveKind::kAllToAllScaleUp);
  const double per_gpu = 5.2946520004;
  EXPECT_NEAR(flex[0].bytes / (a2a[0].bytes / 8), per_gpu, 1e-9);
  EXPECT_NEAR(flex[0].wire_bytes / (a2a[0].wire_bytes / 8), per_gpu, 1e-9);
}

TEST(MoeDispatch, AllGatherGathersEveryTokenOfTheEpGroup) {
  const LayerOps ops = ops_for_layer(testing::deepseek_v3_with(MoeDispatcher::kAllGather), layout(1, 64, 64, 1, 8), 3);
  const auto d = dispatch(ops);
  ASSERT_EQ(d.size(), 1U);
  EXPECT_EQ(d[0].collective, CollectiveKind::kAllGather);
  EXPECT_EQ(d[0].bytes, 1'879'048'192.0);  // 64 ranks x 4096 tokens x 7168 in FP8
  int reduce_scatters = 0;
  for (const CommOp& c : ops.comms()) {
    if (c.collective == CollectiveKind::kReduceScatter && c.group == LayerGroup::kEtpEp) {
      EXPECT_EQ(c.bytes, 64 * kT * kH * 2);
      ++reduce_scatters;
    }
  }
  EXPECT_EQ(reduce_scatters, 2);  // the forward combine and the dispatch's gradient
}

TEST(MoeDispatch, CapacityFactorCapsOrPadsTheBusiestRank) {
  ModelSpec m = testing::deepseek_v3_with(MoeDispatcher::kAllToAll);
  m.moe.load_imbalance = 1.5;
  // Dropless: 64 * 4096 * 8 * 1.5 / 256 = 12,288 tokens per local expert.
  EXPECT_EQ(expert_fc1(ops_for_layer(m, layout(1, 64, 64, 1, 8), 3)).gemm.m, 12288.0);
  m.moe.expert_capacity_factor = 1.25;  // capped: 10,240
  EXPECT_EQ(expert_fc1(ops_for_layer(m, layout(1, 64, 64, 1, 8), 3)).gemm.m, 10240.0);
  EXPECT_EQ(dispatch(ops_for_layer(m, layout(1, 64, 64, 1, 8), 3))[0].bytes, kT * 8 * kH * 1.25);
  m.moe.load_imbalance = 1.0;  // under capacity: the mean share, 8192
  EXPECT_EQ(expert_fc1(ops_for_layer(m, layout(1, 64, 64, 1, 8), 3)).gemm.m, 8192.0);
  m.moe.pad_expert_input_to_capacity = true;  // padded up to capacity: 10,240 again
  const LayerOps padded = ops_for_layer(m, layout(1, 64, 64, 1, 8), 3);
  EXPECT_EQ(expert_fc1(padded).gemm.m, 10240.0);
  // The memory model stores the padded copies: 1.25 * k * T token inputs of 2h bytes each.
  EXPECT_EQ(padded.totals().routed_input_bytes, 1.25 * 8 * kT * 2 * kH);
  // Padding applies on one rank too: 4096 * 8 * 2 / 256 = 256 tokens per expert at factor 2.
  m.moe.expert_capacity_factor = 2;
  EXPECT_EQ(expert_fc1(ops_for_layer(m, layout(1, 1, 1, 1, 1), 3)).gemm.m, 256.0);
  EXPECT_EQ(routed_token_factor(m.moe, 1), 2.0);
}

TEST(MoeDispatch, FoldedExpertsDoTheSameWorkPerGpuAsExpertsCarvedFromDp) {
  // tp 2 with sequence parallelism: each GPU dispatches T/2 tokens. etp = tp = 2 (EP 4 carved out
  // of dp 8) and etp = 1 (EP 8 folded over TP x DP) give every GPU the same expert FLOPs; only
  // etp = 2 gathers the tokens over expert TP.
  const ModelSpec m = testing::deepseek_v3_with(MoeDispatcher::kAllToAll);
  const LayerOps carved = ops_for_layer(m, layout(2, 8, 4, 2, 2), 3);
  const LayerOps folded = ops_for_layer(m, layout(2, 8, 8, 1, 2), 3);
  EXPECT_EQ(expert_fc1(carved).forward.flops, expert_fc1(folded).forward.flops);
  EXPECT_EQ(expert_fc1(folded).forward.flops, kT / 2 * 8 * 2 * kH * 2 * 2048);
  int etp_carved = 0;
  int etp_folded = 0;
  for (const CommOp& c : carved.comms()) etp_carved += c.group == LayerGroup::kEtp ? 1 : 0;
  for (const CommOp& c : folded.comms()) etp_folded += c.group == LayerGroup::kEtp ? 1 : 0;
  EXPECT_EQ(etp_carved, 4);
  EXPECT_EQ(etp_folded, 0);
  EXPECT_EQ(layout(2, 8, 8, 1, 2).expert_dp(), 2);  // 16 / (8 * 1)
  EXPECT_EQ(layout(2, 8, 4, 2, 2).expert_dp(), 2);  // 16 / (4 * 2)
}

void expect_error(const ModelSpec& m, const ParallelSpec& p, const std::string& message) {
  try {
    (void)ops_for_layer(m, p, 3);
    FAIL() << "expected: " << message;
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(MoeDispatch, AllToAllSortsTheReceivedCopiesByLocalExpert) {
  // Megatron-Core's Permutation 2: every routed copy a rank receives, k * etp * f * T_g.
  MoeSpec moe = testing::deepseek_v3_with(MoeDispatcher::kAllToAll).moe;
  moe.expert_capacity_factor = 1.0;  // O-SMXB's padded layout: f = 1
  moe.pad_expert_input_to_capacity = true;
  // EP 8: 32 local experts, 4096 tokens x top-8 = 32,768 copies.
  EXPECT_EQ(tokens_sorted_by_local_expert(moe, layout(1, 8, 8, 1, 1), kT), 32768);
  // Expert TP 2 gathers the copies of its two ranks before the sort: 65,536.
  EXPECT_EQ(tokens_sorted_by_local_expert(moe, layout(2, 8, 8, 2, 2), kT), 65536);
  // One local expert (EP 256): no sort.
  EXPECT_EQ(tokens_sorted_by_local_expert(moe, layout(1, 256, 256, 1, 32), kT), 0);
  // Padded on one rank: the transpose moves a size-1 dimension, no copy; dropless still sorts,
  // and a dropless busiest rank at load_imbalance 1.5 (EP 8) sorts 1.5 times the mean.
  EXPECT_EQ(tokens_sorted_by_local_expert(moe, layout(1, 1, 1, 1, 1), kT), 0);
  moe.expert_capacity_factor = 0;
  moe.pad_expert_input_to_capacity = false;
  EXPECT_EQ(tokens_sorted_by_local_expert(moe, layout(1, 1, 1, 1, 1), kT), 32768);
  moe.load_imbalance = 1.5;
  EXPECT_EQ(tokens_sorted_by_local_expert(moe, layout(1, 8, 8, 1, 1), kT), 49152);
  // Flex and allgather order the tokens in their own permute.
  moe.token_dispatcher = MoeDispatcher::kFlex;
  EXPECT_EQ(tokens_sorted_by_local_expert(moe, layout(1, 8, 8, 1, 1), kT), 0);
  moe.token_dispatcher = MoeDispatcher::kAllGather;
  EXPECT_EQ(tokens_sorted_by_local_expert(moe, layout(1, 8, 8, 1, 1), kT), 0);
}

TEST(MoeDispatch, BadCombinationsAreOneLineErrors) {
  ModelSpec m = testing::deepseek_v3_with(MoeDispatcher::kAllToAll);
  const ParallelSpec ok = layout(1, 64, 64, 1, 8);
  m.moe.router_num_groups = 3;
  m.moe.router_group_topk = 1;
  expect_error(m, ok, "model.moe.router_num_groups (3) must divide num_experts (256)");
  m.moe.router_num_groups = 8;
  m.moe.router_group_topk = 9;
  expect_error(m, ok, "model.moe.router_group_topk must be in [1, router_num_groups = 8], got 9");
  m.moe.router_num_groups = 0;
  m.moe.router_group_topk = 4;
  expect_error(m, ok, "model.moe.router_group_topk needs router_num_groups (the expert groups it picks from)");
  m.moe.router_group_topk = 0;
  m.moe.pad_expert_input_to_capacity = true;
  expect_error(m, ok, "model.moe.pad_expert_input_to_capacity needs expert_capacity_factor (the capacity to pad to)");
  m.moe.pad_expert_input_to_capacity = false;
  expect_error(m, layout(1, 96, 32, 3, 4), "parallel.etp (3) must divide moe.expert_ffn_hidden_size");
  expect_error(m, layout(2, 8, 8, 4, 2), "parallel: ep*etp (32) must divide tp*cp*dp (16): the expert layout folds over those ranks");
}

}  // namespace
}  // namespace mofasim::model
