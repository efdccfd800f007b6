// Which framework a measured row comes from (measured_open_framework.h).
#include "sim/analysis/measured_open_framework.h"

#include <array>
#include <utility>

#include "sim/analysis/measured_open_text.h"

namespace mofasim::analysis {
namespace {

// The words a source column uses for each framework, first match wins: AutoModel before NeMo (its
// repository is NVIDIA-NeMo/Automodel), Megatron-LLaMA before any other Megatron.
SourceFramework framework_named_in(const std::string& source) {
  if (has(source, "automodel")) return SourceFramework::kAutomodel;
  if (has(source, "megatron-llama")) return SourceFramework::kMegatronLlama;
  if (has(source, "torchtitan")) return SourceFramework::kTorchtitan;
  if (has(source, "simumax")) return SourceFramework::kSimuMaxMegatron;
  if (has_any(source, {"internlm", "internevo"})) return SourceFramework::kInternEvo;
  if (has(source, "dao-ailab/flash-attention")) return SourceFramework::kFlashAttentionGpt;
  // MLPerf Training's GPU submissions for GPT-3 and Llama 3.1 405B all run NVIDIA's NeMo /
  // Megatron-Core reference implementation (training_results_v4.x/v5.x */benchmarks/gpt3,
  // llama31_405b: implementations/nemo), whoever submitted them.
  if (has_any(source, {"megatron-bridge", "nvidia-nemo/nemo", "nvidia/nemo", "nemo-framework", "nemo framework",
                       "mlcommons/training_results", "mlperf"})) {
    return SourceFramework::kNvidiaMegatron;
  }
  return SourceFramework::kUnknown;
}

SourceFramework framework_of_open_group(const std::string& group) {
  static const std::array<std::pair<const char*, SourceFramework>, 9> kGroups = {{
      {"O-SMXB", SourceFramework::kSimuMaxMegatron},
      {"O-SMXA", SourceFramework::kSimuMaxMegatron},
      {"O-ILM", SourceFramework::kInternEvo},
      {"O-FA", SourceFramework::kFlashAttentionGpt},
      {"O-MBR", SourceFramework::kNvidiaMegatron},
      {"O-MLP", SourceFramework::kNvidiaMegatron},
      {"O-AM", SourceFramework::kAutomodel},
      {"O-MLL", SourceFramework::kMegatronLlama},
      {"O-TT", SourceFramework::kTorchtitan},
  }};
  for (const auto& [name, framework] : kGroups) {
    if (group == name) return framework;
  }
  return SourceFramework::kUnknown;
}

}  // namespace

SourceFramework source_framework(const OpenRun& run) {
  const SourceFramework named = framework_named_in(run.source);
  return named != SourceFramework::kUnknown ? named : framework_of_open_group(run.source_group());
}

}  // namespace mofasim::analysis
