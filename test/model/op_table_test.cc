// The per-op cost table: FLOPs against Megatron's formula, stored activations against the
// LLaMA-style accounting of reference-formulas.md §2.5, and the per-layer communication of §4.4.
#include "model/op_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "model/flops.h"
#include "test/model/model_presets_for_test.h"
#include "test/support/op_lookup.h"

namespace mofasim::model {
namespace {

using test::find_op;
using testing::deepseek_v3;
using testing::llama2_70b;

ParallelSpec tp(int t, bool sp) {
  return testing::parallel_spec({.tp = t, .cp = 1, .pp = 1, .vpp = 1, .dp = 1, .ep = 1, .etp = 1, .micro_batch = 1,
                      .global_batch = 1, .sequence_parallel = sp});
}

int count_comms(const LayerOps& ops, CollectiveKind c, Phase p) {
  int n = 0;
  for (const CommOp& op : ops.comms()) n += (op.collective == c && op.phase == p) ? 1 : 0;
  return n;
}

TEST(OpTable, Llama2LayerForwardFlopsPerGpuMatchTheWorkedExample) {
  // §8.1: per layer and micro-batch on one GPU (t = 8): Megatron's per-token layer FLOPs
  // (6*A_lin + 6*3hf + 6*s*a*d_h = 5,335,154,688) * 4096 tokens / 3 (forward) / 8.
  const LayerOps ops = ops_for_layer(llama2_70b(), tp(8, false), 0);
  EXPECT_EQ(ops.totals().model_flops, 910'533'066'752.0);
  // Only Megatron-counted ops carry FLOPs in a dense layer; backward (B + W) is twice forward.
  EXPECT_EQ(ops.totals().forward.flops, 910'533'066'752.0);
  EXPECT_EQ(ops.totals().backward_input.flops + ops.totals().backward_weight.flops, 2 * 910'533'066'752.0);
  // Attention core has no weight gradient: W = the GEMMs only = 2 * (A_lin + 3hf) * 4096 / 8.
  EXPECT_EQ(ops.totals().backward_weight.flops, 2 * (150'994'944.0 + 704'643'072.0) * 4096 / 8);
}

TEST(OpTable, LayersAndHeadReproduceModelFlopsPerToken) {
  const ModelSpec m = llama2_70b();
  const ParallelSpec par = tp(8, true);
  const double per_gpu_forward =
      80 * ops_for_layer(m, par, 0).totals().model_flops + ops_for_head(m, par).totals().model_flops;
  // forward * 3 (fwd, B, W) * t GPUs / 4096 tokens = Megatron's 428,385,239,040 FLOPs per token.
  EXPECT_EQ(per_gpu_forward * 3 * 8 / 4096, model_flops_per_token(m).total());
}

TEST(OpTable, Llama2QkvGemmShapePerGpu) {
  const LayerOps layer = ops_for_layer(llama2_70b(), tp(8, false), 0);  // the table `qkv` points into
  const OpCost& qkv = find_op(layer, OpKind::kQkvProjection);
  // M = 4096 tokens, K = h, N = (64/8 query heads + 2 * 8/8 KV heads) * 128.
  EXPECT_EQ(qkv.gemm.m, 4096.0);
  EXPECT_EQ(qkv.gemm.k, 8192.0);
  EXPECT_EQ(qkv.gemm.n, 1280.0);
  EXPECT_EQ(qkv.op_class, OpClass::kGemm);
  // bf16 operands and result: 2 * (MK + KN + MN).
  EXPECT_EQ(qkv.forward.hbm_bytes, 2 * (4096.0 * 8192 + 8192.0 * 1280 + 4096.0 * 1280));
}

TEST(OpTable, StoredActivationFollowsLlamaAccounting) {
  const ModelSpec m = llama2_70b();
  // Per token without TP: 12h + 4h*g/a + 6f (§2.5) + fp32 softmax statistics 4a.
  const double per_token = 12 * 8192.0 + 4 * 8192.0 * 8 / 64 + 6 * 28672.0 + 4 * 64;
  EXPECT_EQ(ops_for_layer(m, tp(1, false), 0).totals().activation_bytes, 4096 * per_token);
  // TP + SP shards every term by 8.
  EXPECT_EQ(ops_for_layer(m, tp(8, true), 0).totals().activation_bytes, 4096 * per_token / 8);
  // TP without SP keeps the norm inputs, QKV input and fc1 input (2h each, 8h) whole.
  const double replicated = 8 * 8192.0;
  EXPECT_EQ(ops_for_layer(m, tp(8, false), 0).totals().activation_bytes,
            4096 * (replicated + (per_token - replicated) / 8));
  // Selective recompute drops the softmax statistics of the fused kernel: 4 * a/t * T.
  EXPECT_EQ(ops_for_layer(m, tp(8, true), 0).totals().selective_dropped_bytes, 4.0 * 8 * 4096);
  // Full recompute keeps the layer input: 2 * T * h / t with SP (Korthikanti's 8 MiB row).
  EXPECT_EQ(ops_for_layer(m, tp(8, true), 0).totals().input_bytes, 8'388'608.0);
}

TEST(OpTable, TensorParallelCollectives) {
  // S = 2 * s * b * h = 67,108,864 bytes per collective (§8.5).
  const LayerOps plain = ops_for_layer(llama2_70b(), tp(8, false), 0);
  EXPECT_EQ(count_comms(plain, CollectiveKind::kAllReduce, Phase::kForward), 2);
  EXPECT_EQ(count_comms(plain, CollectiveKind::kAllReduce, Phase::kInputGrad), 2);
  for (const CommOp& c : plain.comms()) {
    EXPECT_EQ(c.bytes, 67'108'864.0);
    EXPECT_EQ(c.wire_bytes, 2 * 7.0 / 8 * 67'108'864);  // ring all-reduce
  }
  // With SP each all-reduce becomes a reduce-scatter + all-gather: four per forward.
  const LayerOps sp = ops_for_layer(llama2_70b(), tp(8, true), 0);
  EXPECT_EQ(count_comms(sp, CollectiveKind::kAllGather, Phase::kForward), 2);
  EXPECT_EQ(count_comms(sp, CollectiveKind::kReduceScatter, Phase::kForward), 2);
  EXPECT_EQ(count_comms(sp, CollectiveKind::kAllGather, Phase::kInputGrad), 2);
  EXPECT_EQ(count_comms(sp, CollectiveKind::kReduceScatter, Phase::kInputGrad), 2);
  // The weight gradients of QKV and fc1 re-gather their sharded inputs.
  EXPECT_EQ(count_comms(sp, CollectiveKind::kAllGather, Phase::kWeightGrad), 2);
  // No TP, no collectives.
  EXPECT_TRUE(ops_for_layer(llama2_70b(), tp(1, false), 0).comms().empty());
}

double comm_bytes(const LayerOps& ops, CollectiveKind c, Phase p, OpKind op) {
  double bytes = -1;
  for (const CommOp& comm : ops.comms()) {
    if (comm.collective == c && comm.phase == p && comm.op == op) {
      EXPECT_EQ(bytes, -1.0) << "one such collective expected";
      bytes = comm.bytes;
    }
  }
  return bytes;
}

TEST(OpTable, MlaGathersItsLatentsNotTheHiddenState) {
  // DeepSeek-V3 layer 0 (dense FFN), 4096 tokens, TP 2. Megatron's MLA runs the down-projections
  // duplicated on each rank's own tokens and gathers the latents before the column-parallel
  // up-projections (q 1536 + kv 512 elements per token under SP), and the rope key (64) after.
  const ModelSpec m = deepseek_v3();
  const LayerOps sp = ops_for_layer(m, tp(2, true), 0);
  const double latent = 2.0 * 4096 * (1536 + 512);
  const double rope_key = 2.0 * 4096 * 64;
  const double hidden = 2.0 * 4096 * 7168;
  std::vector<double> gathers, scatters;
  for (const CommOp& comm : sp.comms()) {
    if (comm.op != OpKind::kQkvProjection) continue;
    if (comm.collective == CollectiveKind::kAllGather && comm.phase == Phase::kForward) gathers.push_back(comm.bytes);
    if (comm.collective == CollectiveKind::kReduceScatter) scatters.push_back(comm.bytes);
    if (comm.bytes == latent) {
      EXPECT_EQ(comm.before_op, comm.phase != Phase::kInputGrad);
    }
    if (comm.bytes == rope_key) {
      EXPECT_EQ(comm.before_op, comm.phase == Phase::kInputGrad);
    }
  }
  EXPECT_THAT(gathers, ::testing::UnorderedElementsAre(latent, rope_key));
  EXPECT_THAT(scatters, ::testing::UnorderedElementsAre(latent, rope_key));
  EXPECT_EQ(comm_bytes(sp, CollectiveKind::kAllGather, Phase::kWeightGrad, OpKind::kQkvProjection), latent);
  // The output projection is row-parallel over the hidden state as in any attention.
  EXPECT_EQ(comm_bytes(sp, CollectiveKind::kReduceScatter, Phase::kForward, OpKind::kOutputProjection), hidden);
  EXPECT_EQ(comm_bytes(sp, CollectiveKind::kAllGather, Phase::kInputGrad, OpKind::kOutputProjection), hidden);
  // The FFN's pair is untouched.
  EXPECT_EQ(comm_bytes(sp, CollectiveKind::kAllGather, Phase::kForward, OpKind::kMlpLinear1), hidden);
  // Without SP the up-projections' input gradients (q and kv latents; the rope key comes from the
  // duplicated down-projection on the whole sequence) are all-reduced.
  const LayerOps plain = ops_for_layer(m, tp(2, false), 0);
  EXPECT_EQ(comm_bytes(plain, CollectiveKind::kAllReduce, Phase::kInputGrad, OpKind::kQkvProjection),
            2.0 * 4096 * (1536 + 512));
  EXPECT_EQ(comm_bytes(plain, CollectiveKind::kAllReduce, Phase::kForward, OpKind::kOutputProjection), hidden);
  // Without a q latent the query projection gathers the hidden state beside the kv latent.
  ModelSpec lite = m;
  lite.mla.q_lora_rank = 0;
  EXPECT_EQ(comm_bytes(ops_for_layer(lite, tp(2, true), 0), CollectiveKind::kAllGather, Phase::kWeightGrad,
                       OpKind::kQkvProjection),
            2.0 * 4096 * (7168 + 512));
}

TEST(OpTable, ContextParallelSplitsQueriesAndRingsKeyValueBlocks) {
  ParallelSpec par = tp(1, false);
  const LayerOps whole = ops_for_layer(llama2_70b(), par, 0);
  par.cp = 4;
  const LayerOps quarter = ops_for_layer(llama2_70b(), par, 0);
  // Each GPU holds s/4 queries attending over all s keys: a quarter of the attention FLOPs.
  EXPECT_EQ(find_op(quarter, OpKind::kAttentionMap).forward.flops,
            find_op(whole, OpKind::kAttentionMap).forward.flops / 4);
  // Ring: 3 steps forward, each passing K and V of 1024 tokens * 8 KV heads * 128 * 2 B.
  const double kv_block = 2.0 * 1024 * 8 * (128 + 128);
  int rings = 0;
  for (const CommOp& c : quarter.comms()) {
    ASSERT_EQ(c.group, LayerGroup::kCp);
    EXPECT_EQ(c.count, 3);
    EXPECT_EQ(c.bytes, c.phase == Phase::kForward ? kv_block : 2 * kv_block);
    ++rings;
  }
  EXPECT_EQ(rings, 2);
}

ParallelSpec dsv3_layout(int ep) {
  return testing::parallel_spec({.tp = 1, .cp = 1, .pp = 1, .vpp = 1, .dp = 64, .ep = ep, .etp = 1, .micro_batch = 1,
                      .global_batch = 64});
}

TEST(OpTable, DeepSeekMoeLayerFlopsAndExpertShapes) {
  const ModelSpec m = deepseek_v3();
  const LayerOps ops = ops_for_layer(m, dsv3_layout(8), 3);
  const double T = 4096, h = 7168;
  // Megatron per-token forward of an MoE layer, minus the two latent-norm columns it counts as
  // GEMM weights: 2*(A_lin - r_q - r_kv) + 2*3h*(k f_e + f_sh) + s * a * (d_n + d_r + d_v).
  const double a_lin = 1536 * (h + 128 * 192) + 512 * (h + 128 * 256) + h * 64 + 128 * 128 * h;
  const double per_token = 2 * a_lin + 6 * h * (8 * 2048 + 2048) + 4096.0 * 128 * (128 + 64 + 128);
  EXPECT_EQ(ops.totals().model_flops, T * per_token);
  // The router is a small GEMM outside model FLOPs: 2 * T * h * E.
  EXPECT_EQ(ops.totals().forward.flops - ops.totals().model_flops, 2 * T * h * 256);
  // 32 local experts, each with ep * T * k / E = 8 * 4096 * 8 / 256 = 1024 tokens: small GEMMs.
  const OpCost& up = find_op(ops, OpKind::kExpertLinear1);
  EXPECT_EQ(up.gemm.instances, 32);
  EXPECT_EQ(up.gemm.m, 1024.0);
  EXPECT_EQ(up.gemm.n, 2 * 2048.0);
  EXPECT_EQ(up.op_class, OpClass::kSmallGemm);
  // EP all-to-all: dispatch T*k*h in fp8 (1 B), combine in bf16; (e-1)/e leaves the GPU.
  int a2a = 0;
  for (const CommOp& c : ops.comms()) {
    if (c.collective != CollectiveKind::kAllToAll) continue;
    ++a2a;
    const bool dispatch = c.phase == Phase::kForward && c.before_op;
    EXPECT_EQ(c.bytes, T * 8 * h * (dispatch ? 1 : 2));
    EXPECT_EQ(c.wire_bytes, c.bytes * 7 / 8);
  }
  EXPECT_EQ(a2a, 4);
}

TEST(OpTable, ExpertWorkPerGpuIsIndependentOfEpAndScalesWithImbalanceAcrossEpRanks) {
  ModelSpec m = deepseek_v3();
  const double ep1 = find_op(ops_for_layer(m, dsv3_layout(1), 3), OpKind::kExpertLinear1).forward.flops;
  const double ep64 = find_op(ops_for_layer(m, dsv3_layout(64), 3), OpKind::kExpertLinear1).forward.flops;
  // T*k copies * 2 * h * 2f_e on every GPU, however the experts are spread.
  EXPECT_EQ(ep1, 4096.0 * 8 * 2 * 7168 * 2 * 2048);
  EXPECT_EQ(ep64, ep1);
  m.moe.load_imbalance = 1.5;
  const LayerOps skewed = ops_for_layer(m, dsv3_layout(64), 3);
  EXPECT_EQ(find_op(skewed, OpKind::kExpertLinear1).forward.flops, 1.5 * ep1);
  // Routed activation: copies' inputs 2h, SwiGLU inputs 4f_e, fc2 inputs 2f_e, times k * T * 1.5.
  EXPECT_EQ(skewed.totals().routed_activation_bytes, 1.5 * 8 * 4096 * (2 * 7168.0 + 6 * 2048));
  EXPECT_EQ(skewed.totals().routed_input_bytes, 1.5 * 8 * 4096 * 2 * 7168.0);
  // The busiest rank also receives 1.5x the dispatched copies: T k h bytes per element x 1.5.
  for (const CommOp& c : skewed.comms()) {
    if (c.collective == CollectiveKind::kAllToAll && c.phase == Phase::kForward && c.before_op) {
      EXPECT_EQ(c.bytes, 1.5 * 4096.0 * 8 * 7168 * m.moe.dispatch_bytes_per_element);
    }
  }
  // With ep = 1 one rank holds every expert: imbalance between experts does not change its work.
  EXPECT_EQ(find_op(ops_for_layer(m, dsv3_layout(1), 3), OpKind::kExpertLinear1).forward.flops, ep1);
}

TEST(OpTable, HeadAndPipelineBoundary) {
  const ModelSpec m = llama2_70b();
  const LayerOps head = ops_for_head(m, tp(8, true));
  // Head GEMM: 2 * T * h * V/t.
  EXPECT_EQ(find_op(head, OpKind::kHead).forward.flops, 2 * 4096.0 * 8192 * 4000);
  // Kept: final-norm input and head input (2 T h / t each with SP) and fp32 logits 4 T V / t.
  EXPECT_EQ(head.totals().activation_bytes, 2 * (2 * 512.0 * 8192) + 4 * 4096.0 * 4000);
  ParallelSpec par = tp(8, true);
  par.pp = 4;
  const LayerOps pp = pp_boundary_comm(m, par);
  ASSERT_EQ(pp.comms().size(), 2u);
  // 2 * s * b * h / t with SP, one each way.
  EXPECT_EQ(pp.comms()[0].bytes, 2 * 4096.0 * 8192 / 8);
  EXPECT_EQ(pp.comms()[1].phase, Phase::kInputGrad);
}

TEST(OpTable, RejectsLayoutsTheShapesCannotSplit) {
  EXPECT_THROW(ops_for_layer(llama2_70b(), tp(3, false), 0), std::invalid_argument);  // 64 heads
  EXPECT_THROW(ops_for_layer(deepseek_v3(), dsv3_layout(3), 3), std::invalid_argument);  // 256 experts
  EXPECT_THROW(ops_for_layer(llama2_70b(), tp(1, false), -1), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::model
