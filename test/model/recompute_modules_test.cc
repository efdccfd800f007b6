// Selective recompute by Megatron module (model/recompute_modules.h): each module's dropped
// activation bytes and re-run forward FLOPs against hand-worked values in the style of
// reference-formulas.md §2.5 (bf16 activations, per micro-batch of b = 1 on one GPU), and full
// recompute by method (uniform / block) in the memory model.
#include "model/recompute_modules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "model/flops.h"
#include "model/memory.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using testing::deepseek_v3;
using testing::Layout;
using testing::llama2_70b;
using testing::parallel_spec;

RecomputeModules bits(std::initializer_list<RecomputeModule> ms) {
  RecomputeModules r = 0;
  for (RecomputeModule m : ms) r |= recompute_bit(m);
  return r;
}

// Dropped bytes and re-run forward FLOPs of `modules` on layer `layer`.
struct Applied {
  double dropped = 0;
  double flops = 0;
};
Applied apply(const ModelSpec& m, const ParallelSpec& p, int layer, RecomputeModules modules) {
  const LayerTotals t = with_recompute_modules(ops_for_layer(m, p, layer), m, p, modules).totals();
  return {t.selective_dropped_bytes, t.selective_recompute.flops};
}

// LLaMA2-70B, t = 8 with SP, s = 4096: T = 4096 tokens, T_sp = 512, f/t = 3584.
const ParallelSpec kLlamaTp8 = parallel_spec({.tp = 8, .dp = 1, .global_batch = 1, .sequence_parallel = true});

TEST(RecomputeModules, CoreAttnIsTheOpTablesSelective) {
  const LayerTotals base = ops_for_layer(llama2_70b(), kLlamaTp8, 0).totals();
  const Applied a = apply(llama2_70b(), kLlamaTp8, 0, bits({RecomputeModule::kCoreAttn}));
  EXPECT_EQ(a.dropped, base.selective_dropped_bytes);
  // Flash attention keeps fp32 softmax statistics: 4 B x 8 heads per GPU x 4096 tokens.
  EXPECT_EQ(a.dropped, 4.0 * 8 * 4096);
  EXPECT_EQ(a.flops, base.selective_recompute.flops);
}

TEST(RecomputeModules, LayernormDropsTheTwoNormOutputs) {
  // QKV input and fc1 input, each 2 B x T_sp x h = 2 x 512 x 8192.
  const Applied a = apply(llama2_70b(), kLlamaTp8, 0, bits({RecomputeModule::kLayernorm}));
  EXPECT_EQ(a.dropped, 2 * (2.0 * 512 * 8192));
  EXPECT_EQ(a.flops, 0.0);  // norms are memory-bound: no FLOPs, only HBM passes
}

TEST(RecomputeModules, MlpDropsSixFPerTokenAndRerunsThreeGemms) {
  // SwiGLU: gate/up outputs 4f + activation output 2f bytes per token, f/t = 3584: 6 x 3584 x 4096.
  const Applied a = apply(llama2_70b(), kLlamaTp8, 0, bits({RecomputeModule::kMlp}));
  EXPECT_EQ(a.dropped, 6.0 * 3584 * 4096);  // 88,080,384
  // fc1 (h -> 2f/t) and fc2 (f/t -> h): 3 x 2 x T x h x f/t.
  EXPECT_EQ(a.flops, 3 * 2.0 * 4096 * 8192 * 3584);  // 721,554,505,728
  // With layernorm as well the two drop different tensors: the sum.
  const Applied both = apply(llama2_70b(), kLlamaTp8, 0, bits({RecomputeModule::kMlp, RecomputeModule::kLayernorm}));
  EXPECT_EQ(both.dropped, 6.0 * 3584 * 4096 + 2 * (2.0 * 512 * 8192));
}

// DeepSeek-V3 MoE layer, t = 1, EP 8, s = 4096: T = 4096 tokens, 8 routed copies per token
// (32,768 dispatched rows), f_e = f_sh = 2048, h = 7168, E = 256.
const ParallelSpec kDsEp8 = parallel_spec({.tp = 1, .dp = 8, .ep = 8, .global_batch = 8});
constexpr int kMoeLayer = 60;

TEST(RecomputeModules, MlaUpProjDropsExpandedQkvAndRerunsTheUpProjections) {
  const Applied a = apply(deepseek_v3(), kDsEp8, kMoeLayer, bits({RecomputeModule::kMlaUpProj}));
  // Q and K: 2 B x T x 128 heads x (128 + 64) each; V: 2 B x T x 128 x 128.
  EXPECT_EQ(a.dropped, 2.0 * 4096 * 256 * 192 + 2.0 * 4096 * 128 * 128);  // 536,870,912
  // q_up 1536 x 128 x 192 = 37,748,736 and kv_up 512 x 128 x (128 + 128) = 16,777,216 weights.
  EXPECT_DOUBLE_EQ(a.flops, 2.0 * 4096 * (37748736.0 + 16777216.0));  // 446,676,598,784
}

TEST(RecomputeModules, MoeActSharedExpertsAndWholeMoe) {
  const ModelSpec m = deepseek_v3();
  // moe_act: the routed activation output (fc2 input), 2 B x 32,768 rows x 2048.
  EXPECT_EQ(apply(m, kDsEp8, kMoeLayer, bits({RecomputeModule::kMoeAct})).dropped, 2.0 * 32768 * 2048);
  // shared_experts: gate/up 4 x T x f_sh plus activation output 2 x T x f_sh.
  EXPECT_EQ(apply(m, kDsEp8, kMoeLayer, bits({RecomputeModule::kSharedExperts})).dropped, 6.0 * 4096 * 2048);
  // moe: router probabilities 4 B x T x E, the shared experts, dispatched rows 2 x 32,768 x h,
  // gate/up 4 x 32,768 x f_e, activation output 2 x 32,768 x f_e, the combine's dispatched gate
  // probabilities 4 x 8 x T (Megatron-core applies the gate in the experts' activation).
  const double moe = 4.0 * 4096 * 256 + 6.0 * 4096 * 2048 + 2.0 * 32768 * 7168 + 6.0 * 32768 * 2048 +
                     4.0 * 8 * 4096;  // 927,072,256
  EXPECT_EQ(apply(m, kDsEp8, kMoeLayer, bits({RecomputeModule::kMoe})).dropped, moe);
  // moe_act and shared_experts drop tensors moe drops too: counted once.
  EXPECT_EQ(apply(m, kDsEp8, kMoeLayer,
                  bits({RecomputeModule::kMoe, RecomputeModule::kMoeAct, RecomputeModule::kSharedExperts}))
                .dropped,
            moe);
  // layernorm on a MoE layer: the QKV input and the router input, 2 B x T x h each.
  EXPECT_EQ(apply(m, kDsEp8, kMoeLayer, bits({RecomputeModule::kLayernorm})).dropped, 2 * (2.0 * 4096 * 7168));
}

TEST(RecomputeModules, MemoryReportUsesTheModuleSet) {
  const ModelSpec m = llama2_70b();
  HardwareSpec hw;
  hw.gpu_memory_bytes = 80e9;
  ParallelSpec p = kLlamaTp8;
  p.pp = 1;
  FeatureSpec f;
  f.recompute = RecomputeKind::kSelective;
  f.recompute_modules = bits({RecomputeModule::kMlp});
  const std::vector<double> one{1};
  const MemoryReport base = memory_report(m, hw, p, FeatureSpec{}, one);
  const MemoryReport mlp = memory_report(m, hw, p, f, one);
  // 80 layers each drop 6f/t x T; one layer's dropped part is live again during its backward
  // (the last layer's, after the head has freed its logits: the larger of the two counts).
  const double head = ops_for_head(m, p).totals().activation_bytes;
  const double dropped = 6.0 * 3584 * 4096;
  const double stats = 4.0 * 8 * 4096;  // the softmax statistics the base run keeps as working set
  ASSERT_GT(dropped, head);
  EXPECT_DOUBLE_EQ(base.stages[0].activation_bytes - mlp.stages[0].activation_bytes,
                   80 * dropped - (dropped - std::max(head, stats)));
}

TEST(RecomputeModules, FullRecomputeBlockAndUniform) {
  const ModelSpec m = llama2_70b();  // 80 layers on one stage
  HardwareSpec hw;
  hw.gpu_memory_bytes = 80e9;
  const ParallelSpec p = parallel_spec({.tp = 8, .global_batch = 1, .sequence_parallel = true});
  const LayerTotals layer = ops_for_layer(m, p, 0).totals();
  const double extras = ops_for_embedding(m, p).totals().activation_bytes + ops_for_head(m, p).totals().activation_bytes;
  const std::vector<double> one{1};
  FeatureSpec f;
  f.recompute = RecomputeKind::kFull;
  f.recompute_method = RecomputeMethod::kBlock;
  f.recompute_num_layers = 20;
  // Block 20: 20 layer inputs and 60 layers kept whole. The recomputed layers come first, so
  // when one is rebuilt in the backward the 60 kept layers after it have freed theirs: the peak
  // is the forward's, no transient on top.
  EXPECT_DOUBLE_EQ(memory_report(m, hw, p, f, one).stages[0].activation_bytes,
                   20 * layer.input_bytes + 60 * layer.activation_bytes + extras);
  // Uniform 4: one input per group of 4 layers (20 groups); the last group is rebuilt at once
  // beside its stored input (the head's logits are freed by then: the larger of the two counts).
  f.recompute_method = RecomputeMethod::kUniform;
  f.recompute_num_layers = 4;
  const double head = ops_for_head(m, p).totals().activation_bytes;
  const double rebuilt = 4 * (layer.activation_bytes - layer.input_bytes);
  ASSERT_GT(rebuilt, head);
  EXPECT_DOUBLE_EQ(memory_report(m, hw, p, f, one).stages[0].activation_bytes,
                   20 * layer.input_bytes + extras - head + rebuilt);
  // Block 0 recomputes nothing (Megatron's --recompute-num-layers 0).
  f.recompute_method = RecomputeMethod::kBlock;
  f.recompute_num_layers = 0;
  EXPECT_DOUBLE_EQ(memory_report(m, hw, p, f, one).stages[0].activation_bytes,
                   memory_report(m, hw, p, FeatureSpec{}, one).stages[0].activation_bytes);
}

TEST(RecomputeModules, HardwareFlopsAddTheRerunForward) {
  const ModelSpec m = llama2_70b();
  FeatureSpec f;
  f.recompute = RecomputeKind::kSelective;
  f.recompute_modules = bits({RecomputeModule::kMlp});
  // One sequence of 4096 tokens: 80 layers re-run fc1 and fc2, 3 x 2 x T x h x f each.
  EXPECT_DOUBLE_EQ(hardware_flops_per_step(m, kLlamaTp8, f) - model_flops_per_step(m, kLlamaTp8),
                   80 * 3 * 2.0 * 4096 * 8192 * 28672);
  // Megatron's default module and full uniform are flops.h's closed forms.
  f.recompute_modules = bits({RecomputeModule::kCoreAttn});
  EXPECT_EQ(hardware_flops_per_step(m, kLlamaTp8, f), hardware_flops_per_step(m, kLlamaTp8, RecomputeKind::kSelective));
  // Full block with 0 layers recomputes nothing.
  f.recompute = RecomputeKind::kFull;
  f.recompute_method = RecomputeMethod::kBlock;
  f.recompute_num_layers = 0;
  EXPECT_NEAR(hardware_flops_per_step(m, kLlamaTp8, f), model_flops_per_step(m, kLlamaTp8),
              1e-9 * model_flops_per_step(m, kLlamaTp8));
}

TEST(RecomputeModules, TorchtitanPerOpPolicyKeepsEveryOtherMatmul) {
  // LLaMA2-70B, t = 8 with SP: 8 query heads and 1 KV head per GPU, d = 128, T = 4096, T_sp = 512.
  // bf16 (aten.mm): dropped are the QKV, pre-MLP norm and fc1 inputs (2 B x T_sp x h each), K
  // (2 B x T x 1 x 128), w3's half of the activation input and the fc2 input (2 B x T x f/t each).
  const Applied op = apply(llama2_70b(), kLlamaTp8, 0, bits({RecomputeModule::kTorchtitanOp}));
  EXPECT_EQ(op.dropped, 3 * (2.0 * 512 * 8192) + 2.0 * 4096 * 128 + 2 * (2.0 * 4096 * 3584));  // 84,934,656
  // Re-run: wk (1 of the 10 heads' worth of QKV columns), wo and w3: 2 x T x h x (128 + 1024 + 3584).
  EXPECT_DOUBLE_EQ(op.flops, 2.0 * 4096 * 8192 * (128 + 1024 + 3584));  // 317,827,579,904
  // float8 linears (torch._scaled_mm): every matmul output kept, so neither K nor w3's half is
  // dropped and no GEMM re-runs; the norms, RoPE, the residual add and SwiGLU re-run (no FLOPs).
  const Applied scaled = apply(llama2_70b(), kLlamaTp8, 0, torchtitan_op_modules(true));
  EXPECT_EQ(scaled.dropped, 3 * (2.0 * 512 * 8192) + 2.0 * 4096 * 3584);  // 54,525,952
  EXPECT_EQ(scaled.flops, 0.0);
  EXPECT_EQ(torchtitan_op_modules(false), bits({RecomputeModule::kTorchtitanOp}));
}

// The forward collectives a module's re-run part calls, as (kind, op it is attached to, bytes x count).
struct Rerun {
  CollectiveKind collective;
  OpKind op;
  double bytes;
  friend bool operator==(const Rerun&, const Rerun&) = default;
};
std::vector<Rerun> reruns(const ModelSpec& m, const ParallelSpec& p, int layer, RecomputeModules modules) {
  std::vector<Rerun> out;
  for (const CommOp& c : with_recompute_modules(ops_for_layer(m, p, layer), m, p, modules).comms()) {
    if (c.recomputed_by_selective) out.push_back({c.collective, c.op, c.bytes * c.count});
  }
  return out;
}

TEST(RecomputeModules, CollectivesInsideTheRerunPartRunAgain) {
  // LLaMA2-70B, t = 8 with SP: every TP buffer is the whole 2 B x T x h = 2 x 4096 x 8192.
  const double tp_buffer = 2.0 * 4096 * 8192;  // 67,108,864
  using C = CollectiveKind;
  // mlp: fc1's all-gather of its input and fc2's reduce-scatter of its output.
  EXPECT_EQ(reruns(llama2_70b(), kLlamaTp8, 0, bits({RecomputeModule::kMlp})),
            (std::vector<Rerun>{{C::kAllGather, OpKind::kMlpLinear1, tp_buffer},
                                {C::kReduceScatter, OpKind::kMlpLinear2, tp_buffer}}));
  // torchtitan's per-op policy keeps reduce_scatter_tensor, not all_gather_into_tensor: the two
  // sequence-parallel all-gathers (before QKV and before fc1) re-run, under bf16 and float8 alike.
  const std::vector<Rerun> gathers = {{C::kAllGather, OpKind::kQkvProjection, tp_buffer},
                                      {C::kAllGather, OpKind::kMlpLinear1, tp_buffer}};
  EXPECT_EQ(reruns(llama2_70b(), kLlamaTp8, 0, bits({RecomputeModule::kTorchtitanOp})), gathers);
  EXPECT_EQ(reruns(llama2_70b(), kLlamaTp8, 0, torchtitan_op_modules(true)), gathers);
  // Without sequence parallelism the forward's TP collectives are all-reduces after wo and w2, and
  // all_reduce is not in the save list either.
  const ParallelSpec no_sp = parallel_spec({.tp = 8, .dp = 1, .global_batch = 1, .sequence_parallel = false});
  EXPECT_EQ(reruns(llama2_70b(), no_sp, 0, bits({RecomputeModule::kTorchtitanOp})),
            (std::vector<Rerun>{{C::kAllReduce, OpKind::kOutputProjection, tp_buffer},
                                {C::kAllReduce, OpKind::kMlpLinear2, tp_buffer}}));
  // Modules whose part holds no collective re-run none.
  EXPECT_TRUE(reruns(llama2_70b(), kLlamaTp8, 0,
                     bits({RecomputeModule::kCoreAttn, RecomputeModule::kLayernorm}))
                  .empty());
  // DeepSeek-V3 MoE layer, EP 8, all-to-all dispatcher (FP8 dispatch, bf16 combine): moe re-runs
  // the dispatch (1 B x 32,768 routed rows x h) and the combine (2 B x ...); moe_act, inside the
  // experts, none.
  const double rows = 32768.0 * 7168;
  EXPECT_EQ(reruns(deepseek_v3(), kDsEp8, kMoeLayer, bits({RecomputeModule::kMoe})),
            (std::vector<Rerun>{{C::kAllToAll, OpKind::kExpertLinear1, 1 * rows},
                                {C::kAllToAll, OpKind::kExpertLinear2, 2 * rows}}));
  EXPECT_TRUE(reruns(deepseek_v3(), kDsEp8, kMoeLayer, bits({RecomputeModule::kMoeAct})).empty());
  // mla_up_proj, DeepSeek-V3 at TP 2 with SP: the up-projections' gather of the q and kv latents
  // (2 B x 4096 tokens x (1536 + 512)) re-runs; the rope key's gather, outside the checkpointed
  // function, does not.
  const ParallelSpec ds_tp2 = parallel_spec({.tp = 2, .dp = 1, .global_batch = 1, .sequence_parallel = true});
  EXPECT_EQ(reruns(deepseek_v3(), ds_tp2, 0, bits({RecomputeModule::kMlaUpProj})),
            (std::vector<Rerun>{{C::kAllGather, OpKind::kQkvProjection, 2.0 * 4096 * (1536 + 512)}}));
  // The backward's collectives are never flagged: only forward ones re-run.
  for (const CommOp& c : with_recompute_modules(ops_for_layer(llama2_70b(), kLlamaTp8, 0), llama2_70b(), kLlamaTp8,
                                                bits({RecomputeModule::kMlp, RecomputeModule::kTorchtitanOp}))
                             .comms()) {
    EXPECT_TRUE(c.phase == Phase::kForward || !c.recomputed_by_selective);
  }
}

TEST(RecomputeModules, TorchtitanEveryNthLayerIsFullRecomputeOfThoseLayers) {
  FeatureSpec f;
  f.recompute = RecomputeKind::kFull;
  f.recompute_method = RecomputeMethod::kEveryNth;
  f.recompute_num_layers = 2;  // torchtitan selective_ac_option: 2 checkpoints layers 2, 4, 6, ...
  EXPECT_FALSE(full_recompute_applies(f, 0));
  EXPECT_TRUE(full_recompute_applies(f, 1));
  EXPECT_FALSE(full_recompute_applies(f, 2));
  EXPECT_TRUE(full_recompute_applies(f, 79));
  f.recompute_num_layers = 3;
  EXPECT_TRUE(full_recompute_applies(f, 2));
  EXPECT_FALSE(full_recompute_applies(f, 3));
  // 80 layers, every 2nd: half the layers' forward re-runs, so the re-run FLOPs are half of full's.
  const ModelSpec m = llama2_70b();
  f.recompute_num_layers = 2;
  FeatureSpec full;
  full.recompute = RecomputeKind::kFull;
  const double model_flops = model_flops_per_step(m, kLlamaTp8);
  EXPECT_NEAR(hardware_flops_per_step(m, kLlamaTp8, f) - model_flops,
              (hardware_flops_per_step(m, kLlamaTp8, full) - model_flops) / 2, 1e-9 * model_flops);
  // Memory: 40 layer inputs and 40 layers kept whole; the last layer (a recomputed one) is rebuilt
  // in the backward beside everything else once the head's logits are freed.
  HardwareSpec hw;
  hw.gpu_memory_bytes = 80e9;
  const ParallelSpec p = parallel_spec({.tp = 8, .global_batch = 1, .sequence_parallel = true});
  const LayerTotals layer = ops_for_layer(m, p, 0).totals();
  const double head = ops_for_head(m, p).totals().activation_bytes;
  const double extras = ops_for_embedding(m, p).totals().activation_bytes + head;
  const double forward = 40 * layer.input_bytes + 40 * layer.activation_bytes + extras;
  EXPECT_DOUBLE_EQ(memory_report(m, hw, p, f, std::vector<double>{1}).stages[0].activation_bytes,
                   std::max(forward, forward - head + (layer.activation_bytes - layer.input_bytes)));
}

TEST(RecomputeModules, Names) {
  EXPECT_STREQ(recompute_module_name(RecomputeModule::kMlaUpProj), "mla_up_proj");
  EXPECT_STREQ(recompute_module_name(RecomputeModule::kSharedExperts), "shared_experts");
  EXPECT_STREQ(recompute_module_name(RecomputeModule::kTorchtitanOp), "torchtitan_op");
}

}  // namespace
}  // namespace mofasim::model
