// Row -> sealed specs under vTrain's conditions: Megatron vocabulary padding, GPT architecture,
// per-GPU link bandwidths, training features.
#include "sim/analysis/measured_specs.h"

#include "model/memory.h"
#include "model/rank_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace mofasim::analysis {
namespace {

MeasuredRow row(int gpus, int tp, int dp, int pp) {
  return MeasuredRow{.source = "runs.csv", .line = 7, .gpus = gpus, .global_batch = 64, .micro_batch = 2,
                     .hidden_size = 2048, .attention_heads = 16, .layers = 24, .seq_length = 1024,
                     .tp = tp, .dp = dp, .pp = pp, .iteration_time_s = 0.5};
}

TEST(MeasuredSpecs, VocabularyIsPaddedAsMegatronPads) {
  // Smallest multiple of 128*tp at or above 50,257.
  EXPECT_EQ(padded_vocab(50257, 128, 1), 50304);  // 128 * 393
  EXPECT_EQ(padded_vocab(50257, 128, 2), 50432);  // 256 * 197
  EXPECT_EQ(padded_vocab(50257, 128, 4), 50688);  // 512 * 99
  EXPECT_EQ(padded_vocab(50257, 128, 8), 51200);  // 1024 * 50
  EXPECT_EQ(padded_vocab(256, 128, 2), 256);      // already a multiple
  EXPECT_THROW((void)padded_vocab(0, 128, 1), std::invalid_argument);
}

TEST(MeasuredSpecs, TheA100PresetIsLoadedThroughTheScenarioLoader) {
  const model::HardwareSpec hw = hardware_from_preset("a100-80gb");
  EXPECT_DOUBLE_EQ(hw.peak_flops_bf16, 312e12);  // A100 datasheet, dense BF16
  EXPECT_DOUBLE_EQ(hw.hbm_bandwidth, 2039e9);    // A100 80GB datasheet
}

TEST(MeasuredSpecs, ARowBecomesAGptOnVtrainsCluster) {
  const model::HardwareSpec hw{.name = "test", .peak_flops_bf16 = 312e12, .gpu_memory_bytes = 80e9,
                               .hbm_bandwidth = 2e12};
  const MeasuredCase c = to_measured_case(row(/*gpus=*/64, /*tp=*/2, /*dp=*/8, /*pp=*/4), vtrain_a100_conditions(hw));
  EXPECT_EQ(c.model.num_layers, 24);
  EXPECT_EQ(c.model.hidden_size, 2048);
  EXPECT_EQ(c.model.num_attention_heads, 16);
  EXPECT_EQ(c.model.num_kv_heads, 16);         // MHA
  EXPECT_EQ(c.model.head_dim, 128);            // 2048 / 16
  EXPECT_EQ(c.model.ffn_hidden_size, 8192);    // 4h
  EXPECT_EQ(c.model.vocab_size, 50432);        // padded for tp 2
  EXPECT_EQ(c.model.mlp, model::MlpKind::kGelu);
  EXPECT_EQ(c.model.position, model::PositionKind::kLearned);
  EXPECT_EQ(c.model.norm, model::NormKind::kLayerNorm);
  EXPECT_TRUE(c.model.linear_bias);
  EXPECT_FALSE(c.model.untie_embeddings);
  EXPECT_EQ(c.parallel.gpus(), 64);
  EXPECT_EQ(c.parallel.microbatches(), 4);     // 64 / (2 * 8)
  EXPECT_EQ(c.parallel.schedule, model::ScheduleKind::k1F1B);
  EXPECT_FALSE(c.parallel.sequence_parallel);
  EXPECT_EQ(c.features.recompute, model::RecomputeKind::kFull);
  EXPECT_FALSE(c.features.distributed_optimizer);
  EXPECT_FALSE(c.features.dp_overlap.enabled);
  EXPECT_EQ(c.topology.gpus, 64);
  EXPECT_EQ(c.topology.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(c.topology.intra_node.bandwidth, 150e9);
  EXPECT_DOUBLE_EQ(c.topology.inter_node.bandwidth, 12.5e9);  // 800 Gb/s per node = 100 GB/s over 8 GPUs
  EXPECT_EQ(c.hardware.name, "test");
}

TEST(MeasuredSpecs, VtrainRunsTrainInFp16AndAllReduceFp16Gradients) {
  // Megatron-DeepSpeed --fp16: fp16 weights and gradients, fp32 master weights, moments and the
  // optimizer's fp32 copy of the gradient (Megatron's fp16 row: 2 + 2 + 4 + 4 + 4 + 4 = 20 B/param).
  const model::HardwareSpec hw{.name = "test", .peak_flops_bf16 = 312e12, .gpu_memory_bytes = 80e9,
                               .hbm_bandwidth = 2e12};
  const MeasuredCase c = to_measured_case(row(/*gpus=*/2, /*tp=*/1, /*dp=*/2, /*pp=*/1), vtrain_a100_conditions(hw));
  EXPECT_EQ(c.features.param_dtype, model::DType::kFp16);
  EXPECT_EQ(c.features.grad_dtype, model::DType::kFp16);
  EXPECT_EQ(c.features.compute_dtype, model::DType::kFp16);
  const model::BytesPerParam b = model::bytes_per_param(c.features);
  EXPECT_DOUBLE_EQ(b.weight + b.grad + b.master + b.moments + b.main_grad_copy, 20);
  // The DP all-reduce carries 2 bytes per parameter. h 2048, 24 layers, vocabulary 50,304 (tp 1),
  // 1,024 positions: 24 * (12 h^2 + 13 h) + 50,304 h + 1,024 h + 2 h (final LayerNorm)
  // = 1,208,598,528 + 103,022,592 + 2,097,152 + 4,096 = 1,313,722,368 parameters.
  const model::RankPlan plan = model::build_rank_plan(
      {.model = &c.model, .hardware = &c.hardware, .parallel = c.parallel, .features = c.features});
  ASSERT_EQ(plan.dp.size(), 1u);
  EXPECT_DOUBLE_EQ(plan.dp[0].dense_grad_bytes, 2.0 * 1313722368);
}

TEST(MeasuredSpecs, ARunSmallerThanANodeIsOnePartialNode) {
  const MeasuredCase c = to_measured_case(row(2, 1, 1, 2), vtrain_a100_conditions(model::HardwareSpec{}));
  EXPECT_EQ(c.topology.gpus_per_node, 2);
  EXPECT_EQ(c.topology.nodes(), 1);
  EXPECT_EQ(c.model.vocab_size, 50304);
}

TEST(MeasuredSpecs, AShapeTheModelCannotTakeNamesTheRow) {
  MeasuredRow r = row(8, 8, 1, 1);
  r.attention_heads = 12;  // 12 heads over tp 8
  try {
    (void)to_measured_case(r, vtrain_a100_conditions(model::HardwareSpec{}));
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("runs.csv:7:"));
  }
}

}  // namespace
}  // namespace mofasim::analysis
