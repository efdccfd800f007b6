// The memory-bound kernels of a Transformer Engine / unfused stack (model/stack_kernels.h) against
// hand-worked byte counts, their place in the op table, and the kernel shapes the table gives each
// GEMM and attention phase.
#include "model/stack_kernels.h"

#include <gtest/gtest.h>


#include "model/op_table.h"
#include "test/model/model_presets_for_test.h"
#include "test/support/op_lookup.h"

namespace mofasim::model {
namespace {

using test::find_op;
using test::has_op;
using testing::deepseek_v3;
using testing::llama2_70b;

ParallelSpec tp(int t) {
  return testing::parallel_spec({.tp = t, .cp = 1, .pp = 1, .vpp = 1, .dp = 1, .ep = 1, .etp = 1, .micro_batch = 1,
                                 .global_batch = 1, .sequence_parallel = false});
}

ModelSpec with_stack(ModelSpec m, KernelStack stack) {
  m.kernel_stack = stack;
  return m;
}

TEST(StackKernels, FormulasOnHandWorkedCounts) {
  // RoPE over 1000 elements: fused 2 passes of 2 B each way; unfused 9 passes.
  EXPECT_EQ(rope_kernel(KernelStack::kTransformerEngine, 1000).forward.hbm_bytes, 4000);
  EXPECT_EQ(rope_kernel(KernelStack::kTransformerEngine, 1000).backward_input.hbm_bytes, 4000);
  EXPECT_EQ(rope_kernel(KernelStack::kUnfused, 1000).forward.hbm_bytes, 18000);
  // MLA layout over 10 tokens x 4 heads at n 8, r 4, v 8: per head 2*12 + 16 + 12 + 8 = 60
  // elements, plus 4 per token: (2400 + 40) x 2 B = 4880 B; unfused adds 9 passes of 2 B over
  // 10 x 5 x 4 rope elements (3600 B).
  const MlaSpec small{.q_lora_rank = 16, .kv_lora_rank = 8, .qk_nope_head_dim = 8, .qk_rope_head_dim = 4, .v_head_dim = 8};
  EXPECT_EQ(mla_rope_kernel(KernelStack::kTransformerEngine, 10, 4, small).forward.hbm_bytes, 4880);
  EXPECT_EQ(mla_rope_kernel(KernelStack::kTransformerEngine, 10, 4, small).backward_input.hbm_bytes, 4880);
  EXPECT_EQ(mla_rope_kernel(KernelStack::kUnfused, 10, 4, small).forward.hbm_bytes, 4880 + 3600);
  // Residual add: read two, write one (6 B/element); a bias adds a backward read, and an
  // unfused stack a separate bias pass (4 B/element).
  const OpCost fused = residual_kernel(OpKind::kMlpResidual, KernelStack::kTransformerEngine, 1000, false);
  EXPECT_EQ(fused.forward.hbm_bytes, 6000);
  EXPECT_EQ(fused.backward_input.hbm_bytes, 0);
  const OpCost biased = residual_kernel(OpKind::kMlpResidual, KernelStack::kUnfused, 1000, true);
  EXPECT_EQ(biased.forward.hbm_bytes, 10000);
  EXPECT_EQ(biased.backward_input.hbm_bytes, 2000);
  // Permute 100 tokens of width 10 into 800 copies: sort 32 B per pair + gather 2*(100+800)*10.
  const OpCost permute = moe_permute_kernel(100, 800, 10, 0);
  EXPECT_EQ(permute.forward.hbm_bytes, 32 * 800 + 18000);
  EXPECT_EQ(permute.backward_input.hbm_bytes, 18000);
  EXPECT_TRUE(permute.routed_expert);
  // 400 received copies sorted by local expert and back: two copies of 2 * 2 B * 400 * 10 =
  // 16,000 B each, plus the fp32 probabilities read and written once (8 B * 400), both ways.
  const OpCost sorted = moe_permute_kernel(100, 800, 10, 400);
  EXPECT_EQ(sorted.forward.hbm_bytes, 32 * 800 + 18000 + 32000 + 3200);  // 78,800
  EXPECT_EQ(sorted.backward_input.hbm_bytes, 18000 + 32000 + 3200);      // 53,200
  EXPECT_EQ(unfused_loss_extra_forward(1000).hbm_bytes, 30000);
  EXPECT_EQ(unfused_loss_extra_backward(1000).hbm_bytes, 14000);
}

TEST(StackKernels, TransformerEngineLayerAddsRopeAndTwoResidualAdds) {
  const ParallelSpec par = tp(8);
  const LayerOps table2 = ops_for_layer(llama2_70b(), par, 0);
  const LayerOps te = ops_for_layer(with_stack(llama2_70b(), KernelStack::kTransformerEngine), par, 0);
  EXPECT_EQ(te.ops().size(), table2.ops().size() + 3);
  EXPECT_FALSE(has_op(table2, OpKind::kRope));
  // Model FLOPs do not change: the new kernels are memory-bound.
  EXPECT_EQ(te.totals().model_flops, table2.totals().model_flops);
  // RoPE on 4096 tokens x (8 query + 1 KV heads per GPU) x 128 = 4,718,592 elements, 4 B each.
  EXPECT_EQ(find_op(te, OpKind::kRope).forward.hbm_bytes, 18'874'368.0);
  // Residual add on 4096 x 8192 = 33,554,432 elements (no SP), 6 B each.
  EXPECT_EQ(find_op(te, OpKind::kAttentionResidual).forward.hbm_bytes, 201'326'592.0);
  EXPECT_EQ(find_op(te, OpKind::kMlpResidual).forward.hbm_bytes, 201'326'592.0);
  // Unfused: RoPE moves 9/2 as many bytes.
  const LayerOps unfused = ops_for_layer(with_stack(llama2_70b(), KernelStack::kUnfused), par, 0);
  EXPECT_EQ(find_op(unfused, OpKind::kRope).forward.hbm_bytes, 84'934'656.0);
}

TEST(StackKernels, QkLayernormNormsEveryQueryAndKeyHead) {
  // LLaMA2-70B at t = 8 with Qwen3's q/k norms: 4096 tokens x (8 query + 1 KV heads) x 128 =
  // 4,718,592 elements per GPU; a norm reads 2 B and writes 2 B forward (4 B/element), reads the
  // input, the output gradient and writes the input gradient backward (6 B/element), and keeps its
  // input (2 B/element).
  ModelSpec m = llama2_70b();
  m.kernel_stack = KernelStack::kTransformerEngine;
  EXPECT_FALSE(has_op(ops_for_layer(m, tp(8), 0), OpKind::kQkNorm));
  m.qk_layernorm = true;
  const LayerOps layer = ops_for_layer(m, tp(8), 0);
  const OpCost& norm = find_op(layer, OpKind::kQkNorm);
  const double elements = 4096.0 * (8 + 1) * 128;
  EXPECT_EQ(norm.forward.hbm_bytes, 4 * elements);
  EXPECT_EQ(norm.backward_input.hbm_bytes, 6 * elements);
  EXPECT_EQ(norm.activation_bytes, 2 * elements);
  EXPECT_EQ(norm.forward.flops, 0);
  // It sits between the QKV projection and RoPE.
  const auto ops = layer.ops();
  std::size_t qkv = 0, qk = 0, rope = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].op == OpKind::kQkvProjection) qkv = i;
    if (ops[i].op == OpKind::kQkNorm) qk = i;
    if (ops[i].op == OpKind::kRope) rope = i;
  }
  EXPECT_EQ(qk, qkv + 1);
  EXPECT_EQ(rope, qk + 1);
  // MLA keeps its latent norms inside the QKV op: no separate kernel.
  ModelSpec ds = deepseek_v3();
  ds.kernel_stack = KernelStack::kTransformerEngine;
  ds.qk_layernorm = true;
  EXPECT_FALSE(has_op(ops_for_layer(ds, tp(1), 0), OpKind::kQkNorm));
}

TEST(StackKernels, MoePermuteOnTheDeepSeekV3Layer) {
  // tp 1: T_g = 4096 tokens, top-8 -> 32,768 copies of width 7168.
  const LayerOps ops = ops_for_layer(with_stack(deepseek_v3(), KernelStack::kTransformerEngine), tp(1), 3);
  const OpCost& permute = find_op(ops, OpKind::kMoePermute);
  // EP 1 holds all 256 experts: the dropless alltoall dispatcher still sorts the 32,768 copies by
  // local expert and back (an identity chunk order, but a copy): 2 x 4 B x 32,768 x 7168 + 8 B x 32,768.
  const double local_order = 2 * 4.0 * 32768 * 7168 + 8.0 * 32768;  // 1,879,310,336
  EXPECT_EQ(permute.forward.hbm_bytes, 32.0 * 32768 + 2.0 * (4096 + 32768) * 7168 + local_order);
  EXPECT_EQ(permute.backward_input.hbm_bytes, 2.0 * (4096 + 32768) * 7168 + local_order);
  EXPECT_EQ(local_order, 1'879'310'336.0);
  // EP 256 (one local expert per rank): only the permute before the all-to-all.
  ParallelSpec ep256 = tp(1);
  ep256.dp = 256;
  ep256.ep = 256;
  const LayerOps one_expert = ops_for_layer(with_stack(deepseek_v3(), KernelStack::kTransformerEngine), ep256, 3);
  EXPECT_EQ(find_op(one_expert, OpKind::kMoePermute).forward.hbm_bytes, 529'530'880.0);
  // MLA RoPE with the query / key / value layout: 4096 tokens x 128 heads x 960 elements
  // (q 192 in + 192 out, kv 256 in, key 192 + value 128 out) + 4096 x 64 k_pos_emb, 2 B each:
  // 1,006,632,960 + 524,288 B, both ways.
  EXPECT_EQ(find_op(ops, OpKind::kRope).forward.hbm_bytes, 1'007'157'248.0);
  EXPECT_EQ(find_op(ops, OpKind::kRope).backward_input.hbm_bytes, 1'007'157'248.0);
}

TEST(StackKernels, UnfusedCrossEntropyMovesMoreBytes) {
  // 4096 tokens x 32000/8 vocab = 16,384,000 logits per GPU.
  const OpCost table2 = find_op(ops_for_head(llama2_70b(), tp(8)), OpKind::kLoss);
  const OpCost unfused = find_op(ops_for_head(with_stack(llama2_70b(), KernelStack::kUnfused), tp(8)), OpKind::kLoss);
  EXPECT_EQ(table2.forward.hbm_bytes, 8 * 16'384'000.0);
  EXPECT_EQ(unfused.forward.hbm_bytes, 38 * 16'384'000.0);
  EXPECT_EQ(unfused.backward_input.hbm_bytes, 22 * 16'384'000.0);
}

TEST(KernelShapes, GemmPhasesCarryForwardDgradAndWgradShapes) {
  const OpCost& qkv = find_op(ops_for_layer(llama2_70b(), tp(8), 0), OpKind::kQkvProjection);
  // Forward 4096 x 1280 (reduce 8192); dgrad 4096 x 8192 (reduce 1280); wgrad 8192 x 1280 (reduce 4096).
  EXPECT_EQ(qkv.forward.shape.kind, KernelKind::kGemm);
  EXPECT_EQ(qkv.forward.shape.m, 4096);
  EXPECT_EQ(qkv.forward.shape.n, 1280);
  EXPECT_EQ(qkv.forward.shape.k, 8192);
  EXPECT_EQ(qkv.backward_input.shape.n, 8192);
  EXPECT_EQ(qkv.backward_input.shape.k, 1280);
  EXPECT_EQ(qkv.backward_weight.shape.m, 8192);
  EXPECT_EQ(qkv.backward_weight.shape.k, 4096);
  // Each shape accounts for exactly the phase's FLOPs.
  for (const PhaseCost& p : {qkv.forward, qkv.backward_input, qkv.backward_weight}) {
    EXPECT_EQ(2 * p.shape.m * p.shape.n * p.shape.k * p.shape.groups, p.flops);
  }
}

TEST(KernelShapes, AttentionPhasesCarryTheFlashCallAndUnfusedBatchedGemms) {
  ParallelSpec par = tp(8);
  par.cp = 2;
  par.dp = 1;
  const OpCost& map = find_op(ops_for_layer(llama2_70b(), par, 0), OpKind::kAttentionMap);
  EXPECT_EQ(map.forward.shape.kind, KernelKind::kAttention);
  EXPECT_EQ(map.forward.shape.seq, 2048);  // s / cp per flash call
  EXPECT_EQ(map.forward.shape.head_dim, 128);
  EXPECT_FALSE(map.forward.shape.backward);
  EXPECT_TRUE(map.backward_input.shape.backward);
  // Unfused: b * heads = 8 batched GEMMs of 4096 x 4096 scores over d = 128; backward two of each.
  ModelSpec m = llama2_70b();
  m.attention_impl = AttentionImpl::kUnfused;
  const LayerOps unfused = ops_for_layer(m, tp(8), 0);
  for (OpKind kind : {OpKind::kAttentionMap, OpKind::kAttentionValue}) {
    const OpCost& op = find_op(unfused, kind);
    for (const PhaseCost& p : {op.forward, op.backward_input}) {
      EXPECT_EQ(p.shape.kind, KernelKind::kGemm);
      EXPECT_EQ(2 * p.shape.m * p.shape.n * p.shape.k * p.shape.groups, p.flops);
    }
    EXPECT_EQ(op.forward.shape.groups, 8);
    EXPECT_EQ(op.backward_input.shape.groups, 16);
  }
}


TEST(StackKernels, InternLmNormAndActivationOnHandWorkedCounts) {
  // InternLM's norm over 1000 elements: cast bf16 -> fp32 (2 + 4) and the norm on fp32 (4 + 2)
  // forward; norm backward (2 + 4 + 4) and the cast back (4 + 2); the checkpoint re-runs the cast
  // and the norm (12), and after the attention also the residual add (6).
  const OpCost input = norm_kernel(OpKind::kInputNorm, KernelStack::kInternLm, 1000, true, false);
  EXPECT_EQ(input.forward.hbm_bytes, 12000);
  EXPECT_EQ(input.backward_input.hbm_bytes, 28000);
  EXPECT_EQ(input.activation_bytes, 2000);
  EXPECT_EQ(norm_kernel(OpKind::kPostAttentionNorm, KernelStack::kInternLm, 1000, true, true).backward_input.hbm_bytes,
            34000);
  const OpCost final_norm = norm_kernel(OpKind::kFinalNorm, KernelStack::kInternLm, 1000, false, false);
  EXPECT_EQ(final_norm.forward.hbm_bytes, 12000);
  EXPECT_EQ(final_norm.backward_input.hbm_bytes, 16000);
  EXPECT_EQ(final_norm.activation_bytes, 4000);  // the fp32 copy
  // Any other stack: MoFa Table 2's bf16 norm (4 B forward, 6 B backward per element).
  const OpCost te_norm = norm_kernel(OpKind::kInputNorm, KernelStack::kTransformerEngine, 1000, true, true);
  EXPECT_EQ(te_norm.forward.hbm_bytes, 4000);
  EXPECT_EQ(te_norm.backward_input.hbm_bytes, 6000);
  EXPECT_EQ(te_norm.activation_bytes, 2000);
  // Eager SwiGLU writing 1000 elements: silu (2 + 2) and the multiply (4 + 2) forward; the
  // multiply's two gradients (6 + 6) and silu's (6) backward, plus the sum of w1's and w2's input
  // gradients over 100 elements (6 B each); keeps w1's, w2's and silu's outputs.
  const OpCost eager = activation_kernel(OpKind::kMlpActivation, KernelStack::kInternLm, true, 1000, 100);
  EXPECT_EQ(eager.forward.hbm_bytes, 10000);
  EXPECT_EQ(eager.backward_input.hbm_bytes, 18600);
  EXPECT_EQ(eager.activation_bytes, 6000);
  // Fused (any other stack): read gate and up, write one (6 B); backward 10 B; keeps both inputs.
  const OpCost fused = activation_kernel(OpKind::kMlpActivation, KernelStack::kTransformerEngine, true, 1000, 100);
  EXPECT_EQ(fused.forward.hbm_bytes, 6000);
  EXPECT_EQ(fused.backward_input.hbm_bytes, 10000);
  EXPECT_EQ(fused.activation_bytes, 4000);
  // A plain (non-gated) FFN keeps MoFa Table 2's activation under the InternLM stack too.
  EXPECT_EQ(activation_kernel(OpKind::kMlpActivation, KernelStack::kInternLm, false, 1000, 100).forward.hbm_bytes, 4000);
}

TEST(StackKernels, InternLmLayerMovesTheFp32NormAndEagerSwigluBytes) {
  // LLaMA-2-70B at tp 8: E = 4096 tokens x 8192 = 33,554,432; F = 4096 x 28672/8 = 14,680,064.
  const ParallelSpec par = tp(8);
  const LayerOps te = ops_for_layer(with_stack(llama2_70b(), KernelStack::kTransformerEngine), par, 0);
  const LayerOps ilm = ops_for_layer(with_stack(llama2_70b(), KernelStack::kInternLm), par, 0);
  EXPECT_EQ(ilm.ops().size(), te.ops().size());
  EXPECT_EQ(ilm.totals().model_flops, te.totals().model_flops);
  // Forward: two norms 8 B/element more each (16 E), the eager gating 4 B more per F.
  EXPECT_EQ(ilm.totals().forward.hbm_bytes - te.totals().forward.hbm_bytes, 16.0 * 33'554'432 + 4.0 * 14'680'064);
  // Backward: norms +22 E and +28 E, gating +8 F and the sum of the two input gradients 6 E.
  EXPECT_EQ(ilm.totals().backward_input.hbm_bytes - te.totals().backward_input.hbm_bytes,
            56.0 * 33'554'432 + 8.0 * 14'680'064);  // 1,996,488,704
  EXPECT_EQ(ilm.totals().backward_weight.hbm_bytes, te.totals().backward_weight.hbm_bytes);
  // Stored: silu's output on top (2 B per F).
  EXPECT_EQ(ilm.totals().activation_bytes - te.totals().activation_bytes, 2.0 * 14'680'064);
}

TEST(StackKernels, InternLmExpertsRunTheEagerSwigluToo) {
  // DeepSeek-V3's MoE layer at tp 1, ep 1: 4096 tokens x top 8 = 32,768 routed copies x f_e 2048 =
  // F = 67,108,864 activation elements. Eager gating: 10 B per F forward (the fused form 6), and the
  // sum of w1's and w2's input gradients adds 6 B per routed copy x hidden 7168 backward.
  const LayerOps te = ops_for_layer(with_stack(deepseek_v3(), KernelStack::kTransformerEngine), tp(1), 3);
  const LayerOps ilm = ops_for_layer(with_stack(deepseek_v3(), KernelStack::kInternLm), tp(1), 3);
  const double F = 32768.0 * 2048;
  EXPECT_EQ(find_op(te, OpKind::kExpertActivation).forward.hbm_bytes, 6.0 * F);
  EXPECT_EQ(find_op(ilm, OpKind::kExpertActivation).forward.hbm_bytes, 10.0 * F);  // 671,088,640
  EXPECT_EQ(find_op(ilm, OpKind::kExpertActivation).backward_input.hbm_bytes, 18.0 * F + 6.0 * 32768 * 7168);
}

}  // namespace
}  // namespace mofasim::model
