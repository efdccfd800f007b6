// What a layer keeps for its backward under FP8 (model/recompute_modules.h with_activation_storage)
// and the MoE combine's storage, against hand-worked bytes per micro-batch of b = 1 on one GPU.
#include <gtest/gtest.h>

#include <vector>

#include "model/memory.h"
#include "model/params.h"
#include "model/recompute_modules.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using testing::deepseek_v3;
using testing::llama2_70b;
using testing::parallel_spec;

FeatureSpec fp8(Fp8Recipe recipe) {
  FeatureSpec f;
  f.fp8 = {.enabled = true, .recipe = recipe};
  return f;
}

double stored(const ModelSpec& m, const ParallelSpec& p, int layer, const FeatureSpec& f) {
  const LayerTotals t = with_activation_storage(ops_for_layer(m, p, layer), m, p, f).totals();
  return t.activation_bytes - (f.recompute == RecomputeKind::kSelective ? t.selective_dropped_bytes : 0);
}

// LLaMA2-70B, t = 1, s = 4096: T = 4096, h = 8192, f = 28672, a * d_v = 64 x 128 = 8192.
const ParallelSpec kLlamaTp1 = parallel_spec({.tp = 1, .dp = 1, .global_batch = 1});

TEST(Fp8ActivationStorage, TransformerEngineKeepsEachFp8LinearsInputInFp8) {
  const ModelSpec m = llama2_70b();
  const double bf16 = stored(m, kLlamaTp1, 0, FeatureSpec{});
  EXPECT_EQ(bf16, ops_for_layer(m, kLlamaTp1, 0).totals().activation_bytes);  // no FP8: unchanged
  // Delayed scaling, 1 B per element: QKV input (h), fc1 input (h) and fc2 input (f) drop from 2 B
  // to 1 B; the output projection keeps an FP8 copy beside the bf16 O flash attention keeps (+1 B).
  const double saved = 4096.0 * (8192 + 8192 + 28672 - 8192);  // 150,994,944
  EXPECT_EQ(bf16 - stored(m, kLlamaTp1, 0, fp8(Fp8Recipe::kDelayed)), saved);
  EXPECT_EQ(bf16 - stored(m, kLlamaTp1, 0, fp8(Fp8Recipe::kCurrent)), saved);
  // mxfp8: 1 + 1/32 B per element (an E8M0 scale per 32).
  const double mx = 1 + 1.0 / 32;
  EXPECT_DOUBLE_EQ(bf16 - stored(m, kLlamaTp1, 0, fp8(Fp8Recipe::kMxfp8)),
                   4096.0 * ((2 - mx) * (8192 + 8192 + 28672) - mx * 8192));
  // Without FP8 wgrad the bf16 inputs stay (Megatron --no-fp8-wgrad).
  FeatureSpec no_wgrad = fp8(Fp8Recipe::kDelayed);
  no_wgrad.fp8.wgrad = false;
  EXPECT_EQ(stored(m, kLlamaTp1, 0, no_wgrad), bf16);
}

TEST(Fp8ActivationStorage, LayernormRecomputeDropsTheFp8NormOutput) {
  // With FP8 the QKV and fc1 inputs (the norm outputs) are kept as 1 B per element; layernorm
  // recompute drops those FP8 copies, T x h x 1 B each, not the bf16 size.
  const ModelSpec m = llama2_70b();
  FeatureSpec f = fp8(Fp8Recipe::kDelayed);
  const double kept = stored(m, kLlamaTp1, 0, f);
  f.recompute = RecomputeKind::kSelective;
  f.recompute_modules = recompute_bit(RecomputeModule::kLayernorm) | recompute_bit(RecomputeModule::kCoreAttn);
  EXPECT_EQ(kept - stored(m, kLlamaTp1, 0, f), 2 * 4096.0 * 8192 + 4.0 * 64 * 4096);  // + softmax statistics
}

// DeepSeek-V3 MoE layer, t = 1, EP 8, s = 4096, with DeepSeek's recipe (blockwise, 1 + 4/128 B per
// element) and recompute (layernorm, mla_up_proj, moe_act). Bytes per token, h = 7168, f_e = f_sh =
// 2048, k = 8, r_q + r_kv = 1536 + 512, e = 1.03125 (a 1 x 128 tile's fp32 scale):
TEST(Fp8ActivationStorage, DeepSeekV3RecipeAndRecomputePerToken) {
  const ModelSpec m = deepseek_v3();
  const ParallelSpec p = parallel_spec({.tp = 1, .dp = 8, .ep = 8, .global_batch = 8});
  FeatureSpec f = fp8(Fp8Recipe::kBlockwise);
  f.recompute = RecomputeKind::kSelective;
  f.recompute_modules = recompute_bit(RecomputeModule::kLayernorm) | recompute_bit(RecomputeModule::kMlaUpProj) |
                        recompute_bit(RecomputeModule::kMoeAct);
  const double e = 1.03125;
  const double norm_inputs = 2 * 2.0 * 7168;                   // 28,672: both norms keep bf16 inputs
  const double mla = e * 2048 + 2.0 * 2048 + 2.0 * 64;          // 6,336: FP8 normed latents, bf16 latents, rope key
  const double softmax_stats = 4.0 * 128;                      // 512
  const double attention_out = 1.5 * 128 * 128;                // 24,576: one E5M6 copy (report §3.3.3)
  const double router = 4.0 * 256;                             // 1,024: the probabilities (its input is recomputed)
  const double shared = e * (2 * 2048 + 2048);                 // 6,336: SwiGLU input and fc2 input in FP8
  const double routed = e * 8 * (7168 + 2 * 2048);             // 92,928: dispatched rows and SwiGLU inputs in FP8
  const double combine = 4.0 * 8;                              // 32: the dispatched gate probabilities
  const double per_token = norm_inputs + mla + softmax_stats + attention_out + router + shared + routed + combine;
  EXPECT_EQ(per_token, 160416.0);
  EXPECT_DOUBLE_EQ(stored(m, p, 60, f), 4096 * per_token);
  // bf16 with the same recompute: 378,496 - 114,688 (the 8 expert outputs no longer kept) per token.
  FeatureSpec bf16 = f;
  bf16.fp8 = {};
  EXPECT_DOUBLE_EQ(stored(m, p, 60, bf16), 4096 * (378496.0 - 8 * 2 * 7168 + 32));
}

TEST(Fp8ActivationStorage, MoeCombineKeepsOnlyTheDispatchedProbabilities) {
  // Megatron-core applies the gate in the experts' activation: the combine keeps 4 B per routed copy.
  const ParallelSpec p = parallel_spec({.tp = 1, .dp = 8, .ep = 8, .global_batch = 8});
  int combines = 0;
  for (const OpCost& op : ops_for_layer(deepseek_v3(), p, 60).ops()) {
    if (op.op == OpKind::kExpertCombine) {
      ++combines;
      EXPECT_EQ(op.activation_bytes, 4.0 * 8 * 4096);
    }
  }
  EXPECT_EQ(combines, 1);  // the check above ran
}

TEST(Fp8ActivationStorage, MemoryReportHasNoFp8CopyOfTheEmbeddingOrBf16Head) {
  // LLaMA2-70B (untied head) on 2 stages at t = 8: each stage's FP8 copies are 2 B per TP-sharded
  // weight less the embedding (stage 0) or the head (stage 1), V x h / t = 32,000 x 8192 / 8 each.
  const ModelSpec m = llama2_70b();
  const ParallelSpec p = parallel_spec({.tp = 8, .pp = 2, .dp = 1, .global_batch = 2});
  HardwareSpec hw;
  hw.gpu_memory_bytes = 80e9;
  const std::vector<double> inflight{2, 1};
  FeatureSpec f = fp8(Fp8Recipe::kDelayed);
  const MemoryReport r = memory_report(m, hw, p, f, inflight);
  const double vocab = 32000.0 * 8192 / 8;
  for (int rank : {0, 1}) {
    const GpuParams g = stage_gpu_params(m, p, rank);
    EXPECT_DOUBLE_EQ(r.stages[static_cast<std::size_t>(rank)].static_bytes.fp8_weights,
                     2 * (g.dense_sharded + g.expert - vocab))
        << rank;
  }
  f.fp8.output_layer = true;  // the head's GEMMs in FP8: its copy is kept
  const GpuParams last = stage_gpu_params(m, p, 1);
  EXPECT_DOUBLE_EQ(memory_report(m, hw, p, f, inflight).stages[1].static_bytes.fp8_weights,
                   2 * (last.dense_sharded + last.expert));
}

}  // namespace
}  // namespace mofasim::model
