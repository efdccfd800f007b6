// Korthikanti Table 2 rows and Megatron's first-stage estimator, against reference-formulas.md §8.1
// (LLaMA2-70B, s = 4096, b = 1, h = 8192, a = 64, t = 8: sbh = 33,554,432 and 5as/h = 160).
#include "model/activation_reference.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

GptActivationShape llama2_shape(int tp, bool sp, RecomputeKind recompute) {
  return GptActivationShape{.seq = 4096, .micro_batch = 1, .hidden = 8192, .heads = 64, .tp = tp,
                            .sequence_parallel = sp, .recompute = recompute};
}

TEST(Korthikanti, EveryRowOfTheLlama2Table) {
  // No parallelism: sbh * (34 + 160) = 6208 MiB.
  EXPECT_EQ(korthikanti_layer_activation_bytes(llama2_shape(1, false, RecomputeKind::kNone)), 6'509'559'808.0);
  // TP only: sbh * (10 + 24/8 + 160/8) = 33 sbh.
  EXPECT_EQ(korthikanti_layer_activation_bytes(llama2_shape(8, false, RecomputeKind::kNone)), 1'107'296'256.0);
  // TP + SP: sbh * (34/8 + 20) = 24.25 sbh.
  EXPECT_EQ(korthikanti_layer_activation_bytes(llama2_shape(8, true, RecomputeKind::kNone)), 813'694'976.0);
  // TP + selective: sbh * 13.
  EXPECT_EQ(korthikanti_layer_activation_bytes(llama2_shape(8, false, RecomputeKind::kSelective)), 436'207'616.0);
  // TP + SP + selective: sbh * 34/8.
  EXPECT_EQ(korthikanti_layer_activation_bytes(llama2_shape(8, true, RecomputeKind::kSelective)), 142'606'336.0);
  // Full recompute: 2 sbh; with SP the kept input is sharded: 2 sbh / 8.
  EXPECT_EQ(korthikanti_layer_activation_bytes(llama2_shape(8, false, RecomputeKind::kFull)), 67'108'864.0);
  EXPECT_EQ(korthikanti_layer_activation_bytes(llama2_shape(8, true, RecomputeKind::kFull)), 8'388'608.0);
}

TEST(Korthikanti, RejectsEmptyShapes) {
  EXPECT_THROW(korthikanti_layer_activation_bytes(GptActivationShape{}), std::invalid_argument);
}

ParallelSpec llama2_layout(int global_batch, int vpp, bool sp) {
  return testing::parallel_spec({.tp = 8, .cp = 1, .pp = 8, .vpp = vpp, .dp = 16, .ep = 1, .etp = 1, .micro_batch = 1,
                      .global_batch = global_batch, .sequence_parallel = sp});
}

TEST(MegatronEstimator, Llama2FirstStage) {
  const ModelSpec m = testing::llama2_70b();
  const auto sel = RecomputeKind::kSelective;
  // SP path, m = 64 >= p: [sbh * (18 + 4*3.5) * 80 + 8*s*b*p + sbh*p] / 8.
  EXPECT_EQ(megatron_first_stage_activation_bytes(m, llama2_layout(1024, 1, true), sel), 10'771'005'440.0);
  // m = 4 < p = 8: times m/p.
  EXPECT_EQ(megatron_first_stage_activation_bytes(m, llama2_layout(64, 1, true), sel), 5'385'502'720.0);
  // Interleaved: times 1 + (p-1)/(p*v): 1.4375 for v = 2, 1.175 for v = 5 (80 layers / 40 chunks).
  EXPECT_EQ(megatron_first_stage_activation_bytes(m, llama2_layout(1024, 2, true), sel), 15'483'320'320.0);
  EXPECT_EQ(megatron_first_stage_activation_bytes(m, llama2_layout(1024, 5, true), sel), 12'655'931'392.0);
  // Without SP: [sbh * (10 + 24/8) * 80 + 8*s*b*p + sbh*p] * 1.05.
  EXPECT_EQ(megatron_first_stage_activation_bytes(m, llama2_layout(1024, 1, false), sel), 36'923'572'224.0);
}

TEST(MegatronEstimator, Llama3_405bFirstStage) {
  const ParallelSpec par = testing::parallel_spec({.tp = 8, .cp = 1, .pp = 16, .vpp = 1, .dp = 128, .ep = 1, .etp = 1, .micro_batch = 1,
                         .global_batch = 2048, .sequence_parallel = true});
  // [sbh * (18 + 4*3.25) * 126 + 8*s*16 + sbh*16] / 8 with s = 8192, h = 16384 (§8.2).
  EXPECT_EQ(megatron_first_stage_activation_bytes(testing::llama3_405b(), par, RecomputeKind::kSelective),
            65'800'372'224.0);
}

}  // namespace
}  // namespace mofasim::model
