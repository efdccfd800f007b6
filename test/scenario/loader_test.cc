// Good paths of the loader: values land in the proto in base SI, presets merge under explicit
// fields, --set overrides, derived defaults are filled, the runtime structs of model/spec.h carry
// the same numbers, and every scenario shipped in scenarios/ loads with the embedded presets.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/attention_window.h"

#include "model/stage_layout.h"
#include "sim/scenario/loader.h"
#include "test/scenario/scenario_test_util.h"

namespace mofasim::scenario {
namespace {

using testing::Lines;
using testing::test_presets;

LoadedScenario load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return load_scenario_from_string(text, "good.yaml", overrides, test_presets());
}

TEST(Loader, BaseScenarioConvertsUnitsToBaseSi) {
  const LoadedScenario s = load(Lines{}.text());
  EXPECT_EQ(s.proto.hardware().peak_bf16(), 9.89e14);          // "989 TFLOPS"
  EXPECT_EQ(s.proto.hardware().gpu_memory(), 85899345920.0);   // "80 GiB" = 80 * 2^30
  EXPECT_EQ(s.proto.hardware().hbm_bandwidth(), 3.35e12);      // "3.35 TB/s"
  EXPECT_EQ(s.proto.topology().intra_node().bandwidth(), 4e11);  // "400 GB/s"
  EXPECT_EQ(s.path, "good.yaml");
}

TEST(Loader, LatencyAndBitRatesThroughYaml) {
  const LoadedScenario s = load(Lines{.topology = R"(topology: {gpus: 8, intra_node: {bandwidth: "400 GB/s", )"
                                                  R"(latency: "1.5 us"}, inter_node: {bandwidth: "200 Gb/s"}})"}
                                    .text());
  EXPECT_EQ(s.proto.topology().intra_node().latency(), 1.5e-6);
  EXPECT_EQ(s.proto.topology().inter_node().bandwidth(), 2.5e10);  // 200e9 bits/s / 8
}

TEST(Loader, PresetMergesUnderExplicitFields) {
  // test-model has num_layers 4 and hidden_size 256; the explicit num_layers wins.
  const LoadedScenario s = load(Lines{.model = "model: {preset: test-model, num_layers: 8}"}.text());
  EXPECT_EQ(s.proto.model().num_layers(), 8);
  EXPECT_EQ(s.proto.model().hidden_size(), 256);
  EXPECT_EQ(s.proto.model().preset(), "test-model");
  // Where the values came from: the explicit one from the scenario, the other from the preset.
  EXPECT_EQ(format_location(s.sources.find("model.num_layers")), "good.yaml:1:41");
  EXPECT_EQ(format_location(s.sources.find("model.hidden_size")), "presets/models/test-model.yaml:2:14");
}

TEST(Loader, PresetMergeIsDeepForNestedMaps) {
  // test-moe: moe {num_experts 8, top_k 2, expert_ffn_hidden_size 128, first_k_dense_layers 1}.
  const LoadedScenario s = load(Lines{.model = "model: {preset: test-moe, moe: {top_k: 1}}"}.text());
  EXPECT_EQ(s.proto.model().moe().top_k(), 1);         // explicit
  EXPECT_EQ(s.proto.model().moe().num_experts(), 8);   // from the preset, same map
  EXPECT_EQ(s.proto.model().moe().first_k_dense_layers(), 1);
}

TEST(Loader, HardwarePresetAndExplicitEfficiency) {
  // test-gpu: efficiency {gemm 0.7, attention 0.5}; the explicit gemm wins, attention stays.
  const LoadedScenario s = load(Lines{.hardware = "hardware: {preset: test-gpu, efficiency: {gemm: 0.9}}"}.text());
  EXPECT_EQ(s.hardware.efficiency.gemm, 0.9);
  EXPECT_EQ(s.hardware.efficiency.attention, 0.5);
  EXPECT_EQ(s.hardware.efficiency.memory, 0.8);  // proto default
  EXPECT_EQ(s.hardware.peak_flops_bf16, 1e15);   // "1000 TFLOPS"
  EXPECT_EQ(s.hardware.name, "test-gpu");
}

TEST(Loader, SetOverridesFileValues) {
  // tp 2 -> 1 and dp 2 -> 4 keeps tp*pp*dp = 8.
  const LoadedScenario s = load(Lines{}.text(), {"parallelism.tp=1", "parallelism.dp=4",
                                                 "topology.intra_node.bandwidth=300 GB/s",
                                                 "parallelism.stage_layers=[3, 1]"});
  EXPECT_EQ(s.parallel.tp, 1);
  EXPECT_EQ(s.parallel.dp, 4);
  EXPECT_EQ(s.proto.topology().intra_node().bandwidth(), 3e11);
  EXPECT_THAT(s.parallel.stage_layers, ::testing::ElementsAre(3, 1));
  EXPECT_EQ(format_location(s.sources.find("parallelism.tp")), "--set:1:16");
}

TEST(Loader, SetCreatesMissingSectionsAndLaterOverrideWins) {
  const LoadedScenario s = load(Lines{}.text(), {"fault_tolerance.node_failure_rate_per_day=0.01",
                                                 "fault_tolerance.checkpoint.interval_steps=20",
                                                 R"(fault_tolerance.checkpoint.save_time="4 s")",
                                                 "fault_tolerance.checkpoint.interval_steps=30"});
  EXPECT_EQ(s.proto.fault_tolerance().node_failure_rate_per_day(), 0.01);
  EXPECT_EQ(s.proto.fault_tolerance().checkpoint().interval_steps(), 30);
  EXPECT_EQ(s.proto.fault_tolerance().checkpoint().save_time(), 4.0);
}

TEST(Loader, SetCanSwitchThePreset) {
  // The file names test-model (8 heads, 4 KV heads); --set switches to test-moe (8 heads, MHA).
  const LoadedScenario s = load(Lines{.model = "model: {preset: test-model}"}.text(), {"model.preset=test-moe"});
  EXPECT_TRUE(s.model.is_moe());
  EXPECT_EQ(s.model.num_kv_heads, 8);
}

TEST(Loader, DerivedDefaultsAreFilled) {
  const LoadedScenario s =
      load(Lines{.model = "model: {preset: test-moe}",
                 .extra = "fault_tolerance: {node_failure_rate_per_day: 0.005}"}
               .text());
  const proto::Model& m = s.proto.model();
  EXPECT_EQ(m.num_kv_heads(), 8);                        // = num_attention_heads
  EXPECT_EQ(m.head_dim(), 32);                           // 256 / 8
  EXPECT_EQ(m.attention(), proto::MHA);                  // kv heads = heads
  EXPECT_EQ(m.moe().shared_expert_ffn_hidden_size(), 128);  // = expert_ffn_hidden_size
  const proto::Topology& t = s.proto.topology();
  EXPECT_EQ(t.nics_per_node(), 8);                       // = gpus_per_node (default 8)
  EXPECT_EQ(t.inter_supernode().bandwidth(), 5e10);      // = inter_node, "50 GB/s"
  const proto::FaultTolerance& f = s.proto.fault_tolerance();
  EXPECT_EQ(f.gpus_per_failure_unit(), 8);
  ASSERT_EQ(f.failure_classes_size(), 3);                // MoFa: 3:6:1 x 141/262/307 s
  EXPECT_EQ(f.failure_classes(0).name(), "process");
  EXPECT_EQ(f.failure_classes(0).weight(), 3);
  EXPECT_EQ(f.failure_classes(0).recovery(), 141);
  EXPECT_EQ(f.failure_classes(1).name(), "pod");
  EXPECT_EQ(f.failure_classes(1).weight(), 6);
  EXPECT_EQ(f.failure_classes(1).recovery(), 262);
  EXPECT_EQ(f.failure_classes(2).name(), "job");
  EXPECT_EQ(f.failure_classes(2).weight(), 1);
  EXPECT_EQ(f.failure_classes(2).recovery(), 307);
}

TEST(Loader, AttentionKindFollowsHeadCounts) {
  EXPECT_EQ(load(Lines{}.text()).model.attention, model::AttentionKind::kGqa);  // 8 heads, 4 KV heads
  const std::string mqa = "model: {num_layers: 4, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 1, "
                          "ffn_hidden_size: 1024, vocab_size: 1000, seq_length: 128}";
  EXPECT_EQ(load(Lines{.model = mqa, .parallelism = "parallelism: {pp: 2, dp: 4, global_batch: 16}"}.text())
                .model.attention,
            model::AttentionKind::kMqa);
}

TEST(Loader, PrecisionFp8BecomesTheTransformerEngineSpec) {
  const std::string hw = R"(hardware: {peak_bf16: "989 TFLOPS", peak_fp8: "1979 TFLOPS", gpu_memory: "80 GiB", )"
                         R"(hbm_bandwidth: "3.35 TB/s"})";
  const LoadedScenario te = load(Lines{.hardware = hw, .extra = "optimizations: {precision: fp8}"}.text());
  EXPECT_TRUE(te.features.fp8.enabled);
  EXPECT_EQ(te.features.fp8.recipe, model::Fp8Recipe::kDelayed);  // Megatron's and TE's default
  EXPECT_TRUE(te.features.fp8.fprop && te.features.fp8.dgrad && te.features.fp8.wgrad);
  EXPECT_FALSE(te.features.fp8.output_layer);
  EXPECT_EQ(te.features.compute_dtype, model::DType::kBf16);  // the rest stays BF16
  const LoadedScenario cs = load(Lines{.hardware = hw,
                                       .extra = "optimizations: {precision: fp8, fp8_recipe: current, fp8_wgrad: false, "
                                                "fp8_output_layer: true}"}
                                     .text());
  EXPECT_EQ(cs.features.fp8.recipe, model::Fp8Recipe::kCurrent);
  EXPECT_FALSE(cs.features.fp8.wgrad);
  EXPECT_TRUE(cs.features.fp8.output_layer);
  EXPECT_FALSE(load(Lines{}.text()).features.fp8.enabled);
}

TEST(Loader, ConvertsToRuntimeSpecs) {
  const LoadedScenario s = load(Lines{.parallelism = "parallelism: {tp: 2, pp: 2, vpp: 2, dp: 2, micro_batch: 2, "
                                                     "global_batch: 16, schedule: interleaved-1f1b, "
                                                     "sequence_parallel: true}",
                                      .extra = "optimizations: {recompute: selective, compute_dtype: bf16, "
                                               "pp_overlap: {enabled: true, alpha: 1.05, beta: 1.1}, "
                                               "optimizer: {distributed: true, state_dtype: bf16}, "
                                               "activation_offload: {enabled: false, alpha: 1.02}}"}
                                    .text());
  EXPECT_EQ(s.model.num_layers, 4);
  EXPECT_EQ(s.model.hidden_size, 256);
  EXPECT_EQ(s.model.num_attention_heads, 8);
  EXPECT_EQ(s.model.num_kv_heads, 4);
  EXPECT_EQ(s.model.head_dim, 32);
  EXPECT_EQ(s.model.ffn_hidden_size, 1024);
  EXPECT_EQ(s.model.vocab_size, 1000);
  EXPECT_EQ(s.model.seq_length, 128);
  EXPECT_EQ(s.hardware.gpu_memory_bytes, 85899345920.0);
  EXPECT_EQ(s.hardware.hbm_bandwidth, 3.35e12);
  EXPECT_EQ(s.parallel.gpus(), 8);
  EXPECT_EQ(s.parallel.vpp, 2);
  EXPECT_EQ(s.parallel.microbatches(), 4);  // 16 / (2 * 2)
  EXPECT_EQ(s.parallel.schedule, model::ScheduleKind::kInterleaved1F1B);
  EXPECT_TRUE(s.parallel.sequence_parallel);
  EXPECT_EQ(s.features.recompute, model::RecomputeKind::kSelective);
  EXPECT_TRUE(s.features.pp_overlap.enabled);
  EXPECT_EQ(s.features.pp_overlap.alpha, 1.05);
  EXPECT_EQ(s.features.pp_overlap.beta, 1.1);
  EXPECT_FALSE(s.features.dp_overlap.enabled);
  EXPECT_TRUE(s.features.distributed_optimizer);
  EXPECT_EQ(s.features.optimizer_state_dtype, model::DType::kBf16);
  EXPECT_EQ(s.features.activation_offload.alpha, 1.02);
  EXPECT_EQ(s.features.dp_bucket_bytes, 40e6);  // proto default
}

// Overlap interference: every overlap's alpha is at least sm_count / (sm_count − collective_sms)
// = 132 / 108 = 1.2222 (a larger given alpha is kept); the switch off leaves the given or 1.
TEST(Loader, OverlapAlphaDefaultsToTheInterferenceOfTheHardware) {
  const std::string hw = R"(hardware: {peak_bf16: "989 TFLOPS", gpu_memory: "80 GiB", hbm_bandwidth: "3.35 TB/s", )"
                         R"(kernels: {sm_count: 132}, collective_sms: 24})";
  const LoadedScenario on = load(
      Lines{.hardware = hw, .extra = "optimizations: {tp_overlap: {enabled: true}, dp_overlap: {enabled: true, alpha: 1.1}, "
                                     "cp_overlap: {enabled: true, alpha: 1.5}}"}
          .text());
  EXPECT_DOUBLE_EQ(on.features.tp_overlap.alpha, 132.0 / 108.0);
  EXPECT_DOUBLE_EQ(on.features.tp_overlap.beta, 1.0);
  EXPECT_DOUBLE_EQ(on.features.dp_overlap.alpha, 132.0 / 108.0);  // 1.1 is below the floor
  EXPECT_DOUBLE_EQ(on.features.cp_overlap.alpha, 1.5);
  EXPECT_DOUBLE_EQ(on.features.pp_overlap.alpha, 132.0 / 108.0);  // ready if a tuner turns it on
  const LoadedScenario off =
      load(Lines{.hardware = hw, .extra = "optimizations: {overlap_interference: false, tp_overlap: {enabled: true}, "
                                          "dp_overlap: {enabled: true, alpha: 1.1}}"}
               .text());
  EXPECT_DOUBLE_EQ(off.features.tp_overlap.alpha, 1.0);
  EXPECT_DOUBLE_EQ(off.features.dp_overlap.alpha, 1.1);
  EXPECT_FALSE(off.features.overlap_interference);
  // No SM counts: no interference.
  EXPECT_DOUBLE_EQ(load(Lines{.extra = "optimizations: {tp_overlap: {enabled: true}}"}.text()).features.tp_overlap.alpha,
                   1.0);
}

TEST(TrainingSteps, FromTokensRoundsUp) {
  // MoFa Table 5: 1e12 tokens / (256 sequences * 4096 tokens) = 953674.3 -> 953675 steps.
  proto::Scenario s;
  s.mutable_training()->set_tokens(1e12);
  s.mutable_parallelism()->set_global_batch(256);
  s.mutable_model()->set_seq_length(4096);
  EXPECT_EQ(training_steps(s), 953675);
  s.mutable_training()->clear_tokens();
  s.mutable_training()->set_steps(100);
  EXPECT_EQ(training_steps(s), 100);
  s.clear_training();
  EXPECT_THROW(training_steps(s), std::invalid_argument);
}

TEST(Loader, ReadsFilesAndNamesThemInErrors) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/loader_test_scenario.yaml";
  {
    std::ofstream out(path);
    out << Lines{.parallelism = "parallelism: {tp: 2, pp: 2, dp: 2, global_batch: 16, tpp: 1}"}.text();
  }
  try {
    (void)load_scenario(path, {}, test_presets());
    FAIL() << "expected a ScenarioError";
  } catch (const ScenarioError& e) {
    EXPECT_THAT(e.errors(), ::testing::ElementsAre(path + ":4:54: parallelism: unknown field 'tpp'; did you mean 'tp'?"));
  }
  std::filesystem::remove(path);
  try {
    (void)load_scenario(path, {}, test_presets());
    FAIL() << "expected a ScenarioError";
  } catch (const ScenarioError& e) {
    EXPECT_THAT(e.errors(), ::testing::ElementsAre(path + ": cannot read scenario file: No such file or directory"));
  }
}

TEST(PresetCatalog, FromDirectoryReadsModelsAndHardware) {
  const std::string root = std::string(MOFASIM_SOURCE_DIR) + "/test/scenario/data/presets";
  const PresetCatalog catalog = PresetCatalog::from_directory(root);
  EXPECT_THAT(catalog.names(PresetSection::kModel), ::testing::ElementsAre("dir-model"));
  EXPECT_THAT(catalog.names(PresetSection::kHardware), ::testing::ElementsAre("dir-gpu"));
  const LoadedScenario s = load_scenario_from_string(
      "model: {preset: dir-model}\nhardware: {preset: dir-gpu}\n" + std::string(testing::kTopologyLine) +
          "\nparallelism: {tp: 4, pp: 2, global_batch: 8}\n",
      "dir.yaml", {}, catalog);
  EXPECT_EQ(s.model.num_layers, 2);
  EXPECT_EQ(s.hardware.gpu_memory_bytes, 17179869184.0);  // 16 * 2^30
  EXPECT_THROW(PresetCatalog::from_directory(root + "/missing"), std::invalid_argument);
}

// The scenarios shipped in scenarios/ load with the presets embedded in the library.
TEST(ShippedScenarios, AllLoadWithEmbeddedPresets) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(MOFASIM_SOURCE_DIR) / "scenarios")) {
    const auto relative = fs::relative(entry.path(), fs::path(MOFASIM_SOURCE_DIR) / "scenarios").string();
    if (entry.is_regular_file() && entry.path().extension() == ".yaml" && !relative.starts_with("presets")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    try {
      const LoadedScenario s = load_scenario(file.string());
      EXPECT_GT(s.parallel.gpus(), 0) << file;
    } catch (const ScenarioError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(EmbeddedPresets, EveryShippedPresetIsEmbedded) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(MOFASIM_SOURCE_DIR) / "scenarios" / "presets";
  const PresetCatalog& embedded = PresetCatalog::embedded();
  for (const auto& [folder, section] : {std::pair{"models", PresetSection::kModel},
                                        std::pair{"hardware", PresetSection::kHardware}}) {
    if (!fs::is_directory(root / folder)) continue;
    for (const auto& entry : fs::directory_iterator(root / folder)) {
      if (entry.path().extension() != ".yaml") continue;
      const PresetFile* preset = embedded.find(section, entry.path().stem().string());
      ASSERT_NE(preset, nullptr) << entry.path() << " is not embedded; re-run cmake";
      EXPECT_EQ(preset->file, "scenarios/presets/" + std::string(folder) + "/" + entry.path().filename().string());
    }
  }
}

TEST(Loader, SlidingWindowFieldsLoadWhateverTheChunksMix) {
  const std::string windowed =
      "model: {num_layers: 4, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, ffn_hidden_size: 1024, "
      "vocab_size: 1000, seq_length: 128, window_size: 16, window_attn_skip_freq: ";
  const LoadedScenario s = load(Lines{.model = windowed + "2}"}.text());
  EXPECT_EQ(s.model.window_size, 16);
  EXPECT_EQ(s.model.window_attn_skip_freq, 2);
  EXPECT_FALSE(model::window_mix_differs(s.model, s.parallel));
  // pp 2 puts 2 layers on each chunk: a frequency of 4 mixes them unevenly (layer 3 is the only
  // full one), which the plan prices layer by layer (model/attention_window.h).
  const LoadedScenario uneven = load(Lines{.model = windowed + "4}"}.text());
  EXPECT_TRUE(model::window_mix_differs(uneven.model, uneven.parallel));
}

// The window mix is read off the layers as the model splits them: with
// account_for_embedding_in_pipeline_split 8 layers + the embedding over pp 3 are 3 per chunk, the
// first one fewer: {2, 3, 3}. A frequency of 2 mixes the 3-layer chunks unevenly.
TEST(Loader, SlidingWindowMixUsesTheModelsLayerSplit) {
  const std::string windowed =
      "model: {num_layers: 8, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, ffn_hidden_size: 1024, "
      "vocab_size: 1000, seq_length: 128, window_size: 16, window_attn_skip_freq: ";
  const std::string six_gpus = R"(topology: {gpus: 6, gpus_per_node: 6, intra_node: {bandwidth: "400 GB/s"}, inter_node: {bandwidth: "50 GB/s"}})";
  const LoadedScenario mixed = load(Lines{.model = windowed + "2}",
                                          .topology = six_gpus,
                                          .parallelism = "parallelism: {tp: 2, pp: 3, dp: 1, global_batch: 16, "
                                                         "account_for_embedding_in_pipeline_split: true}"}
                                        .text());
  EXPECT_TRUE(model::window_mix_differs(mixed.model, mixed.parallel));
  // 6 layers + the embedding + the loss over pp 2: 4 per chunk, both ends one fewer: {3, 3}, which a
  // frequency of 3 splits into the same mix on both chunks.
  const std::string six_layers =
      "model: {num_layers: 6, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, ffn_hidden_size: 1024, "
      "vocab_size: 1000, seq_length: 128, window_size: 16, window_attn_skip_freq: 3}";
  const LoadedScenario s = load(Lines{.model = six_layers,
                                      .parallelism = "parallelism: {tp: 2, pp: 2, dp: 2, global_batch: 16, "
                                                     "account_for_embedding_in_pipeline_split: true, "
                                                     "account_for_loss_in_pipeline_split: true}"}
                                    .text());
  const std::vector<model::ChunkLayers> chunks = model::chunk_layers(s.model, s.parallel);
  ASSERT_EQ(chunks.size(), 2U);
  EXPECT_EQ(chunks[0].num_layers, 3);
  EXPECT_EQ(chunks[1].num_layers, 3);
  EXPECT_FALSE(model::window_mix_differs(s.model, s.parallel));
}

}  // namespace
}  // namespace mofasim::scenario
