// `mofasim validate --measured runs.csv` on the open validation set (format detected from the
// header, measured_open_reader.h): every row the schema can express is predicted with the step
// simulation (or the analytic model) on the shipped presets and compared in its own measured
// quantity; every other row is listed with its reasons. Reported per split (fit / test, declared in
// measured_open_mapping.h), per source, per GPU and dense / MoE: rows, MAPE, median, max and the
// signed bias; with --csv (one line per row with the predicted step's breakdown, the unexpressed
// ones with their reasons), --svg (predicted vs measured step time) and --json.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analysis/measured_compare.h"
#include "sim/analysis/measured_open_mapping.h"
#include "sim/analysis/measured_validate.h"

namespace mofasim::analysis {

struct OpenComparison {
  OpenRun run{};
  OpenCase mapped{};
  std::optional<double> predicted_step_s{};  // set when the row was predicted
  std::optional<PredictedBreakdown> breakdown{};  // where predicted_step_s goes (if the predictor says)
  double predicted_value = 0;                // in the row's quantity
  double measured_step_s = 0;                // the measured value as a step time (0 when not comparable)

  [[nodiscard]] bool predicted() const { return predicted_step_s.has_value(); }
  // (predicted - measured) / measured x 100 in the row's quantity.
  [[nodiscard]] double error_percent() const;
  // The same, signed so that + means the model predicts a slower run (longer step, lower throughput).
  [[nodiscard]] double slower_percent() const;
};

struct OpenGroupStats {
  std::string grouping;  // "all", "split", "source", "gpu", "kind"
  std::string name;      // "all", "fit", "O-ILM", "A100-SXM4-80GB", "dense", ...
  ErrorStats stats;      // mean_signed = mean slower_percent
};

struct OpenValidation {
  std::vector<OpenComparison> rows;  // every row, in file order
  std::vector<OpenGroupStats> stats; // over predicted rows; groups without one are left out (not "all")
  // Each reason with the ids of the rows it applies to (a row is under every reason it has),
  // by decreasing row count, then alphabetically.
  std::vector<std::pair<std::string, std::vector<std::string>>> not_expressible;
  [[nodiscard]] int predicted_count() const;
};

// True when `path` holds the open-set format (the first file decides; measured_files_are_open_set
// checks that all agree).
bool measured_file_is_open_set(const std::string& path);
// True when every file is in the open-set format, false when none is; an InputError naming both
// files when they mix formats.
bool measured_files_are_open_set(const std::vector<std::string>& paths);

// Reads `paths` (InputError on bad input, located), maps every row, predicts the expressible ones.
OpenValidation run_open_validation(const std::vector<std::string>& paths, const StepPredictor& predict,
                                   const std::function<void(std::int64_t, std::int64_t)>& progress = {});

// The grouping tables and the list of rows not expressed, as Markdown.
std::string open_report_markdown(const OpenValidation& v);
// One line per row: id,split,source,gpu,kind,gpus,quantity,measured,predicted,error_percent,
// measured_step_s,predicted_step_s,compute_s,recompute_s,tp_s,cp_s,ep_s,pp_comm_s,dp_s,offload_s,
// pp_bubble_s,optimizer_s (the predicted step's breakdown, step_prediction.h: it sums to
// predicted_step_s),not_expressible (the reasons joined by "; ").
void write_open_csv(std::ostream& out, const OpenValidation& v);
nlohmann::json open_json(const OpenValidation& v, const std::string& predictor);
// Predicted against measured step time of the predicted rows, log-log (single- and multi-node colours).
std::string open_scatter_svg(const OpenValidation& v, const std::string& predictor);

// The command on an open-set file: run_open_validation with options.predictor, the CSV and SVG
// when asked, then the report (Markdown or, with json, one JSON document) on `out`. Returns 0.
int validate_open_command(const MeasuredValidateOptions& options, std::ostream& out, bool json);

}  // namespace mofasim::analysis
