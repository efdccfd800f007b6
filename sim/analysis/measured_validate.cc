// The measured-validation command: read, predict, summarise, write CSV/SVG.
#include "sim/analysis/measured_validate.h"

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/analysis/measured_calibration.h"
#include "sim/analysis/measured_compare.h"
#include "sim/analysis/measured_report.h"

namespace mofasim::analysis {
namespace {

const char* predictor_name(MeasuredPredictorKind kind) {
  return kind == MeasuredPredictorKind::kSimulated ? "simulated" : "analytic";
}

std::ofstream open_output(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot open for writing");
  return out;
}

}  // namespace

MeasuredValidation run_measured_validation(const MeasuredValidateOptions& options) {
  if (options.measured.empty()) {
    throw std::invalid_argument("--measured: give at least one CSV file of measured iteration times");
  }
  const ColumnMapping mapping = ColumnMapping::with_overrides(options.mapping);
  std::vector<MeasuredRow> rows;
  for (const std::string& path : options.measured) {
    std::vector<MeasuredRow> part = read_measured_csv(path, mapping);
    rows.insert(rows.end(), part.begin(), part.end());
  }
  const MeasuredConditions conditions = options.conditions ? *options.conditions : vtrain_a100_calibrated_conditions();
  StepPredictor predict = options.predictor == MeasuredPredictorKind::kSimulated ? simulated_step_predictor()
                                                                                 : analytic_step_predictor();
  MeasuredValidation v;
  v.total_rows = rows.size();
  const bool shard = options.shard_count > 1;
  if (options.shard_count < 1 || options.shard_index < 0 || options.shard_index >= options.shard_count) {
    throw std::invalid_argument("--shard: must be i/n with 0 <= i < n");
  }
  if (shard) {
    const std::size_t n = rows.size();
    const auto count = static_cast<std::size_t>(options.shard_count);
    const auto index = static_cast<std::size_t>(options.shard_index);
    v.first_row = n * index / count;
    rows = std::vector<MeasuredRow>(rows.begin() + static_cast<std::ptrdiff_t>(v.first_row),
                                    rows.begin() + static_cast<std::ptrdiff_t>(n * (index + 1) / count));
  }
  if (options.predictions) {
    if (options.predictions->size() != rows.size()) {
      throw std::invalid_argument("the merged shards predict " + std::to_string(options.predictions->size()) +
                                  " rows, the measured files hold " + std::to_string(rows.size()));
    }
    // compare_measured predicts the rows in input order.
    predict = [next = std::size_t{0}, &given = *options.predictions](const MeasuredCase&) mutable { return given[next++]; };
  }
  std::int64_t predicted = 0;
  const auto total = static_cast<std::int64_t>(rows.size());
  const StepPredictor counted = [&](const MeasuredCase& c) {
    const StepPrediction s = predict(c);
    if (options.progress) options.progress(++predicted, total);
    return s;
  };
  v.rows = compare_measured(rows, conditions, counted);
  if (options.progress) options.progress(total, total);  // ends the line even if a row was not predicted
  v.stats = subset_stats(v.rows);
  if (shard) return v;
  if (options.csv_path) {
    std::ofstream out = open_output(*options.csv_path);
    write_comparison_csv(out, v.rows, predictor_name(options.predictor));
    out.close();  // flushes: a full disk shows here, not silently in the destructor
    if (!out) throw std::runtime_error(*options.csv_path + ": write failed");
  }
  if (options.svg_path) {
    std::ofstream out = open_output(*options.svg_path);
    out << scatter_svg(v.rows, {.title = std::string("Iteration time, ") + predictor_name(options.predictor) +
                                         " vs measured",
                                .y_label = std::string(predictor_name(options.predictor)) + " (ms)"});
    out.close();
    if (!out) throw std::runtime_error(*options.svg_path + ": write failed");
  }
  return v;
}

int validate_measured_command(const MeasuredValidateOptions& options, std::ostream& out) {
  const MeasuredValidation v = run_measured_validation(options);
  out << "Measured iteration times: " << v.rows.size() << " rows, predictor: " << predictor_name(options.predictor)
      << "\n\n";
  out << subset_table_markdown(v.stats);
  if (options.csv_path) out << "\nper-row CSV: " << *options.csv_path << '\n';
  if (options.svg_path) out << "scatter SVG: " << *options.svg_path << '\n';
  return 0;
}

}  // namespace mofasim::analysis
