// Predicted-versus-measured error statistics: per-row absolute percentage error, and per subset
// the mean (MAPE), median and maximum, with the subsets a measurement campaign is reported by
// (single node; multi-node, and multi-node per model size).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/analysis/measured_reader.h"
#include "sim/analysis/step_prediction.h"

namespace mofasim::analysis {

// One row with its prediction.
struct MeasuredComparison {
  MeasuredRow row{};
  std::string subset{};      // measured_subset(row, ...)
  double predicted_s = 0;
  std::optional<PredictedBreakdown> breakdown{};  // where predicted_s goes (StepPrediction)

  // (predicted − measured) / measured × 100: positive when the model is slow.
  [[nodiscard]] double signed_percent_error() const {
    return (predicted_s - row.iteration_time_s) / row.iteration_time_s * 100.0;
  }
  [[nodiscard]] double abs_percent_error() const {
    const double e = signed_percent_error();
    return e < 0 ? -e : e;
  }
};

struct ErrorStats {
  int count = 0;
  double mape = 0;        // mean absolute percentage error, in percent
  double median_ape = 0;  // median absolute percentage error (mean of the middle two when even)
  double max_ape = 0;
  double mean_signed = 0; // mean signed percentage error (bias; positive = over-predicted)
};

// Statistics of absolute percentage errors `ape` with signed errors `signed_pe` (same length).
// An empty input gives count 0 and zeros.
ErrorStats error_stats(std::span<const double> ape, std::span<const double> signed_pe);
ErrorStats error_stats(std::span<const MeasuredComparison> rows);

// "single-node" when the run fits one node (gpus <= gpus_per_node); otherwise "multi-node 3.6B"
// style when the row gives its parameter count (billions, printed with up to 4 significant
// digits), else "multi-node".
std::string measured_subset(const MeasuredRow& row, int gpus_per_node);

struct SubsetStats {
  std::string name;
  ErrorStats stats;
};

// In this order: "all"; "single-node" and "multi-node" (every multi-node row) when present; then
// each "multi-node <size>" subset by increasing size. Deterministic for a given input.
std::vector<SubsetStats> subset_stats(std::span<const MeasuredComparison> rows);

// The stats of the subset named `name` in `stats`, or count 0 when absent.
ErrorStats find_subset(std::span<const SubsetStats> stats, const std::string& name);

}  // namespace mofasim::analysis
