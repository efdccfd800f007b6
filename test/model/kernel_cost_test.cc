// The kernel compute model on hand-worked numbers: GEMM tiles and waves, the embedded attention
// curves (they must reproduce their table rows), memory-bound kernels, the host launch floor and
// the CUDA-graph switch.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "model/compute_time.h"
#include "model/kernels/attention_cost.h"
#include "model/kernels/gemm_cost.h"
#include "model/op_table.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using kernels::GemmDevice;
using kernels::gemm_time;
using kernels::GpuFamily;

// 100 SMs of 128x256 tiles, 1e12 FLOP/s per SM, 1 TB/s at half efficiency.
constexpr GemmDevice kDevice{.sm_count = 100, .tile_m = 128, .tile_n = 256, .ceiling_flops = 100e12,
                             .hbm_bandwidth = 1e12, .hbm_fraction = 0.5};

TEST(GemmCost, OneWaveUnderTheCeilingWithTheTileFill) {
  // 1024 x 2048 output: 8 x 8 = 64 tiles < 100 SMs; k = 4096 allows 4 splits but 100/64 = 1.
  const auto t = gemm_time(kDevice, 1024, 2048, 4096, 1, 0);
  EXPECT_EQ(t.tiles, 64);
  EXPECT_EQ(t.split_k, 1);
  EXPECT_EQ(t.waves, 1);
  // One wave: 2 * 128 * 256 * (4096 + 256) FLOPs per SM at 1e12 FLOP/s = 285.2 us.
  EXPECT_DOUBLE_EQ(t.seconds, 2.0 * 128 * 256 * (4096 + 256) / 1e12);
  EXPECT_NEAR(t.seconds, 285.2e-6, 0.1e-6);
}

TEST(GemmCost, WavesRoundUpAcrossGroups) {
  // 4 groups of 64 tiles = 256 tiles -> 3 waves of 100 SMs.
  const auto t = gemm_time(kDevice, 1024, 2048, 4096, 4, 0);
  EXPECT_EQ(t.tiles, 256);
  EXPECT_EQ(t.waves, 3);
  EXPECT_DOUBLE_EQ(t.seconds, 3 * 2.0 * 128 * 256 * (4096 + 256) / 1e12);
  // Partial tiles count whole: 1025 rows need 9 tile rows (72 tiles, still one wave).
  EXPECT_EQ(gemm_time(kDevice, 1025, 2048, 4096, 1, 0).tiles, 72);
}

TEST(GemmCost, GroupedGemmRunsAtItsFractionOfTheCeiling) {
  // The 4 x 64-tile grouped GEMM above (3 waves) at grouped_fraction 0.8: 0.8e12 FLOP/s per SM,
  // 3 * 2 * 128 * 256 * 4352 / 0.8e12 = 1069.5 us; one dense GEMM keeps the full ceiling.
  GemmDevice grouped = kDevice;
  grouped.grouped_fraction = 0.8;
  const auto t = gemm_time(grouped, 1024, 2048, 4096, 4, 0);
  EXPECT_DOUBLE_EQ(t.seconds, 3 * 2.0 * 128 * 256 * (4096 + 256) / 0.8e12);
  EXPECT_NEAR(t.seconds, 1069.5e-6, 0.1e-6);
  EXPECT_DOUBLE_EQ(gemm_time(grouped, 1024, 2048, 4096, 1, 0).seconds, 2.0 * 128 * 256 * (4096 + 256) / 1e12);
  grouped.grouped_fraction = 0;
  EXPECT_THROW(gemm_time(grouped, 1024, 2048, 4096, 4, 0), std::invalid_argument);
}

TEST(GemmCost, ThinOutputSplitsTheReduction) {
  // One 128 x 256 tile with k = 8192: split into min(100, 8192 / 1024 = 8) = 8 pieces of 1024.
  const auto t = gemm_time(kDevice, 128, 256, 8192, 1, 0);
  EXPECT_EQ(t.split_k, 8);
  EXPECT_EQ(t.waves, 1);
  EXPECT_DOUBLE_EQ(t.seconds, 2.0 * 128 * 256 * (1024 + 256) / 1e12);  // 83.9 us
}

// Stream-K (Hopper / Blackwell presets): full waves data-parallel, the partial wave's k-iterations
// spread over every SM with one tile fill.
TEST(GemmCost, StreamKSpreadsThePartialWaveOverAllSms) {
  GemmDevice sk = kDevice;
  sk.stream_k = true;
  // 2048 x 2560: 16 x 10 = 160 tiles = 1 full wave of 100 SMs + 60 tiles.
  // Whole waves: 2 waves of (4096 + 256) steps = 8704 steps per SM. Stream-K: 4096 + 256 for the
  // full wave, then 60 * 4096 / 100 = 2457.6 steps + 256 fill = 2713.6: 7065.6 steps, 463.1 us.
  const auto whole = gemm_time(kDevice, 2048, 2560, 4096, 1, 0);
  const auto t = gemm_time(sk, 2048, 2560, 4096, 1, 0);
  EXPECT_EQ(whole.waves, 2);
  EXPECT_DOUBLE_EQ(whole.seconds, 2 * 2.0 * 128 * 256 * (4096 + 256) / 1e12);
  EXPECT_DOUBLE_EQ(t.waves, 1.6);
  EXPECT_DOUBLE_EQ(t.seconds, (4096 + 256 + 60 * 4096 / 100.0 + 256) * 2.0 * 128 * 256 / 1e12);
  EXPECT_NEAR(t.seconds, 463.1e-6, 0.1e-6);
  // Fewer tiles than SMs: 8 tiles of k = 8192 give each SM 8 * 8192 / 100 = 655 steps, below the
  // 1024-step least piece, so each piece keeps 1024 (+ 256 fill): 2 * 128 * 256 * 1280 / 1e12.
  EXPECT_DOUBLE_EQ(gemm_time(sk, 256, 1024, 8192, 1, 0).seconds, 2.0 * 128 * 256 * (1024 + 256) / 1e12);
  // An exact number of waves costs the same under both schedules (200 tiles = 2 waves).
  EXPECT_DOUBLE_EQ(gemm_time(sk, 2560, 2560, 4096, 1, 0).seconds, gemm_time(kDevice, 2560, 2560, 4096, 1, 0).seconds);
  // Grouped GEMMs keep whole waves: 4 groups of 64 tiles = 3 waves.
  EXPECT_DOUBLE_EQ(gemm_time(sk, 1024, 2048, 4096, 4, 0).seconds, 3 * 2.0 * 128 * 256 * (4096 + 256) / 1e12);
}

TEST(GemmCost, MemoryBoundWhenBytesDominate) {
  // 64 x 7168 x 16384 (a skinny GEMM): compute one wave of 28 tiles = 2*128*256*(16384/3 + 256)...
  // bytes 2*(64*16384 + 16384*7168 + 64*7168) = 237,895,680 B at 0.5 TB/s = 475.8 us.
  const double bytes = 2.0 * (64.0 * 16384 + 16384.0 * 7168 + 64.0 * 7168);
  const auto t = gemm_time(kDevice, 64, 7168, 16384, 1, bytes);
  EXPECT_DOUBLE_EQ(t.memory_seconds, bytes / 0.5e12);
  EXPECT_GT(t.memory_seconds, t.compute_seconds);
  EXPECT_DOUBLE_EQ(t.seconds, t.memory_seconds);
}

TEST(GemmCost, RejectsEmptyShapesAndMissingDeviceNumbers) {
  EXPECT_THROW(gemm_time(kDevice, 0, 2048, 4096, 1, 0), std::invalid_argument);
  EXPECT_THROW(gemm_time(kDevice, 1024, 2048, 4096, 0, 0), std::invalid_argument);
  GemmDevice no_sms = kDevice;
  no_sms.sm_count = 0;
  try {
    gemm_time(no_sms, 1024, 2048, 4096, 1, 0);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "hardware.kernels.sm_count must be > 0, got 0.000000");
  }
}

TEST(AttentionCurves, ReproduceTheirTableRows) {
  // attention.csv: H100 cuDNN fwd causal hdim 128 seq 2048 = 484 TFLOPS of 989.4.
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kHopper, 2048, 128, false), 484 / 989.4);
  // H100 causal bwd hdim 64 seq 512: non-causal bwd 266 x (causal fwd 225 / non-causal fwd 335).
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kHopper, 512, 64, true), 266.0 * 225 / 335 / 989.4);
  // A100 FA2 fwd+bwd causal hdim 128 seq 16384 = 189 of 312, forward and backward alike.
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kAmpere, 16384, 128, false), 189 / 312.0);
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kAmpere, 16384, 128, true), 189 / 312.0);
  // B200 TE causal bwd hdim 128 seq 32768 = 980.7 of 2250.
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kBlackwell, 32768, 128, true), 980.7 / 2250);
}

TEST(AttentionCurves, InterpolateInLogSeqAndHeadDimAndClamp) {
  // Halfway in log2 between 2048 and 4096 (seq 2896.3): (484 + 518) / 2.
  EXPECT_NEAR(kernels::attention_peak_fraction(GpuFamily::kHopper, std::sqrt(2048.0 * 4096), 128, false),
              (484 + 518) / 2.0 / 989.4, 1e-12);
  // Head dim 96, halfway between the hdim-64 (334) and hdim-128 (484) curves at seq 2048.
  EXPECT_NEAR(kernels::attention_peak_fraction(GpuFamily::kHopper, 2048, 96, false), (334 + 484) / 2.0 / 989.4, 1e-12);
  // Head dim 160 on B200 at seq 4096: halfway between 1121.2 (hdim 128) and 934.4 (hdim 192).
  EXPECT_NEAR(kernels::attention_peak_fraction(GpuFamily::kBlackwell, 4096, 160, false),
              (1121.2 + 934.4) / 2 / 2250, 1e-12);
  // Beyond the table: the end point, no extrapolation.
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kAmpere, 131072, 128, false), 189 / 312.0);
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kAmpere, 128, 32, false), 88 / 312.0);
  EXPECT_THROW(kernels::attention_peak_fraction(GpuFamily::kUnspecified, 2048, 128, false), std::invalid_argument);
  EXPECT_THROW(kernels::attention_peak_fraction(GpuFamily::kHopper, 0, 128, false), std::invalid_argument);
}

TEST(AttentionCurves, BlackwellCallsWithFewHeadsTakeTheMeasuredHeadFactor) {
  // attention.csv, B200 TE causal hdim 128 seq 4096 batch 1: 32 query heads = 1,024 tiles of 128
  // queries; fwd rows 823.2, 816.8, 812.5, 822.7 (mean 818.8) against the 128-head rows 1121.2,
  // 1064.7 (mean 1092.95); bwd 895.9, 894.5, 885.4, 884.4 (890.05) against 935.5, 927.6 (931.55).
  EXPECT_NEAR(kernels::blackwell_tile_factor(1024, false), 818.8 / 1092.95, 1e-12);  // 0.7492
  EXPECT_NEAR(kernels::blackwell_tile_factor(1024, true), 890.05 / 931.55, 1e-12);   // 0.9555
  // The curve's 128-head rate times that factor: a tp-4 Llama-3.1-405B rank (128 / 4 = 32 heads).
  EXPECT_NEAR(kernels::attention_peak_fraction(GpuFamily::kBlackwell, 4096, 128, false, 32),
              1121.2 / 2250 * (818.8 / 1092.95), 1e-12);
  // Halfway in log2 between 32 and 64 heads (1,448.2 tiles): the mean of the two factors.
  EXPECT_NEAR(kernels::blackwell_tile_factor(std::sqrt(1024.0 * 2048), false), (818.8 + 960.0) / 2 / 1092.95, 1e-12);
  // 4,096 tiles or more: 1. The seq-32768 rows were measured with 16 heads, 16 x 32768 / 128 = 4,096
  // tiles, and reproduce themselves; below 4 heads the 4-head factor (clamp).
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kBlackwell, 32768, 128, false, 16), 1311.1 / 2250);
  EXPECT_DOUBLE_EQ(kernels::blackwell_tile_factor(64, true), 387.35 / 931.55);
  // No per-heads rows on Hopper: the argument changes nothing there; 0 (unknown) keeps the curve.
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kHopper, 2048, 128, false, 8), 484 / 989.4);
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kBlackwell, 4096, 128, true, 0), 935.5 / 2250);
  EXPECT_THROW(kernels::blackwell_tile_factor(0, false), std::invalid_argument);
}

TEST(AttentionCurves, TheOpTableGivesTheCallItsLocalHeadsTimesBatch) {
  // LLaMA2-70B (64 query heads) at tp 8, micro-batch 2: 8 local heads x 2 sequences = 16.
  const LayerOps ops = ops_for_layer(testing::llama2_70b(),
                                     testing::parallel_spec({.tp = 8, .micro_batch = 2, .global_batch = 2}), 0);
  int checked = 0;
  for (const OpCost& op : ops.ops()) {
    if (op.forward.shape.kind != KernelKind::kAttention) continue;
    ++checked;
    EXPECT_DOUBLE_EQ(op.forward.shape.head_batches, 16);
    EXPECT_DOUBLE_EQ(op.backward_input.shape.head_batches, 16);
  }
  EXPECT_EQ(checked, 2);  // attention_map and attention_value
}

TEST(AttentionCurves, FlashAttention1ReproducesItsRowsForwardAndBackwardAlike) {
  // attention.csv: A100 FlashAttention-1 fwd+bwd causal hdim 128 seq 2048 = 69 of 312 (FA2: 155).
  EXPECT_DOUBLE_EQ(kernels::flash1_peak_fraction(GpuFamily::kAmpere, 2048, 128), 69 / 312.0);
  EXPECT_DOUBLE_EQ(kernels::attention_peak_fraction(GpuFamily::kAmpere, 2048, 128, true), 155 / 312.0);
  // A100 hdim 64 seq 512 = 58; H100 hdim 128 seq 4096 = 126 of 989.4.
  EXPECT_DOUBLE_EQ(kernels::flash1_peak_fraction(GpuFamily::kAmpere, 512, 64), 58 / 312.0);
  EXPECT_DOUBLE_EQ(kernels::flash1_peak_fraction(GpuFamily::kHopper, 4096, 128), 126 / 989.4);
  // Head dim 96 at seq 1024: halfway between 70 (hdim 64) and 62 (hdim 128); clamped beyond 16k.
  EXPECT_NEAR(kernels::flash1_peak_fraction(GpuFamily::kAmpere, 1024, 96), 66 / 312.0, 1e-12);
  EXPECT_DOUBLE_EQ(kernels::flash1_peak_fraction(GpuFamily::kAmpere, 65536, 128), 83 / 312.0);
  // No FlashAttention-1 kernel on Blackwell.
  try {
    (void)kernels::flash1_peak_fraction(GpuFamily::kBlackwell, 2048, 128);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "model.attention_impl flash1 needs hardware.kernels.family ampere or hopper (FlashAttention-1 curves)");
  }
}

HardwareSpec kernel_gpu() {
  HardwareSpec hw;
  hw.peak_flops_bf16 = 1000e12;
  hw.hbm_bandwidth = 1e12;
  hw.compute_model = ComputeModelKind::kKernel;
  hw.kernels = {.family = GpuFamily::kHopper, .sm_count = 100, .gemm_tile_m = 128, .gemm_tile_n = 256,
                .gemm_ceiling_bf16 = 100e12, .gemm_ceiling_fp8 = 200e12, .hbm_fraction = 0.5,
                .host_launch_seconds = 0};
  return hw;
}

TEST(KernelComputeModel, GemmPhaseTakesItsShapeTime) {
  const HardwareSpec hw = kernel_gpu();
  const PhaseCost gemm{.flops = 2.0 * 1024 * 2048 * 4096, .hbm_bytes = 0,
                       .shape = {.kind = KernelKind::kGemm, .m = 1024, .n = 2048, .k = 4096, .groups = 1}};
  EXPECT_DOUBLE_EQ(phase_seconds(gemm, OpClass::kGemm, hw, FeatureSpec{}), 2.0 * 128 * 256 * (4096 + 256) / 1e12);
  // The efficiency class does not matter; fp8 runs at its own ceiling (2e12 per SM).
  FeatureSpec fp8;
  fp8.compute_dtype = DType::kFp8;
  EXPECT_DOUBLE_EQ(phase_seconds(gemm, OpClass::kSmallGemm, hw, fp8), 2.0 * 128 * 256 * (4096 + 256) / 2e12);
}

// kernels.in_step_rate scales the measured compute rates (GEMM ceiling, attention curve), not the
// memory-bound kernels, and multiplies with the scenario's compute_scale.
TEST(KernelComputeModel, InStepRateScalesComputeBoundKernelsOnly) {
  HardwareSpec hw = kernel_gpu();
  hw.kernels.in_step_rate = 0.8;
  const PhaseCost gemm{.flops = 2.0 * 1024 * 2048 * 4096, .hbm_bytes = 0,
                       .shape = {.kind = KernelKind::kGemm, .m = 1024, .n = 2048, .k = 4096, .groups = 1}};
  EXPECT_DOUBLE_EQ(phase_seconds(gemm, OpClass::kGemm, hw, FeatureSpec{}), 2.0 * 128 * 256 * (4096 + 256) / 0.8e12);
  FeatureSpec half;
  half.compute_scale = 0.5;
  EXPECT_DOUBLE_EQ(phase_seconds(gemm, OpClass::kGemm, hw, half), 2.0 * 128 * 256 * (4096 + 256) / 0.4e12);
  const KernelShape fwd{.kind = KernelKind::kAttention, .seq = 2048, .head_dim = 128};
  EXPECT_DOUBLE_EQ(phase_seconds({1e12, 0, fwd}, OpClass::kAttention, hw, FeatureSpec{}),
                   1e12 / (0.8 * 484 / 989.4 * 1e15));
  // 1e8 B at 0.5 TB/s stays 200 us.
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e8}, OpClass::kElementwise, hw, FeatureSpec{}), 200e-6);
}

TEST(KernelComputeModel, AttentionUsesTheCurveAndTheFlashBackwardConvention) {
  const HardwareSpec hw = kernel_gpu();
  const KernelShape fwd{.kind = KernelKind::kAttention, .seq = 2048, .head_dim = 128};
  KernelShape bwd = fwd;
  bwd.backward = true;
  // Forward: 1e12 FLOPs at 484/989.4 of the 1e15 BF16 peak.
  EXPECT_DOUBLE_EQ(phase_seconds({1e12, 0, fwd}, OpClass::kAttention, hw, FeatureSpec{}),
                   1e12 / (484 / 989.4 * 1e15));
  // Backward: the op table's 2e12 FLOPs are 2.5e12 in the FlashAttention convention.
  const double bwd_rate = kernels::attention_peak_fraction(GpuFamily::kHopper, 2048, 128, true) * 1e15;
  EXPECT_DOUBLE_EQ(phase_seconds({2e12, 0, bwd}, OpClass::kAttention, hw, FeatureSpec{}), 2.5e12 / bwd_rate);
  // FlashAttention-1 (H100 row: 108 TFLOPS at hdim 128, seq 2048): 1e12 forward FLOPs take
  // 1e12 / (108 / 989.4 * 1e15) = 9.161 ms; the backward's 2e12 are 2.5e12 at the same rate.
  KernelShape fa1 = fwd;
  fa1.flash1 = true;
  EXPECT_DOUBLE_EQ(phase_seconds({1e12, 0, fa1}, OpClass::kAttention, hw, FeatureSpec{}), 1e12 / (108 / 989.4 * 1e15));
  fa1.backward = true;
  EXPECT_DOUBLE_EQ(phase_seconds({2e12, 0, fa1}, OpClass::kAttention, hw, FeatureSpec{}),
                   2.5e12 / (108 / 989.4 * 1e15));
}

TEST(KernelComputeModel, MemoryBoundKernelsAndTheHostLaunchFloor) {
  HardwareSpec hw = kernel_gpu();
  // 1e8 B at 0.5 * 1 TB/s = 200 us.
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e8}, OpClass::kElementwise, hw, FeatureSpec{}), 200e-6);
  // A 2 us kernel under a 5 us eager launch takes 5 us; CUDA graphs remove the floor.
  hw.kernels.host_launch_seconds = 5e-6;
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e6}, OpClass::kElementwise, hw, FeatureSpec{}), 5e-6);
  FeatureSpec graphs;
  graphs.cuda_graphs = true;
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e6}, OpClass::kElementwise, hw, graphs), 2e-6);
  // A long kernel hides the launch.
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e8}, OpClass::kElementwise, hw, FeatureSpec{}), 200e-6);
  // No achieved-bandwidth fraction: a named error, not a division by zero.
  hw.kernels.hbm_fraction = 0;
  EXPECT_THROW(phase_seconds({0, 1e8}, OpClass::kElementwise, hw, FeatureSpec{}), std::invalid_argument);
}

// CUDA graphs remove the host's launch charges (the kernels.host_launch floor per kernel, the
// op_dispatch floor per op phase), not the fixed cost per op phase fitted on the open set.
TEST(KernelComputeModel, GraphsRemoveTheHostFloorsButNotTheFittedCostPerOpPhase) {
  HardwareSpec hw = kernel_gpu();
  hw.kernels.host_launch_seconds = 5e-6;
  hw.kernel_launch_seconds = 50e-6;  // the presets' fitted cost per op phase
  FeatureSpec graphs;
  graphs.cuda_graphs = true;
  // A 2 us kernel (1e6 B at 0.5 TB/s): eager, the 5 us launch floor then 50 us: 55 us; replayed from
  // a graph, its own 2 us then the same 50 us: 52 us.
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e6}, OpClass::kElementwise, hw, FeatureSpec{}), 55e-6);
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e6}, OpClass::kElementwise, hw, graphs), 52e-6);
  // A 200 us kernel hides the floor, so graphs change nothing: 250 us either way.
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e8}, OpClass::kElementwise, hw, FeatureSpec{}), 250e-6);
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e8}, OpClass::kElementwise, hw, graphs), 250e-6);
  // A 20 us op_dispatch floor (host time per op phase) binds the 2 us kernel eagerly: 20 + 50 = 70 us;
  // a graph replay issues nothing from the host: 52 us again.
  hw.op_dispatch_seconds = 20e-6;
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e6}, OpClass::kElementwise, hw, FeatureSpec{}), 70e-6);
  EXPECT_DOUBLE_EQ(phase_seconds({0, 1e6}, OpClass::kElementwise, hw, graphs), 52e-6);
  // A phase with no work launches nothing.
  EXPECT_EQ(phase_seconds({0, 0}, OpClass::kElementwise, hw, FeatureSpec{}), 0.0);
  EXPECT_EQ(phase_seconds({0, 0}, OpClass::kElementwise, hw, graphs), 0.0);
}

}  // namespace
}  // namespace mofasim::model
