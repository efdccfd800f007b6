// The model terms behind the vTrain conditions: Megatron's unfused attention in the op table, the
// host dispatch floor of an op phase, the calibration parameters that set launch and dispatch
// costs, and how a measured row picks them up.
#include <gtest/gtest.h>

#include <stdexcept>

#include "model/compute_time.h"
#include "model/op_table.h"
#include "sim/analysis/calibrate.h"
#include "sim/analysis/measured_specs.h"
#include "test/support/op_lookup.h"

namespace mofasim::analysis {
namespace {

using test::find_op;

// GPT with h = 1024, a = 16 (d = 64), s = 1024, one micro-batch of b = 1 on one GPU (tp = 1):
// T = 1024 tokens, E = T*s*a = 1024*1024*16 = 16,777,216 score elements.
model::ModelSpec gpt(model::AttentionImpl impl, double dropout) {
  return model::ModelSpec{.name = "gpt-h1024", .num_layers = 2, .hidden_size = 1024, .num_attention_heads = 16,
                          .num_kv_heads = 16, .head_dim = 64, .ffn_hidden_size = 4096, .vocab_size = 50304,
                          .seq_length = 1024, .attention = model::AttentionKind::kMha, .mlp = model::MlpKind::kGelu,
                          .norm = model::NormKind::kLayerNorm, .position = model::PositionKind::kLearned,
                          .untie_embeddings = false, .linear_bias = true, .attention_impl = impl,
                          .attention_dropout = dropout};
}
const model::ParallelSpec kOneGpu{.tp = 1, .micro_batch = 1, .global_batch = 1};
constexpr double kE = 1024.0 * 1024 * 16;

TEST(MeasuredConditions, UnfusedAttentionCostsTheFullScoreMatrixAndItsHbmPasses) {
  const model::LayerOps ops = model::ops_for_layer(gpt(model::AttentionImpl::kUnfused, 0.1), kOneGpu, 0);
  const model::OpCost& map = find_op(ops, model::OpKind::kAttentionMap);
  // baddbmm over all s keys (no causal halving): 2*T*s*d*a = 2*1024*1024*64*16 = 2^31 FLOPs.
  EXPECT_DOUBLE_EQ(map.forward.flops, 2147483648.0);
  EXPECT_DOUBLE_EQ(map.backward_input.flops, 2 * 2147483648.0);
  // Reads Q and K (2 B * (T*a*d + s*a*d) = 4,194,304) and writes the fp16 scores (2E).
  EXPECT_DOUBLE_EQ(map.forward.hbm_bytes, 4194304.0 + 2 * kE);
  const model::OpCost& softmax = find_op(ops, model::OpKind::kSoftmax);
  // Softmax read + write (4E) and dropout read + write + 1-byte mask (5E); backward 6E + 5E.
  EXPECT_DOUBLE_EQ(softmax.forward.hbm_bytes, 9 * kE);
  EXPECT_DOUBLE_EQ(softmax.backward_input.hbm_bytes, 11 * kE);
  EXPECT_DOUBLE_EQ(softmax.forward.flops, 0.0);
  // Korthikanti et al.: softmax output 2E + dropout mask E + dropout output 2E, all dropped by
  // selective recompute.
  EXPECT_DOUBLE_EQ(softmax.activation_bytes, 5 * kE);
  EXPECT_DOUBLE_EQ(softmax.selective_dropped_bytes, 5 * kE);
  const model::OpCost& pv = find_op(ops, model::OpKind::kAttentionValue);
  EXPECT_DOUBLE_EQ(pv.forward.flops, 2147483648.0);
  EXPECT_DOUBLE_EQ(pv.forward.hbm_bytes, 4194304.0 + 2 * kE);  // V and the output, the probabilities

  // Without dropout: the softmax passes only, and only its output is kept (2E).
  const model::LayerOps plain = model::ops_for_layer(gpt(model::AttentionImpl::kUnfused, 0), kOneGpu, 0);
  EXPECT_DOUBLE_EQ(find_op(plain, model::OpKind::kSoftmax).forward.hbm_bytes, 4 * kE);
  EXPECT_DOUBLE_EQ(find_op(plain, model::OpKind::kSoftmax).backward_input.hbm_bytes, 6 * kE);
  EXPECT_DOUBLE_EQ(find_op(plain, model::OpKind::kSoftmax).activation_bytes, 2 * kE);
}

TEST(MeasuredConditions, FusedAttentionIsTheDefaultAndIgnoresDropout) {
  const model::LayerOps fused = model::ops_for_layer(gpt(model::AttentionImpl::kFused, 0.1), kOneGpu, 0);
  // Causal-halved flash FLOPs: T*s*d*a = 2^30; the softmax has no HBM work, keeps fp32 LSE (4*T*a).
  EXPECT_DOUBLE_EQ(find_op(fused, model::OpKind::kAttentionMap).forward.flops, 1073741824.0);
  EXPECT_DOUBLE_EQ(find_op(fused, model::OpKind::kSoftmax).forward.hbm_bytes, 0.0);
  EXPECT_DOUBLE_EQ(find_op(fused, model::OpKind::kSoftmax).activation_bytes, 4.0 * 1024 * 16);
  EXPECT_EQ(model::ModelSpec{}.attention_impl, model::AttentionImpl::kFused);
  EXPECT_THROW((void)model::ops_for_layer(gpt(model::AttentionImpl::kUnfused, 1.0), kOneGpu, 0),
               std::invalid_argument);
  EXPECT_THROW((void)model::ops_for_layer(gpt(model::AttentionImpl::kUnfused, -0.1), kOneGpu, 0),
               std::invalid_argument);
}

TEST(MeasuredConditions, AnOpPhaseTakesAtLeastTheHostDispatchTimeThenTheLaunchCost) {
  model::HardwareSpec hw{.peak_flops_bf16 = 1e12, .hbm_bandwidth = 1e12,
                         .efficiency = {.gemm = 0.5, .attention = 0.5, .memory = 0.5, .small_gemm = 0.5}};
  const model::FeatureSpec f{};
  const model::PhaseCost big{.flops = 1e9, .hbm_bytes = 0};    // 1e9 / (0.5 * 1e12) = 2 ms
  const model::PhaseCost small{.flops = 1e6, .hbm_bytes = 0};  // 2 us
  EXPECT_DOUBLE_EQ(model::phase_seconds(big, model::OpClass::kGemm, hw, f), 2e-3);
  hw.op_dispatch_seconds = 1e-3;
  EXPECT_DOUBLE_EQ(model::phase_seconds(big, model::OpClass::kGemm, hw, f), 2e-3);    // hidden behind the GEMM
  EXPECT_DOUBLE_EQ(model::phase_seconds(small, model::OpClass::kGemm, hw, f), 1e-3);  // host-bound
  EXPECT_DOUBLE_EQ(model::phase_seconds({}, model::OpClass::kGemm, hw, f), 0.0);      // no work, no op
  hw.kernel_launch_seconds = 1e-5;  // added on top of either
  EXPECT_DOUBLE_EQ(model::phase_seconds(big, model::OpClass::kGemm, hw, f), 2e-3 + 1e-5);
  EXPECT_DOUBLE_EQ(model::phase_seconds(small, model::OpClass::kGemm, hw, f), 1e-3 + 1e-5);
}

TEST(MeasuredConditions, CalibrationSetsLaunchAndDispatchCosts) {
  model::AnalyticInput in;
  apply_parameter(in, CalibrationParameter::kKernelLaunchSeconds, 3e-5);
  apply_parameter(in, CalibrationParameter::kOpDispatchSeconds, 9e-5);
  EXPECT_DOUBLE_EQ(in.hardware.kernel_launch_seconds, 3e-5);
  EXPECT_DOUBLE_EQ(in.hardware.op_dispatch_seconds, 9e-5);
  EXPECT_STREQ(calibration_parameter_name(CalibrationParameter::kOpDispatchSeconds), "op_dispatch_seconds");
}

TEST(MeasuredConditions, VtrainRowsUseUnfusedAttentionWithDropoutUnderTheRoofline) {
  const MeasuredConditions c = vtrain_a100_conditions(model::HardwareSpec{.peak_flops_bf16 = 312e12,
                                                                          .hbm_bandwidth = 2.039e12});
  EXPECT_EQ(c.hardware.compute_model, model::ComputeModelKind::kRoofline);
  const MeasuredRow r{.source = "runs.csv", .line = 2, .gpus = 8, .global_batch = 16, .micro_batch = 2,
                      .hidden_size = 1024, .attention_heads = 16, .layers = 4, .seq_length = 1024,
                      .tp = 2, .dp = 4, .pp = 1, .iteration_time_s = 0.1};
  const MeasuredCase mc = to_measured_case(r, c);
  EXPECT_EQ(mc.model.attention_impl, model::AttentionImpl::kUnfused);
  EXPECT_DOUBLE_EQ(mc.model.attention_dropout, 0.1);
}

}  // namespace
}  // namespace mofasim::analysis
