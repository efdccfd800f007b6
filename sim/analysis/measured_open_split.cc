// Uneven pipeline splits of the open set's sources (see measured_open_split.h).
#include "sim/analysis/measured_open_split.h"

#include <regex>

namespace mofasim::analysis {

std::optional<std::vector<int>> automodel_split(int layers, int chunks) {
  if (chunks < 1 || chunks > layers) return std::nullopt;
  std::vector<int> split(static_cast<std::size_t>(chunks), layers / chunks);
  for (int i = 0; i < layers % chunks; ++i) split[static_cast<std::size_t>(i)] += 1;
  return split;
}

bool apply_open_source_split(SourceFramework framework, int layers, model::ParallelSpec& parallel) {
  if (framework == SourceFramework::kNvidiaMegatron) {
    parallel.account_for_embedding = true;
    parallel.account_for_loss = true;
    return true;
  }
  if (framework == SourceFramework::kAutomodel) {
    std::optional<std::vector<int>> split = automodel_split(layers, parallel.pp * parallel.vpp);
    if (!split) return false;
    parallel.stage_layers = std::move(*split);
    return true;
  }
  return false;
}

std::optional<int> automodel_pipeline_flushes(const std::string& notes, int global_batch, int dp) {
  static const std::regex kLocalBatch(R"(local batch (\d{1,9}))");
  std::smatch m;
  if (!std::regex_search(notes, m, kLocalBatch)) return std::nullopt;
  const long long local = std::stoll(m[1].str());
  const long long per_flush = local * dp;
  if (local < 1 || dp < 1 || global_batch < per_flush || global_batch % per_flush != 0) return std::nullopt;
  return static_cast<int>(global_batch / per_flush);
}

StepPrediction repeat_pipeline_flushes(const StepPrediction& one, int flushes) {
  if (flushes <= 1) return one;
  StepPrediction out = one;
  if (!one.breakdown) {
    out.step_s = one.step_s * flushes;
    return out;
  }
  const double optimizer = one.breakdown->optimizer;
  out.step_s = (one.step_s - optimizer) * flushes + optimizer;
  for (const BreakdownField& f : kBreakdownFields) {
    if (f.seconds != &PredictedBreakdown::optimizer) (*out.breakdown).*f.seconds *= flushes;
  }
  return out;
}

}  // namespace mofasim::analysis
