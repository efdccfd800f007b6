// Compute-time models (MoFa(1) MoFa(17) MoFa(19), §5.7) on hand-worked numbers.
#include "model/compute_time.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using testing::round_gpu;

TEST(ComputeTime, WorkedExampleLayerAt600TflopPerSecond) {
  // §8.1: 910,533,066,752 FLOPs at an attained 600 TFLOP/s take 1.518 ms.
  HardwareSpec hw = round_gpu();
  hw.peak_flops_bf16 = 600e12;
  hw.efficiency.gemm = 1.0;
  const double t = phase_seconds({910'533'066'752.0, 0}, OpClass::kGemm, hw, FeatureSpec{});
  EXPECT_DOUBLE_EQ(t, 910'533'066'752.0 / 600e12);
  EXPECT_NEAR(t, 1.518e-3, 0.5e-6);
}

TEST(ComputeTime, FixedEfficiencyPerClassAndComputeScale) {
  const HardwareSpec hw = round_gpu();  // peak 1e15, eta gemm 0.75, attention 0.5, small 0.4
  const PhaseCost work{1.5e12, 1e9};
  EXPECT_DOUBLE_EQ(phase_seconds(work, OpClass::kGemm, hw, FeatureSpec{}), 1.5e12 / 0.75e15);       // 2 ms
  EXPECT_DOUBLE_EQ(phase_seconds(work, OpClass::kAttention, hw, FeatureSpec{}), 1.5e12 / 0.5e15);   // 3 ms
  EXPECT_DOUBLE_EQ(phase_seconds(work, OpClass::kSmallGemm, hw, FeatureSpec{}), 1.5e12 / 0.4e15);   // 3.75 ms
  // Elementwise ops are memory-bound: 1e9 B / (0.8 * 4e12 B/s).
  EXPECT_DOUBLE_EQ(phase_seconds(work, OpClass::kElementwise, hw, FeatureSpec{}), 1e9 / 3.2e12);
  // mu_c = 1.25 (MoFa(17)) makes compute 1.25x faster.
  FeatureSpec faster;
  faster.compute_scale = 1.25;
  EXPECT_DOUBLE_EQ(phase_seconds(work, OpClass::kGemm, hw, faster), 1.5e12 / (0.75e15 * 1.25));
}

TEST(ComputeTime, Fp8UsesItsOwnPeakAndRequiresOne) {
  HardwareSpec hw = round_gpu();
  FeatureSpec fp8;
  fp8.compute_dtype = DType::kFp8;
  EXPECT_DOUBLE_EQ(phase_seconds({1.5e12, 0}, OpClass::kGemm, hw, fp8), 1.5e12 / (0.75 * 2e15));
  hw.peak_flops_fp8 = 0;
  EXPECT_THROW(phase_seconds({1.5e12, 0}, OpClass::kGemm, hw, fp8), std::invalid_argument);
  // fp32 without its own peak falls back to bf16 / 16.
  EXPECT_DOUBLE_EQ(peak_flops(hw, DType::kFp32), 1e15 / 16);
}

TEST(ComputeTime, RooflineTakesTheSlowerOfComputeAndMemoryPlusLaunch) {
  HardwareSpec hw = round_gpu();
  hw.compute_model = ComputeModelKind::kRoofline;
  hw.kernel_launch_seconds = 5e-6;
  // Memory-bound: 1e9 FLOPs (1.33 us of compute) but 6.4e9 B (2 ms at 0.8 * 4e12).
  EXPECT_DOUBLE_EQ(phase_seconds({1e9, 6.4e9}, OpClass::kGemm, hw, FeatureSpec{}), 2e-3 + 5e-6);
  // Compute-bound: 1.5e12 FLOPs (2 ms) over 1e6 B.
  EXPECT_DOUBLE_EQ(phase_seconds({1.5e12, 1e6}, OpClass::kGemm, hw, FeatureSpec{}), 2e-3 + 5e-6);
  // No work, no kernel.
  EXPECT_EQ(phase_seconds({0, 0}, OpClass::kGemm, hw, FeatureSpec{}), 0.0);
}

TEST(ComputeTime, OpDispatchFloorsEagerPhasesOnlyAndTheLaunchCostStaysUnderGraphs) {
  HardwareSpec hw = round_gpu();
  hw.compute_model = ComputeModelKind::kRoofline;
  hw.kernel_launch_seconds = 5e-6;
  hw.op_dispatch_seconds = 97.88e-6;  // the vTrain campaign's fitted floor
  FeatureSpec graphs;
  graphs.cuda_graphs = true;
  // 3.2e7 B at 0.8 * 4e12 B/s = 10 us of device time: eager, the host's 97.88 us floor binds, then
  // the 5 us launch cost: 102.88 us; from a graph, 10 + 5 = 15 us.
  EXPECT_NEAR(phase_seconds({0, 3.2e7}, OpClass::kElementwise, hw, FeatureSpec{}), 102.88e-6, 1e-15);
  EXPECT_NEAR(phase_seconds({0, 3.2e7}, OpClass::kElementwise, hw, graphs), 15e-6, 1e-15);
  // 2 ms of device time hides the floor: 2.005 ms either way.
  EXPECT_DOUBLE_EQ(phase_seconds({0, 6.4e9}, OpClass::kElementwise, hw, FeatureSpec{}), 2e-3 + 5e-6);
  EXPECT_DOUBLE_EQ(phase_seconds({0, 6.4e9}, OpClass::kElementwise, hw, graphs), 2e-3 + 5e-6);
}

TEST(ComputeTime, OptimizerStepStreamsAtItsOwnEfficiencyWhenSet) {
  HardwareSpec hw{.name = "t", .peak_flops_bf16 = 312e12, .hbm_bandwidth = 2e12};
  hw.compute_model = ComputeModelKind::kRoofline;
  hw.efficiency.memory = 0.5;
  const FeatureSpec f{};
  // Unset: an elementwise phase, 36 GB / (0.5 * 2 TB/s) = 36 ms.
  EXPECT_NEAR(optimizer_update_seconds(36e9, hw, f), 0.036, 1e-12);
  // Set: 36 GB / (0.9 * 2 TB/s) = 20 ms; the layers' memory efficiency is not used.
  hw.efficiency.optimizer_memory = 0.9;
  EXPECT_NEAR(optimizer_update_seconds(36e9, hw, f), 0.020, 1e-12);
  EXPECT_DOUBLE_EQ(optimizer_update_seconds(0, hw, f), 0);
}

TEST(ComputeTime, ModifiedRooflineIsTheMinimumOfCapAndLinearFit) {
  HardwareSpec hw = round_gpu();
  hw.compute_model = ComputeModelKind::kModifiedRoofline;
  hw.roofline_slope = 2e12;      // FLOP/s per FLOP/byte
  hw.roofline_intercept = 1e14;  // FLOP/s
  // AI = 100 FLOP/B: fit = 2e14 + 1e14 = 3e14 < cap 0.75e15.
  EXPECT_DOUBLE_EQ(phase_seconds({3e12, 3e10}, OpClass::kGemm, hw, FeatureSpec{}), 3e12 / 3e14);
  // AI = 1000 FLOP/B: fit 2.1e15 > cap 0.75e15.
  EXPECT_DOUBLE_EQ(phase_seconds({3e12, 3e9}, OpClass::kGemm, hw, FeatureSpec{}), 3e12 / 0.75e15);
}

TEST(ComputeTime, LayerSumsItsOpsPerPhase) {
  // Ideal device: every efficiency 1, peak 600 TFLOP/s, HBM 1e12 B/s, no launch cost.
  HardwareSpec hw = round_gpu();
  hw.peak_flops_bf16 = 600e12;
  hw.hbm_bandwidth = 1e12;
  hw.efficiency = EfficiencySpec{.gemm = 1, .attention = 1, .memory = 1, .small_gemm = 1};
  const ParallelSpec par = testing::parallel_spec({.tp = 8});
  const LayerOps ops = ops_for_layer(testing::llama2_70b(), par, 0);
  const LayerSeconds s = layer_compute_seconds(ops, hw, FeatureSpec{});
  // Forward: all FLOPs at peak, plus the elementwise bytes at 1e12 B/s. Without SP, the two
  // RMSNorms read and write T*h each (2 * 2 * 2 * 4096 * 8192 B) and SwiGLU reads 2 and writes 1
  // T x f/t tensor (2 * 3 * 4096 * 3584 B).
  const double elementwise = 8 * 4096.0 * 8192 + 6 * 4096.0 * 3584;
  const double forward = 910'533'066'752.0 / 600e12 + elementwise / 1e12;
  EXPECT_NEAR(s.forward, forward, forward * 1e-12);
  // Selective recompute re-runs QK^T and PV: 2 * (T * s * d_h * a/t) FLOPs.
  EXPECT_DOUBLE_EQ(s.selective_recompute, 2 * 4096.0 * 4096 * 128 * 8 / 600e12);
  EXPECT_GT(s.backward(), 2 * 910'533'066'752.0 / 600e12);
}

}  // namespace
}  // namespace mofasim::model
