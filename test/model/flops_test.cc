// Model and hardware FLOPs against Megatron's formula evaluated by hand (reference-formulas.md
// §1.5, §5.4, §8.1, §8.2).
#include "model/flops.h"

#include <gtest/gtest.h>

#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using testing::deepseek_v3;
using testing::llama2_70b;
using testing::llama3_405b;

TEST(ModelFlops, Llama2_70bPerTokenByComponent) {
  const FlopsPerToken f = model_flops_per_token(llama2_70b());
  // MLP 6h * 3f * L = 6 * 8192 * 3 * 28672 * 80.
  EXPECT_EQ(f.mlp, 338'228'674'560.0);
  // Attention linear 6 * A_lin * L, A_lin = 150,994,944.
  EXPECT_EQ(f.attention_linear, 72'477'573'120.0);
  // Core attention s * 6 * a * d_h * L (causal half of 12).
  EXPECT_EQ(f.attention_core, 16'106'127'360.0);
  // Logits 6hV.
  EXPECT_EQ(f.logits, 1'572'864'000.0);
  EXPECT_EQ(f.mtp_projection, 0.0);
  EXPECT_EQ(f.total(), 428'385'239'040.0);
}

TEST(ModelFlops, Llama2_70bPerStepAtGlobalBatch1024) {
  const ParallelSpec par = testing::parallel_spec({.tp = 8, .cp = 1, .pp = 8, .vpp = 1, .dp = 16, .ep = 1, .etp = 1, .micro_batch = 1,
                         .global_batch = 1024});
  // 428,385,239,040 * 1024 * 4096 (§8.1).
  EXPECT_EQ(model_flops_per_step(llama2_70b(), par), 1'796'777'921'646'428'160.0);
}

TEST(ModelFlops, Llama3_405bAtTwoSequenceLengths) {
  ModelSpec m = llama3_405b();
  EXPECT_EQ(model_flops_per_token(m).total(), 2'523'955'986'432.0);  // s = 8192
  m.seq_length = 4096;
  EXPECT_EQ(model_flops_per_token(m).total(), 2'473'221'685'248.0);
}

TEST(ModelFlops, DeepSeekV3WithAndWithoutMtp) {
  ModelSpec m = deepseek_v3();
  EXPECT_EQ(model_flops_per_token(m).total(), 249'812'054'016.0);
  m.mtp_depth = 1;
  const FlopsPerToken f = model_flops_per_token(m);
  EXPECT_EQ(f.total(), 259'992'950'784.0);
  // The MTP module's own part: 6 * (3h + 2h^2).
  EXPECT_EQ(f.mtp_projection, 6 * (3 * 7168.0 + 2 * 7168.0 * 7168));
}

TEST(HardwareFlops, RecomputeAddsTheForwardItReruns) {
  const ModelSpec m = llama2_70b();
  EXPECT_EQ(hardware_flops_per_token(m, RecomputeKind::kNone), 428'385'239'040.0);
  // Selective: + core attention forward = 16,106,127,360 / 3.
  EXPECT_EQ(hardware_flops_per_token(m, RecomputeKind::kSelective), 428'385'239'040.0 + 5'368'709'120);
  // Full: + forward of every layer = (338,228,674,560 + 72,477,573,120 + 16,106,127,360) / 3.
  EXPECT_EQ(hardware_flops_per_token(m, RecomputeKind::kFull), 428'385'239'040.0 + 142'270'791'680);
  const ParallelSpec par = testing::parallel_spec({.tp = 1, .cp = 1, .pp = 1, .vpp = 1, .dp = 1, .ep = 1, .etp = 1, .micro_batch = 1,
                         .global_batch = 2});
  EXPECT_EQ(hardware_flops_per_step(m, par, RecomputeKind::kFull), 2 * 4096 * (428'385'239'040.0 + 142'270'791'680));
}

TEST(ModelFlops, GeluMlpHasTwoGemms) {
  ModelSpec m = llama2_70b();
  m.mlp = MlpKind::kGelu;
  // 6h * 2f * L.
  EXPECT_EQ(model_flops_per_token(m).mlp, 6 * 8192.0 * 2 * 28672 * 80);
}

}  // namespace
}  // namespace mofasim::model
