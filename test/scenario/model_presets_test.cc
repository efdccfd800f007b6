// The shipped model presets against the parameter counts their authors publish: every preset's
// architecture fields (layers, widths, heads, experts, biases, tied or not) add up to the model's
// published total, and the MoE ones to its published active count.
#include <gtest/gtest.h>

#include <string>

#include "model/params.h"
#include "sim/scenario/loader.h"

namespace mofasim::scenario {
namespace {

model::ModelParams preset_params(const std::string& preset) {
  const std::string text =
      "model: { preset: " + preset + " }\n"
      "hardware: { preset: h100-sxm }\n"
      "topology: { gpus: 8, gpus_per_node: 8, intra_node: { bandwidth: \"450 GB/s\" }, "
      "inter_node: { bandwidth: \"50 GB/s\" } }\n"
      "parallelism: { dp: 8, global_batch: 8 }\n";
  return model::model_params(load_scenario_from_string(text, preset + ".yaml").model);
}

TEST(ModelPresets, DenseLlama3CountsMatchTheReleasedWeights) {
  // Meta's released checkpoints: 8,030,261,248 and 70,553,706,496 parameters (safetensors index).
  EXPECT_EQ(preset_params("llama3-8b").total(), 8'030'261'248.0);
  EXPECT_EQ(preset_params("llama3-70b").total(), 70'553'706'496.0);
}

TEST(ModelPresets, Qwen3MoeCountsMatchTheReport) {
  // Qwen3 report Table 2: 30.5B total / 3.3B activated, 235B / 22B (embeddings included).
  const model::ModelParams small = preset_params("qwen3-30b-a3b");
  EXPECT_NEAR(small.total(), 30.5e9, 0.05e9);
  EXPECT_NEAR(small.active(), 3.3e9, 0.06e9);
  const model::ModelParams large = preset_params("qwen3-235b-a22b");
  EXPECT_NEAR(large.total(), 235e9, 0.5e9);
  EXPECT_NEAR(large.active(), 22e9, 0.2e9);
}

TEST(ModelPresets, GptOssCountsMatchTheModelCard) {
  // Model card Table 1: 116.83B total; 5.13B active per token, which leaves out the input
  // embedding (a lookup): 201,088 x 2,880 = 579,133,440.
  const model::ModelParams p = preset_params("gpt-oss-120b");
  EXPECT_NEAR(p.total(), 116.83e9, 0.005e9);
  EXPECT_NEAR(p.active() - p.embedding, 5.13e9, 0.005e9);
  EXPECT_EQ(p.embedding, 201'088.0 * 2'880);
}

TEST(ModelPresets, Llama4MaverickCountsMatchTheModelCard) {
  // Model card: 400B total, 17B active (text decoder; 24 dense and 24 MoE layers).
  const model::ModelParams p = preset_params("llama4-maverick");
  EXPECT_NEAR(p.total(), 400e9, 1e9);
  EXPECT_NEAR(p.active(), 17e9, 0.2e9);
}

}  // namespace
}  // namespace mofasim::scenario
