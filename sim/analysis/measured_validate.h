// `mofasim validate --measured FILE.csv [--mapping column=field ...] [--csv OUT] [--svg OUT]`:
// reads measured iteration times, predicts each row with the step simulation (or the analytic
// MoFa model) under the campaign's conditions, and reports the error per row and per subset.
// The default conditions are vTrain's A100 cluster with the stored single-node fit
// (measured_calibration.h); see docs/validation-measured.md.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/analysis/measured_specs.h"
#include "sim/analysis/measured_stats.h"
#include "sim/analysis/step_prediction.h"

namespace mofasim::analysis {

enum class MeasuredPredictorKind { kSimulated, kAnalytic };

struct MeasuredValidateOptions {
  std::vector<std::string> measured{};   // CSV files, read in order (--measured, repeatable)
  std::vector<std::string> mapping{};    // "column=field" entries (--mapping, repeatable)
  MeasuredPredictorKind predictor = MeasuredPredictorKind::kSimulated;
  // The campaign's conditions; unset = vtrain_a100_calibrated_conditions().
  std::optional<MeasuredConditions> conditions{};
  std::optional<std::string> csv_path{};  // per-row CSV (--csv)
  std::optional<std::string> svg_path{};  // log-log scatter (--svg)
  // If set: (rows predicted, rows in all) after each row's prediction (a step simulation each
  // with the simulated predictor).
  std::function<void(std::int64_t, std::int64_t)> progress{};
  // A shard (--shard i/n): predict only rows [i*R/n, (i+1)*R/n) of the R rows of all the files, and
  // write no CSV or SVG. MeasuredValidation::first_row / total_rows say which.
  int shard_index = 0;
  int shard_count = 1;
  // Predictions already made (merged shards): every row's step time and breakdown in order;
  // nothing is predicted again. std::invalid_argument when their number is not the number of rows.
  std::optional<std::vector<StepPrediction>> predictions{};
};

struct MeasuredValidation {
  std::vector<MeasuredComparison> rows;
  std::vector<SubsetStats> stats;
  std::size_t first_row = 0;   // of a shard, in the rows of all the files
  std::size_t total_rows = 0;  // in all the files
};

// Reads, predicts and summarises; writes the CSV and SVG when asked. Throws std::invalid_argument
// on bad input (no file, unreadable file, bad mapping or row: file:line and column) and
// std::runtime_error when an output file cannot be written.
MeasuredValidation run_measured_validation(const MeasuredValidateOptions& options);

// The command: run_measured_validation, then the subset table (Markdown) and the files written
// on `out`. Returns the exit code (0).
int validate_measured_command(const MeasuredValidateOptions& options, std::ostream& out);

}  // namespace mofasim::analysis
