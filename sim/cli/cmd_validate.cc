// `mofasim validate SCENARIO...`: the analytic MoFa model and the step simulation side by side,
// field by field, with the relative difference and a flag beyond --tolerance. With
// `--measured FILE.csv` it instead compares predictions with measured iteration times (one row per
// run; see docs/validation-measured.md for the column mapping), or, for the open validation set's
// runs.csv (told by its header), each published run in its own measured quantity.
#include <iostream>

#include "sim/analysis/compare.h"
#include "sim/analysis/measured_open_validate.h"
#include "sim/analysis/measured_validate.h"
#include "sim/analysis/step_prediction_json.h"
#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/mpi_world.h"
#include "sim/cli/output_files.h"
#include "sim/scenario/scenario_specs.h"
#include "sim/progress/progress_reporter.h"
#include "sim/cli/shard_options.h"

namespace mofasim::cli {

namespace {

// A row of a --shard document: {"step_s", "breakdown"} (the breakdown when the predictor gave one).
nlohmann::json shard_value(const analysis::MeasuredComparison& c) {
  nlohmann::json v = {{"step_s", c.predicted_s}};
  if (c.breakdown) v["breakdown"] = analysis::breakdown_json(*c.breakdown);
  return v;
}

// The prediction of row `row` back from a merged shard value; a UsageError when it is not one.
analysis::StepPrediction prediction_from_shard(const nlohmann::json& v, std::size_t row) {
  const auto bad = [&] {
    return UsageError("mofasim validate: --merge: row " + std::to_string(row) +
                      " is not a step prediction (a shard of another mofasim version?)");
  };
  if (!v.is_object() || !v.contains("step_s") || !v.at("step_s").is_number()) throw bad();
  analysis::StepPrediction p{.step_s = v.at("step_s").get<double>()};
  if (v.contains("breakdown")) {
    const nlohmann::json& b = v.at("breakdown");
    analysis::PredictedBreakdown parts;
    for (const analysis::BreakdownField& f : analysis::kBreakdownFields) {
      if (!b.is_object() || !b.contains(f.name) || !b.at(f.name).is_number()) throw bad();
      parts.*f.seconds = b.at(f.name).get<double>();
    }
    p.breakdown = parts;
  }
  return p;
}

// `validate --measured --json`: each row with its prediction and error, the subset statistics
// and the files written.
nlohmann::json measured_json(const analysis::MeasuredValidation& v, const analysis::MeasuredValidateOptions& o,
                             const std::string& predictor) {
  nlohmann::json rows = nlohmann::json::array();
  for (const analysis::MeasuredComparison& c : v.rows) {
    nlohmann::json row = {{"source", c.row.source},
                          {"line", c.row.line},
                          {"subset", c.subset},
                          {"gpus", c.row.gpus},
                          {"tp", c.row.tp},
                          {"dp", c.row.dp},
                          {"pp", c.row.pp},
                          {"measured_s", c.row.iteration_time_s},
                          {"predicted_s", c.predicted_s},
                          {"error_percent", c.signed_percent_error()}};
    if (c.breakdown) row["breakdown"] = analysis::breakdown_json(*c.breakdown);  // where predicted_s goes
    rows.push_back(std::move(row));
  }
  nlohmann::json subsets = nlohmann::json::array();
  for (const analysis::SubsetStats& s : v.stats) {
    subsets.push_back({{"subset", s.name},
                       {"rows", s.stats.count},
                       {"mape_percent", s.stats.mape},
                       {"median_ape_percent", s.stats.median_ape},
                       {"max_ape_percent", s.stats.max_ape},
                       {"bias_percent", s.stats.mean_signed}});
  }
  nlohmann::json j = {{"predictor", predictor}, {"rows", rows}, {"subsets", subsets}};
  if (o.csv_path) j["csv"] = *o.csv_path;
  if (o.svg_path) j["svg"] = *o.svg_path;
  return j;
}

}  // namespace

int run_validate(const Args& args) {
  CommonOptions common;
  std::vector<std::string> paths;
  double tolerance = 0.01;
  std::string fidelity = "folded";
  std::vector<std::string> measured;
  std::vector<std::string> mapping;
  std::string predictor = "simulated";
  std::string csv_path;
  std::string svg_path;
  bool quiet = false;
  ShardOptions sharding;
  po::options_description desc("options");
  add_common_options(desc, common);
  desc.add_options()("quiet,q", po::bool_switch(&quiet), "no progress line on stderr (it is shown only on a terminal)");
  add_shard_options(desc, sharding, "measured rows (with --measured)");
  desc.add_options()("tolerance", po::value<double>(&tolerance)->default_value(tolerance),
                     "flag fields whose relative difference exceeds this (0.01 = 1%)")(
      "fidelity", po::value<std::string>(&fidelity)->default_value(fidelity), "simulation fidelity: full or folded")(
      "measured", po::value<std::vector<std::string>>(&measured)->composing(),
      "compare with measured runs in this CSV instead: vTrain's format (with --mapping) or the open "
      "set's runs.csv, told by the header (repeatable)")(
      "mapping", po::value<std::vector<std::string>>(&mapping)->composing(),
      "with --measured: 'column=field' for a CSV whose headers differ (repeatable)")(
      "predictor", po::value<std::string>(&predictor)->default_value(predictor),
      "with --measured: simulated (step simulation) or analytic (closed form)")(
      "csv", po::value<std::string>(&csv_path), "with --measured: write one row per run to this CSV")(
      "svg", po::value<std::string>(&svg_path), "with --measured: write the predicted-vs-measured scatter")(
      "scenario", po::value<std::vector<std::string>>(&paths), "scenario YAML files");
  po::positional_options_description pos;
  pos.add("scenario", -1);
  po::variables_map vm;
  parse_command_line("validate", args, desc, pos, vm);
  if (common.help) {
    print_command_help("validate", "SCENARIO.yaml... [--tolerance X] [--json]  |  --measured FILE.csv [--csv OUT] [--svg OUT] [--json] [-q] [--shard i/n | --merge FILES...]", desc);
    return 0;
  }

  if (!measured.empty()) {
    if (!paths.empty()) throw UsageError("mofasim validate: give scenarios or --measured, not both");
    analysis::MeasuredValidateOptions options{.measured = measured, .mapping = mapping};
    options.progress = progress::stderr_callback("validate", "rows", quiet);
    if (predictor == "analytic") {
      options.predictor = analysis::MeasuredPredictorKind::kAnalytic;
    } else if (predictor != "simulated") {
      throw UsageError("mofasim validate: --predictor must be simulated or analytic, got '" + predictor + "'");
    }
    check_outputs("validate", {{"--csv", csv_path}, {"--svg", svg_path}}, measured);
    if (!csv_path.empty()) options.csv_path = csv_path;
    if (!svg_path.empty()) options.svg_path = svg_path;
    // The open validation set (runs.csv) is told from vTrain's format by its header.
    if (analysis::measured_files_are_open_set(measured)) {
      if (!mapping.empty()) throw UsageError("mofasim validate: --mapping: the open-set format is read as it is");
      if (!sharding.shard.empty() || !sharding.merge.empty()) {
        throw UsageError("mofasim validate: --shard/--merge: not available for the open-set format");
      }
      // Under mpirun rank 0 runs the whole set (175 rows take under a second); the others print nothing.
      if (mpi_world().rank != 0) return 0;
      return analysis::validate_open_command(options, std::cout, common.json);
    }
    // Shards split the measured rows; a merge takes their predictions and reports as one run.
    const nlohmann::json run_id = {{"predictor", predictor}, {"mapping", mapping}};
    const std::string kind = "mofasim.measured_shard";
    const ShardOutcome sharded = run_sharded("validate", sharding, [&](int index, int count) {
      analysis::MeasuredValidateOptions part = options;
      part.shard_index = index;
      part.shard_count = count;
      const analysis::MeasuredValidation v = analysis::run_measured_validation(part);
      nlohmann::json predicted = nlohmann::json::array();
      for (const analysis::MeasuredComparison& c : v.rows) predicted.push_back(shard_value(c));
      return row_shard_document(kind, run_id, v.total_rows, v.first_row, std::move(predicted));
    });
    if (sharded.done) return 0;
    if (!sharded.single) {
      options.predictions.emplace();
      const std::vector<nlohmann::json> values = merge_row_shards("validate", sharded.documents, kind, run_id);
      for (std::size_t r = 0; r < values.size(); ++r) options.predictions->push_back(prediction_from_shard(values[r], r));
    }
    if (common.json) {
      std::cout << measured_json(analysis::run_measured_validation(options), options, predictor).dump(2) << "\n";
      return 0;
    }
    return analysis::validate_measured_command(options, std::cout);
  }

  if (!sharding.shard.empty() || !sharding.merge.empty()) {
    throw UsageError("mofasim validate: --shard and --merge split --measured rows; a scenario validation is one job");
  }
  if (paths.empty()) throw UsageError("mofasim validate: missing SCENARIO.yaml (see: mofasim validate --help)");
  if (!(tolerance >= 0)) throw UsageError("mofasim validate: --tolerance must be >= 0");
  analysis::ValidateOptions options{.compare = {.tolerance = tolerance}};
  if (fidelity == "full") {
    options.fidelity = executor::Fidelity::kFull;
  } else if (fidelity != "folded") {
    throw UsageError("mofasim validate: --fidelity must be full or folded, got '" + fidelity + "'");
  }
  std::vector<analysis::ValidationReport> reports;
  for (const std::string& path : paths) {
    // One line per scenario: the analytic side is instant, the replay is what can take seconds.
    options.progress = progress::stderr_callback("replay", "tasks", quiet);
    reports.push_back(analysis::validate_scenario(load_checked(path, common.sets), options));
  }
  if (common.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : reports) j.push_back(analysis::to_json(r));
    std::cout << (reports.size() == 1 ? j[0] : j).dump(2) << "\n";
  } else {
    for (const auto& r : reports) std::cout << analysis::to_table(r) << "\n";
    if (reports.size() > 1) std::cout << analysis::summary_table(reports);
  }
  return 0;
}

}  // namespace mofasim::cli
