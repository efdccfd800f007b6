// Context parallelism's KV exchange by --cp-comm-type in the op table (model/op_table.cc), bytes
// worked by hand. A GQA layer: h 512, 8 heads and 4 KV heads of 64, s 1024, b 1, tp 1, cp 2, so
// each CP rank holds T = 512 tokens and its K and V are 2 B x 512 x 4 x (64 + 64) = 524,288 B.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "model/compute_time.h"
#include "model/memory.h"
#include "model/op_table.h"
#include "test/model/model_presets_for_test.h"
#include "test/support/op_lookup.h"

namespace mofasim::model {
namespace {

using test::find_op;

ModelSpec gqa() {
  return {.name = "gqa", .num_layers = 2, .hidden_size = 512, .num_attention_heads = 8, .num_kv_heads = 4,
          .head_dim = 64, .ffn_hidden_size = 1536, .vocab_size = 8192, .seq_length = 1024};
}

ParallelSpec cp2(CpCommType type) {
  ParallelSpec par = testing::parallel_spec({.cp = 2, .global_batch = 1});
  par.cp_comm_type = type;
  return par;
}

std::vector<CommOp> cp_comms(CpCommType type) {
  std::vector<CommOp> out;
  for (const CommOp& c : ops_for_layer(gqa(), cp2(type), 0).comms()) {
    if (c.group == LayerGroup::kCp) out.push_back(c);
  }
  return out;
}

TEST(CpCommType, RingSendsTheKvBlockOnce) {
  const std::vector<CommOp> c = cp_comms(CpCommType::kP2p);
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c[0].collective, CollectiveKind::kSendRecv);
  EXPECT_DOUBLE_EQ(c[0].bytes, 524288);
  EXPECT_EQ(c[0].count, 1);  // cp - 1 steps
  EXPECT_EQ(c[1].phase, Phase::kInputGrad);
  EXPECT_DOUBLE_EQ(c[1].bytes, 2 * 524288);  // dK, dV travel with K, V
}

TEST(CpCommType, AllGatherGathersKvForwardAndBackwardAndReduceScattersTheirGradients) {
  const std::vector<CommOp> c = cp_comms(CpCommType::kAllGather);
  ASSERT_EQ(c.size(), 3U);
  // The gathered buffer is both ranks' K and V: 2 x 524,288 B, half of it received.
  EXPECT_EQ(c[0].collective, CollectiveKind::kAllGather);
  EXPECT_EQ(c[0].phase, Phase::kForward);
  EXPECT_TRUE(c[0].before_op);
  EXPECT_DOUBLE_EQ(c[0].bytes, 1048576);
  EXPECT_DOUBLE_EQ(c[0].wire_bytes, 524288);
  EXPECT_EQ(c[1].collective, CollectiveKind::kAllGather);
  EXPECT_EQ(c[1].phase, Phase::kInputGrad);
  EXPECT_DOUBLE_EQ(c[1].bytes, 1048576);
  EXPECT_EQ(c[2].collective, CollectiveKind::kReduceScatter);
  EXPECT_FALSE(c[2].before_op);
  EXPECT_DOUBLE_EQ(c[2].bytes, 1048576);
}

TEST(CpCommType, UlyssesAllToAllsQkvInAndTheOutputBack) {
  // Q, K, V: 2 B x 512 x (8 x 64 + 4 x 128) = 1,048,576 B; O: 2 B x 512 x 8 x 64 = 524,288 B;
  // each all-to-all sends (c-1)/c of its buffer.
  const std::vector<CommOp> c = cp_comms(CpCommType::kA2a);
  ASSERT_EQ(c.size(), 4U);
  for (const CommOp& op : c) EXPECT_EQ(op.collective, CollectiveKind::kAllToAll);
  EXPECT_EQ(c[0].phase, Phase::kForward);
  EXPECT_TRUE(c[0].before_op);
  EXPECT_DOUBLE_EQ(c[0].bytes, 1048576);
  EXPECT_DOUBLE_EQ(c[0].wire_bytes, 524288);
  EXPECT_FALSE(c[1].before_op);
  EXPECT_DOUBLE_EQ(c[1].bytes, 524288);
  EXPECT_EQ(c[2].phase, Phase::kInputGrad);
  EXPECT_TRUE(c[2].before_op);
  EXPECT_DOUBLE_EQ(c[2].bytes, 524288);  // dO in
  EXPECT_DOUBLE_EQ(c[3].bytes, 1048576);  // dQ, dK, dV out
}

// Ulysses (a2a): after the all-to-all each of the 2 CP ranks holds all s = 1024 tokens of 8/2 = 4
// query heads and 4/2 = 2 KV heads, so the flash kernel runs at sequence 1024; ring CP runs it per
// chunk at 512. The FLOPs are the same: QK^T 1024 x 1024 x 64 x 4 = 512 x 1024 x 64 x 8 =
// 268,435,456 (causal-halved 2*T*s*d*heads), PV likewise with d_v = 64.
TEST(CpCommType, UlyssesRunsTheAttentionKernelOverTheWholeSequenceWithAShareOfTheHeads) {
  const LayerOps ring = ops_for_layer(gqa(), cp2(CpCommType::kP2p), 0);
  const LayerOps ulysses = ops_for_layer(gqa(), cp2(CpCommType::kA2a), 0);
  for (const OpKind kind : {OpKind::kAttentionMap, OpKind::kAttentionValue}) {
    const OpCost& r = find_op(ring, kind);
    const OpCost& u = find_op(ulysses, kind);
    EXPECT_DOUBLE_EQ(r.forward.flops, 268435456);
    EXPECT_DOUBLE_EQ(u.forward.flops, 268435456);
    EXPECT_DOUBLE_EQ(u.backward_input.flops, 2 * 268435456.0);
    EXPECT_EQ(r.forward.shape.kind, KernelKind::kAttention);
    EXPECT_DOUBLE_EQ(r.forward.shape.seq, 512);
    EXPECT_DOUBLE_EQ(u.forward.shape.seq, 1024);
    EXPECT_DOUBLE_EQ(u.backward_input.shape.seq, 1024);
    EXPECT_TRUE(u.backward_input.shape.backward);
    EXPECT_DOUBLE_EQ(u.forward.shape.head_dim, 64);
  }
  // Bytes read by QK^T: Q of the rank's queries and all s keys of its KV heads, 2 B each.
  // Ring: 512 x 8 x 64 + 1024 x 4 x 64 = 524,288 elements; Ulysses: 1024 x 4 x 64 + 1024 x 2 x 64.
  EXPECT_DOUBLE_EQ(find_op(ring, OpKind::kAttentionMap).forward.hbm_bytes, 2 * 524288.0);
  EXPECT_DOUBLE_EQ(find_op(ulysses, OpKind::kAttentionMap).forward.hbm_bytes, 2 * 393216.0);
}

TEST(CpCommType, UlyssesKeepsTheSameActivationsAsTheRing) {
  // Q and K: 2 B x 1024 tokens x (4 + 2) heads x 64 = 786,432 B (ring: 512 x (8 + 4) x 64, the
  // same); V 2 x 1024 x 2 x 64 = 262,144 B; softmax statistics 4 B x 1024 x 4 = 16,384 B.
  const LayerOps ulysses = ops_for_layer(gqa(), cp2(CpCommType::kA2a), 0);
  EXPECT_DOUBLE_EQ(find_op(ulysses, OpKind::kAttentionMap).activation_bytes, 786432);
  EXPECT_DOUBLE_EQ(find_op(ulysses, OpKind::kAttentionValue).activation_bytes, 262144);
  EXPECT_DOUBLE_EQ(find_op(ulysses, OpKind::kSoftmax).activation_bytes, 16384);
  const ModelSpec m = gqa();
  const MemoryOpTotals u = memory_op_totals(m, cp2(CpCommType::kA2a));
  const MemoryOpTotals r = memory_op_totals(m, cp2(CpCommType::kP2p));
  EXPECT_GT(u.dense.activation_bytes, 0);
  EXPECT_DOUBLE_EQ(u.dense.activation_bytes, r.dense.activation_bytes);
  EXPECT_DOUBLE_EQ(u.dense.selective_dropped_bytes, r.dense.selective_dropped_bytes);
}

TEST(CpCommType, UlyssesPricesTheKernelAtTheLongerSequence) {
  // Hopper cuDNN causal forward at head dim 64: 225 TFLOPS at seq 512, 288 at 1024, of a 989.4 peak
  // (model/kernels/attention_cost.cc). On a 1 PFLOPS device: 268,435,456 FLOPs / (225/989.4 x 1e15)
  // = 1.18 us for the ring's chunked calls, / (288/989.4 x 1e15) = 0.922 us under Ulysses.
  HardwareSpec hw;
  hw.peak_flops_bf16 = 1e15;
  hw.hbm_bandwidth = 1e15;
  hw.compute_model = ComputeModelKind::kKernel;
  hw.kernels = {.family = kernels::GpuFamily::kHopper, .sm_count = 100, .gemm_tile_m = 128, .gemm_tile_n = 256,
                .gemm_ceiling_bf16 = 1e15, .gemm_ceiling_fp8 = 0, .hbm_fraction = 1, .host_launch_seconds = 0};
  const LayerOps ring = ops_for_layer(gqa(), cp2(CpCommType::kP2p), 0);
  const LayerOps ulysses = ops_for_layer(gqa(), cp2(CpCommType::kA2a), 0);
  const OpCost& r = find_op(ring, OpKind::kAttentionMap);
  const OpCost& u = find_op(ulysses, OpKind::kAttentionMap);
  EXPECT_DOUBLE_EQ(phase_seconds(r.forward, r.op_class, hw, FeatureSpec{}), 268435456 / (225 / 989.4 * 1e15));
  EXPECT_DOUBLE_EQ(phase_seconds(u.forward, u.op_class, hw, FeatureSpec{}), 268435456 / (288 / 989.4 * 1e15));
}

TEST(CpCommType, UnfusedUlyssesBatchesFewerHeadsOfLongerRows) {
  ModelSpec m = gqa();
  m.attention_impl = AttentionImpl::kUnfused;
  const LayerOps ring = ops_for_layer(m, cp2(CpCommType::kP2p), 0);
  const LayerOps ulysses = ops_for_layer(m, cp2(CpCommType::kA2a), 0);
  const OpCost& r = find_op(ring, OpKind::kAttentionMap);
  const OpCost& u = find_op(ulysses, OpKind::kAttentionMap);
  // QK^T as b x heads batched GEMMs of (query rows x d) times (d x s keys): 2*T*s*d*heads FLOPs.
  EXPECT_DOUBLE_EQ(r.forward.shape.m, 512);
  EXPECT_EQ(r.forward.shape.groups, 8);
  EXPECT_DOUBLE_EQ(u.forward.shape.m, 1024);
  EXPECT_DOUBLE_EQ(u.forward.shape.n, 1024);
  EXPECT_EQ(u.forward.shape.groups, 4);
  EXPECT_DOUBLE_EQ(u.forward.flops, 2 * 268435456.0);
  EXPECT_DOUBLE_EQ(r.forward.flops, u.forward.flops);
}

TEST(CpCommType, UlyssesNeedsWholeHeadsPerCpRank) {
  // tp 4: 8/4 = 2 query heads and 4/4 = 1 KV head per TP rank; 1 KV head cannot split over cp 2.
  ParallelSpec par = testing::parallel_spec({.tp = 4, .cp = 2, .global_batch = 1});
  par.cp_comm_type = CpCommType::kA2a;
  try {
    (void)ops_for_layer(gqa(), par, 0);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "parallel.cp_comm_type: a2a needs the attention heads (2) and KV heads (1) per TP rank "
                           "divisible by cp = 2");
  }
  // tp 8 > g 4: each TP rank keeps one replicated KV head, still not divisible by cp 2.
  par.tp = 8;
  ModelSpec m = gqa();
  m.num_attention_heads = 16;
  m.head_dim = 32;
  EXPECT_THROW((void)ops_for_layer(m, par, 0), std::invalid_argument);
  par.cp_comm_type = CpCommType::kP2p;  // ring CP has no such rule
  EXPECT_NO_THROW((void)ops_for_layer(m, par, 0));
}

}  // namespace
}  // namespace mofasim::model
