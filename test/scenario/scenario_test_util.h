// Shared inputs of the scenario loader tests: a small valid scenario written one section per line
// (so a test that replaces a line knows every line and column), and a preset catalog defined
// inline, independent of the shipped presets in scenarios/presets/.
#pragma once

#include <string>
#include <vector>

#include "sim/scenario/loader.h"

namespace mofasim::scenario::testing {

inline constexpr char kModelLine[] =
    "model: {num_layers: 4, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, ffn_hidden_size: 1024, "
    "vocab_size: 1000, seq_length: 128}";
inline constexpr char kHardwareLine[] =
    R"(hardware: {peak_bf16: "989 TFLOPS", gpu_memory: "80 GiB", hbm_bandwidth: "3.35 TB/s"})";
inline constexpr char kTopologyLine[] =
    R"(topology: {gpus: 8, intra_node: {bandwidth: "400 GB/s"}, inter_node: {bandwidth: "50 GB/s"}})";
inline constexpr char kParallelismLine[] = "parallelism: {tp: 2, pp: 2, dp: 2, global_batch: 16}";

// Line 1 model, 2 hardware, 3 topology, 4 parallelism, 5+ extra. Replace any line by name.
struct Lines {
  std::string model = kModelLine;
  std::string hardware = kHardwareLine;
  std::string topology = kTopologyLine;
  std::string parallelism = kParallelismLine;
  std::string extra{};

  [[nodiscard]] std::string text() const {
    return model + "\n" + hardware + "\n" + topology + "\n" + parallelism + "\n" + extra + (extra.empty() ? "" : "\n");
  }
};

// test-model: the base model as a preset; test-moe: a MoE variant; broken: a preset with errors;
// test-gpu: a hardware preset.
inline PresetCatalog test_presets() {
  PresetCatalog catalog;
  catalog.add({.section = PresetSection::kModel,
               .name = "test-model",
               .file = "presets/models/test-model.yaml",
               .text = "num_layers: 4\n"
                       "hidden_size: 256\n"
                       "num_attention_heads: 8\n"
                       "num_kv_heads: 4\n"
                       "ffn_hidden_size: 1024\n"
                       "vocab_size: 1000\n"
                       "seq_length: 128\n"});
  catalog.add({.section = PresetSection::kModel,
               .name = "test-moe",
               .file = "presets/models/test-moe.yaml",
               .text = "num_layers: 4\n"
                       "hidden_size: 256\n"
                       "num_attention_heads: 8\n"
                       "ffn_hidden_size: 1024\n"
                       "vocab_size: 1000\n"
                       "seq_length: 128\n"
                       "moe: {num_experts: 8, top_k: 2, expert_ffn_hidden_size: 128, first_k_dense_layers: 1}\n"});
  catalog.add({.section = PresetSection::kModel,
               .name = "broken",
               .file = "presets/models/broken.yaml",
               .text = "num_layers: -4\n"
                       "hiden_size: 256\n"});
  catalog.add({.section = PresetSection::kHardware,
               .name = "test-gpu",
               .file = "presets/hardware/test-gpu.yaml",
               .text = "name: test-gpu\n"
                       "peak_bf16: \"1000 TFLOPS\"\n"
                       "gpu_memory: \"80 GiB\"\n"
                       "hbm_bandwidth: \"3 TB/s\"\n"
                       "efficiency: {gemm: 0.7, attention: 0.5}\n"});
  return catalog;
}

// The error lines of loading `text` as "bad.yaml", or {"(loaded)"} when it loads.
inline std::vector<std::string> errors_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    (void)load_scenario_from_string(text, "bad.yaml", overrides, test_presets());
  } catch (const ScenarioError& e) {
    return e.errors();
  }
  return {"(loaded)"};
}

}  // namespace mofasim::scenario::testing
