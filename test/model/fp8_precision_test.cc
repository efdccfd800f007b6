// FP8 training as Transformer Engine runs it (FeatureSpec::fp8): which GEMM phases run at the FP8
// ceiling, the quantise kernels' HBM bytes per recipe, the recipe factors against fp8.csv, and the
// FP8 weight copies in memory, each against a hand-worked value.
#include <gtest/gtest.h>

#include "model/compute_time.h"
#include "model/memory.h"
#include "model/op_table.h"
#include "model/stack_kernels.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

// 100 SMs, BF16 ceiling 1e12 per SM, FP8 2e12 per SM, memory-bound kernels at 0.5 x 1e12 B/s.
HardwareSpec kernel_gpu() {
  HardwareSpec hw;
  hw.peak_flops_bf16 = 1000e12;
  hw.peak_flops_fp8 = 2000e12;
  hw.hbm_bandwidth = 1e12;
  hw.compute_model = ComputeModelKind::kKernel;
  hw.kernels = {.family = GpuFamily::kHopper, .sm_count = 100, .gemm_tile_m = 128, .gemm_tile_n = 256,
                .gemm_ceiling_bf16 = 100e12, .gemm_ceiling_fp8 = 200e12, .hbm_fraction = 0.5,
                .host_launch_seconds = 0};
  return hw;
}

// A 1024 x 2048 output GEMM reducing 4096 (64 tiles: one wave) in the given TE slot.
PhaseCost gemm_phase(Fp8Gemm slot) {
  return {.flops = 2.0 * 1024 * 2048 * 4096, .hbm_bytes = 0,
          .shape = {.kind = KernelKind::kGemm, .m = 1024, .n = 2048, .k = 4096, .groups = 1}, .fp8 = slot};
}

FeatureSpec fp8_features(Fp8Recipe recipe) {
  FeatureSpec f;
  f.fp8 = {.enabled = true, .recipe = recipe};
  return f;
}

// One SM's tile: 2 * 128 * 256 * (k + 256) FLOPs (gemm_cost.h's pipeline fill) at the per-SM rate.
constexpr double kTileFlops = 2.0 * 128 * 256 * (4096 + 256);
constexpr double kX = 1024.0 * 4096;  // elements of the quantised operand (X forward, dY backward)

TEST(Fp8Precision, ForwardGemmAtTheFp8CeilingPlusItsQuantiseKernel) {
  const HardwareSpec hw = kernel_gpu();
  // Delayed: X cast to FP8 for fprop and transposed for wgrad in one pass: 2 + 1 + 1 = 4 B/element.
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kFprop), OpClass::kGemm, hw, fp8_features(Fp8Recipe::kDelayed)),
                   kTileFlops / 2e12 + 4 * kX / 0.5e12);
  // Current scaling reads X once more for its amax: 6 B/element.
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kFprop), OpClass::kGemm, hw, fp8_features(Fp8Recipe::kCurrent)),
                   kTileFlops / 2e12 + 6 * kX / 0.5e12);
  // Blockwise: the block-scaled GEMM at 20.285 / 22.882 of the ceiling (fp8.csv, H200-NVL autocast),
  // plus 2 x 4 B of fp32 scales per 128 elements.
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kFprop), OpClass::kGemm, hw, fp8_features(Fp8Recipe::kBlockwise)),
                   kTileFlops / (2e12 * 20.285 / 22.882) + (4 + 8.0 / 128) * kX / 0.5e12);
  // The dgrad quantises dY (m x n of the forward = the dgrad shape's reduction, here 4096 too).
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kDgrad), OpClass::kGemm, hw, fp8_features(Fp8Recipe::kDelayed)),
                   kTileFlops / 2e12 + 4 * kX / 0.5e12);
  // The wgrad reuses both quantised operands: the GEMM alone.
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kWgrad), OpClass::kGemm, hw, fp8_features(Fp8Recipe::kDelayed)),
                   kTileFlops / 2e12);
}

TEST(Fp8Precision, BaselinesAndTheGemmsThatStayBf16) {
  const HardwareSpec hw = kernel_gpu();
  const FeatureSpec fp8 = fp8_features(Fp8Recipe::kDelayed);
  const double bf16 = kTileFlops / 1e12;
  // Precision bf16: the same phase at the BF16 ceiling, no quantise kernel.
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kFprop), OpClass::kGemm, hw, FeatureSpec{}), bf16);
  // The output head and every non-linear GEMM (router, unfused attention) stay BF16.
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kHeadFprop), OpClass::kGemm, hw, fp8), bf16);
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kNone), OpClass::kGemm, hw, fp8), bf16);
  // ... unless the output layer is asked for in FP8.
  FeatureSpec head = fp8;
  head.fp8.output_layer = true;
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kHeadFprop), OpClass::kGemm, hw, head), kTileFlops / 2e12 + 4 * kX / 0.5e12);
  // fp8_wgrad false (Megatron --no-fp8-wgrad): wgrad in BF16, and the forward writes no transpose.
  FeatureSpec no_wgrad = fp8;
  no_wgrad.fp8.wgrad = false;
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kWgrad), OpClass::kGemm, hw, no_wgrad), bf16);
  EXPECT_DOUBLE_EQ(phase_seconds(gemm_phase(Fp8Gemm::kFprop), OpClass::kGemm, hw, no_wgrad), kTileFlops / 2e12 + 3 * kX / 0.5e12);
}

TEST(Fp8Precision, ShapelessPartOfAnFp8GemmRunsAtTheFp8CeilingTimesTheRecipe) {
  // Selective recompute of a part of an op keeps its FP8 slot but no kernel shape: the best-shape
  // rate of its dtype, and no quantise kernel (it has no operand shape to quantise).
  const HardwareSpec hw = kernel_gpu();
  const PhaseCost part{.flops = 4e9, .hbm_bytes = 0, .fp8 = Fp8Gemm::kFprop};
  EXPECT_DOUBLE_EQ(phase_seconds(part, OpClass::kGemm, hw, fp8_features(Fp8Recipe::kDelayed)), 4e9 / 200e12);
  EXPECT_DOUBLE_EQ(phase_seconds(part, OpClass::kGemm, hw, fp8_features(Fp8Recipe::kMxfp8)), 4e9 / (200e12 * 6.812 / 7.161));
  EXPECT_DOUBLE_EQ(phase_seconds(part, OpClass::kGemm, hw, FeatureSpec{}), 4e9 / 100e12);
}

TEST(Fp8Precision, RecipeFactorsAreTheTableRatios) {
  EXPECT_DOUBLE_EQ(fp8_recipe_gemm_factor(Fp8Recipe::kDelayed), 1.0);
  EXPECT_DOUBLE_EQ(fp8_recipe_gemm_factor(Fp8Recipe::kCurrent), 1.0);
  EXPECT_NEAR(fp8_recipe_gemm_factor(Fp8Recipe::kBlockwise), 0.8865, 1e-4);  // 20.285 / 22.882
  EXPECT_NEAR(fp8_recipe_gemm_factor(Fp8Recipe::kMxfp8), 0.9513, 1e-4);      // 6.812 / 7.161
  // MXFP8 quantise: 2 + 2 x (1 + 1/32) B/element.
  FeatureSpec mx = fp8_features(Fp8Recipe::kMxfp8);
  EXPECT_DOUBLE_EQ(fp8_quantise_bytes(mx.fp8, gemm_phase(Fp8Gemm::kFprop)), (2 + 2 * (1 + 1.0 / 32)) * kX);
}

TEST(Fp8Precision, FixedEfficiencyModelUsesThePeakFp8ForTheLinearGemmsOnly) {
  const HardwareSpec hw = testing::round_gpu();  // peak bf16 1e15, fp8 2e15, eta gemm 0.75, HBM 0.8 x 4e12
  const FeatureSpec fp8 = fp8_features(Fp8Recipe::kDelayed);
  PhaseCost work = gemm_phase(Fp8Gemm::kFprop);
  work.flops = 1.5e12;
  EXPECT_DOUBLE_EQ(phase_seconds(work, OpClass::kGemm, hw, fp8), 1.5e12 / (0.75 * 2e15) + 4 * kX / 3.2e12);
  work.fp8 = Fp8Gemm::kNone;
  EXPECT_DOUBLE_EQ(phase_seconds(work, OpClass::kGemm, hw, fp8), 1.5e12 / (0.75 * 1e15));
}

TEST(Fp8Precision, OpTableMarksTheTransformerEngineLinears) {
  const LayerOps ops = ops_for_layer(testing::llama2_70b(), testing::parallel_spec({.tp = 8}), 0);
  int linears = 0;
  for (const OpCost& op : ops.ops()) {
    if (op.forward.fp8 == Fp8Gemm::kFprop) {
      ++linears;
      EXPECT_TRUE(is_fp8_linear(op.op)) << op_name(op.op);
      EXPECT_EQ(op.backward_input.fp8, Fp8Gemm::kDgrad);
      EXPECT_EQ(op.backward_weight.fp8, Fp8Gemm::kWgrad);
    } else {
      EXPECT_EQ(op.forward.fp8, Fp8Gemm::kNone) << op_name(op.op);
    }
  }
  EXPECT_EQ(linears, 4);  // QKV, output projection, fc1, fc2
  const LayerOps head = ops_for_head(testing::llama2_70b(), testing::parallel_spec({.tp = 8}));
  bool found = false;
  for (const OpCost& op : head.ops()) {
    if (op.op == OpKind::kHead) {
      found = true;
      EXPECT_EQ(op.forward.fp8, Fp8Gemm::kHeadFprop);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Fp8Precision, MemoryKeepsAnFp8WeightAndItsTranspose) {
  const GpuParams params{.dense_sharded = 1e9, .replicated = 1e6, .expert = 2e9};
  EXPECT_EQ(static_memory(params, FeatureSpec{}, {}).fp8_weights, 0.0);
  const StaticMemory delayed = static_memory(params, fp8_features(Fp8Recipe::kDelayed), {});
  EXPECT_DOUBLE_EQ(delayed.fp8_weights, 3e9 * 2);
  EXPECT_DOUBLE_EQ(delayed.total(), delayed.weights + delayed.grads + delayed.optimizer_states + 6e9);
  EXPECT_DOUBLE_EQ(static_memory(params, fp8_features(Fp8Recipe::kMxfp8), {}).fp8_weights, 3e9 * (2 + 2.0 / 32));
  EXPECT_DOUBLE_EQ(static_memory(params, fp8_features(Fp8Recipe::kBlockwise), {}).fp8_weights, 3e9 * (2 + 8.0 / 128));
}

}  // namespace
}  // namespace mofasim::model
