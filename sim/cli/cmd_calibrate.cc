// `mofasim calibrate MEASUREMENTS.csv`: fits a device's uncertain efficiencies (MoFa §5.7) to
// measured step times. The CSV holds `scenario_path,step_time_s` rows (paths relative to the CSV's
// folder); every scenario is loaded as usual, the chosen parameters are fitted once for all rows
// (bounded Nelder-Mead, deterministic), and the fitted values, the residual of every row and the
// hardware YAML to paste into a preset are printed.
//
// Spreading the work: every objective evaluation predicts every row, and the next evaluation
// depends on all of them, so the shards of one fit must meet at each evaluation. Under mpirun the
// ranks do (all_gather). A job array does it through a shared folder: `--shard i/n --exchange DIR`
// (all n tasks at once) predicts rows [i*R/n, (i+1)*R/n) of each evaluation, trades them through
// DIR (file_exchange.h) and prints its rows' predictions as a shard document; `--merge` replays
// the same deterministic search from those predictions, without predicting anything, and prints
// what a single process prints, bit for bit.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <iostream>
#include <map>
#include <chrono>
#include <limits>

#include "sim/analysis/calibrate.h"
#include "sim/analysis/compare.h"
#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/file_exchange.h"
#include "sim/cli/mpi_world.h"
#include "sim/cli/shard_options.h"
#include "sim/scenario/scenario_specs.h"
#include "sim/fault/trial_shards.h"
#include "sim/progress/progress_reporter.h"
#include "sim/units/format.h"

namespace mofasim::cli {
namespace {

// Bounds per parameter: efficiencies are fractions of peak; times in seconds.
analysis::ParameterRange range_for(const std::string& name) {
  using P = analysis::CalibrationParameter;
  static const std::map<std::string, analysis::ParameterRange> kRanges = {
      {"gemm", {.parameter = P::kGemmEfficiency, .lower = 0.05, .upper = 1.0, .initial = 0.7}},
      {"attention", {.parameter = P::kAttentionEfficiency, .lower = 0.05, .upper = 1.0, .initial = 0.5}},
      {"memory", {.parameter = P::kMemoryEfficiency, .lower = 0.05, .upper = 1.0, .initial = 0.7}},
      {"small_gemm", {.parameter = P::kSmallGemmEfficiency, .lower = 0.05, .upper = 1.0, .initial = 0.5}},
      {"bandwidth", {.parameter = P::kBandwidthFactor, .lower = 0.1, .upper = 2.0, .initial = 1.0}},
      {"kernel_launch", {.parameter = P::kKernelLaunchSeconds, .lower = 0, .upper = 200e-6, .initial = 5e-6}},
      {"op_dispatch", {.parameter = P::kOpDispatchSeconds, .lower = 0, .upper = 500e-6, .initial = 20e-6}},
  };
  const auto it = kRanges.find(name);
  if (it == kRanges.end()) {
    throw UsageError("mofasim calibrate: --fit '" + name +
                     "' is not a parameter; allowed: gemm, attention, memory, small_gemm, bandwidth, kernel_launch, "
                     "op_dispatch");
  }
  return it->second;
}

constexpr const char* kCalibrateShardKind = "mofasim.calibrate_shard";

// A prediction in a shard document, exact: finite doubles print round-trip exact in JSON; NaN and
// infinities (a diverging prediction) have no JSON number, so they travel as strings.
nlohmann::json exact(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}
double from_exact(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  return s == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

std::string as_bytes(std::span<const double> values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double)};
}

// Every shard's predictions of one evaluation (their bytes, in shard = row order) as one list.
std::vector<double> joined(const std::vector<std::string>& parts) {
  std::vector<double> all;
  for (const std::string& part : parts) {
    for (std::size_t at = 0; at + sizeof(double) <= part.size(); at += sizeof(double)) {
      double t = 0;
      std::memcpy(&t, part.data() + at, sizeof t);
      all.push_back(t);
    }
  }
  return all;
}

}  // namespace

int run_calibrate(const Args& args) {
  CommonOptions common;
  std::string path;
  std::vector<std::string> fit;
  std::string evaluator = "analytic";
  int evaluations = 600;
  bool quiet = false;
  ShardOptions sharding;
  std::string exchange;
  double exchange_timeout_s = 3600;
  po::options_description desc("options");
  add_common_options(desc, common);
  add_shard_options(desc, sharding, "rows of every objective evaluation (with --exchange DIR, all shards at once)");
  desc.add_options()("exchange", po::value<std::string>(&exchange),
                     "with --shard: a folder every shard can read and write, where they trade each evaluation's "
                     "predictions")(
      "exchange-timeout", po::value<double>(&exchange_timeout_s)->default_value(exchange_timeout_s),
      "with --shard: seconds to wait for the other shards at one evaluation");
  desc.add_options()("quiet,q", po::bool_switch(&quiet), "no progress line on stderr (it is shown only on a terminal)");
  desc.add_options()("fit", po::value<std::vector<std::string>>(&fit)->composing(),
                     "parameter to fit (repeatable): gemm, attention, memory, small_gemm, bandwidth, kernel_launch, "
                     "op_dispatch; default gemm")(
      "evaluator", po::value<std::string>(&evaluator)->default_value(evaluator),
      "analytic (closed form, fast) or simulated (step simulation, folded)")(
      "evaluations", po::value<int>(&evaluations)->default_value(evaluations), "objective evaluations at most")(
      "measurements", po::value<std::string>(&path), "CSV of scenario_path,step_time_s");
  po::positional_options_description pos;
  pos.add("measurements", 1);
  po::variables_map vm;
  parse_command_line("calibrate", args, desc, pos, vm);
  if (common.help) {
    print_command_help("calibrate", "MEASUREMENTS.csv [--fit gemm --fit attention ...] [--evaluator analytic|simulated] [--json] [-q] [--shard i/n --exchange DIR | --merge FILES...]", desc);
    return 0;
  }
  if (path.empty()) throw UsageError("mofasim calibrate: missing MEASUREMENTS.csv (see: mofasim calibrate --help)");
  // Each evaluation is a step prediction per row (a simulation with --evaluator simulated); a
  // million is hours of work and far past where Nelder-Mead stops improving.
  constexpr int kMaxEvaluations = 1'000'000;
  if (evaluations < 1 || evaluations > kMaxEvaluations) {
    throw UsageError("mofasim calibrate: --evaluations: must be in [1, " + std::to_string(kMaxEvaluations) + "], got " +
                     std::to_string(evaluations));
  }
  if (fit.empty()) fit = {"gemm"};
  analysis::CalibrationOptions options{.parameters = {}, .max_evaluations = evaluations};
  for (const std::string& name : fit) options.parameters.push_back(range_for(name));
  analysis::StepEvaluator step = analysis::analytic_step_evaluator();
  if (evaluator == "simulated") {
    step = analysis::simulated_step_evaluator();
  } else if (evaluator != "analytic") {
    throw UsageError("mofasim calibrate: --evaluator must be analytic or simulated, got '" + evaluator + "'");
  }

  std::vector<analysis::CalibrationPoint> points;
  for (const analysis::Measurement& m : analysis::load_measurements(path)) {
    const scenario::LoadedScenario loaded = load_checked(m.scenario_path, common.sets);
    points.push_back({.label = m.scenario_path, .input = analytic_input(loaded), .measured_step_s = m.step_time_s});
  }
  // A shard document names its run, so a merge of shards of other rows, options or a different
  // evaluator is refused (and the exchange folder keeps the runs apart).
  nlohmann::json rows_id = nlohmann::json::array();
  for (const analysis::CalibrationPoint& p : points) rows_id.push_back({p.label, p.measured_step_s});
  const nlohmann::json run_id = {{"rows", rows_id},         {"fit", fit},          {"evaluator", evaluator},
                                 {"evaluations", evaluations}, {"sets", common.sets}};
  if (sharding.shard.empty() && !exchange.empty()) {
    throw UsageError("mofasim calibrate: --exchange: goes with --shard i/n");
  }
  if (!sharding.shard.empty() && exchange.empty()) {
    throw UsageError("mofasim calibrate: --shard: needs --exchange DIR (a folder all the shards share: each "
                     "evaluation needs every row's prediction)");
  }
  if (!(exchange_timeout_s > 0) || exchange_timeout_s > 1e6) {
    throw UsageError("mofasim calibrate: --exchange-timeout: must be in (0, 1e6] seconds, got " +
                     format_number("%g", exchange_timeout_s));
  }
  const MpiWorld world = mpi_world();
  const bool sharded_run = !sharding.shard.empty() || !sharding.merge.empty();
  const int share = sharding.shard.empty() ? world.size : parse_shard_spec("calibrate", sharding.shard).count;
  // Every objective evaluation predicts every point; at most `evaluations` of them (fewer when the
  // fit converges). With the simulated evaluator each prediction is a step simulation. Under
  // mpirun rank 0 alone shows the line, counting its own share (a shard counts its own too).
  progress::ProgressReporter progress_line = progress::ProgressReporter::for_stderr(
      "calibrate", "predictions",
      static_cast<std::int64_t>(evaluations) * static_cast<std::int64_t>(points.size()) / share,
      quiet || world.rank != 0 || !sharding.merge.empty());
  std::int64_t predicted = 0;
  const auto counted_step = [&](const model::AnalyticInput& input) {
    const double step_s = step(input);
    progress_line.update(++predicted);
    return step_s;
  };
  const auto rows = static_cast<std::int64_t>(points.size());
  analysis::CalibrationResult result;
  if (sharded_run) {
    // A shard: its rows' predictions of every evaluation, then of the residuals (the final fit).
    const ShardOutcome sharded = run_sharded("calibrate", sharding, [&](int index, int count) {
      const auto [first, end] = fault::shard_range(rows, index, count);
      FileExchange trade("calibrate", exchange, run_key(run_id.dump() + "/" + std::to_string(count)), index, count,
                         std::chrono::milliseconds(static_cast<std::int64_t>(exchange_timeout_s * 1000)));
      std::vector<nlohmann::json> mine(static_cast<std::size_t>(end - first), nlohmann::json::array());
      analysis::CalibrationOptions shard_options = options;
      shard_options.evaluate_all = [&](std::span<const model::AnalyticInput> inputs) {
        std::vector<double> own;
        for (auto i = first; i < end; ++i) {
          own.push_back(counted_step(inputs[static_cast<std::size_t>(i)]));
          mine[static_cast<std::size_t>(i - first)].push_back(exact(own.back()));
        }
        return joined(trade.all_gather(as_bytes(own)));
      };
      // With evaluate_all set, calibrate() calls the evaluator only for the residuals, once per
      // row in row order; a shard predicts its own rows (the others' are the other shards' job).
      std::int64_t row = 0;
      (void)analysis::calibrate(points, shard_options, [&](const model::AnalyticInput& input) {
        const std::int64_t r = row++;
        if (r < first || r >= end) return std::numeric_limits<double>::quiet_NaN();
        const double t = counted_step(input);
        mine[static_cast<std::size_t>(r - first)].push_back(exact(t));
        return t;
      });
      progress_line.finish();
      return row_shard_document(kCalibrateShardKind, run_id, points.size(), static_cast<std::size_t>(first), mine);
    });
    if (sharded.done) return 0;
    // The merge: the same search, each evaluation answered from the shards' predictions.
    const std::vector<nlohmann::json> recorded =
        merge_row_shards("calibrate", sharded.documents, kCalibrateShardKind, run_id);
    const std::string where = "mofasim calibrate: --merge: ";
    std::size_t length = 0;
    for (std::size_t r = 0; r < recorded.size(); ++r) {
      if (!recorded[r].is_array() || recorded[r].empty() || (r > 0 && recorded[r].size() != length)) {
        throw UsageError(where + "row " + std::to_string(r) + " holds a different number of predictions");
      }
      length = recorded[r].size();
    }
    const std::size_t held = length - 1;  // evaluations; the last entry is the residual prediction
    std::size_t round = 0;
    options.evaluate_all = [&](std::span<const model::AnalyticInput> inputs) {
      if (round >= held) {
        throw UsageError(where + "the shards hold " + std::to_string(held) +
                         " evaluations, but the search needs more (shards of another mofasim version?)");
      }
      std::vector<double> out;
      for (std::size_t r = 0; r < inputs.size(); ++r) out.push_back(from_exact(recorded[r][round]));
      ++round;
      return out;
    };
    std::size_t row = 0;
    try {
      result = analysis::calibrate(points, options, [&](const model::AnalyticInput&) {
        return from_exact(recorded.at(row++).at(held));
      });
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(where + "a prediction in a shard document is not a number: " + e.what());
    }
    if (round != held) {
      throw UsageError(where + "the search used " + std::to_string(round) + " of the shards' " + std::to_string(held) +
                       " evaluations (shards of another mofasim version?)");
    }
  } else {
    // Under mpirun every rank runs the same deterministic search; each objective evaluation's
    // points are split over the ranks and the predictions shared, so all ranks (and a single
    // process) see the same numbers.
    if (world.size > 1) {
      options.evaluate_all = [&](std::span<const model::AnalyticInput> inputs) {
        const auto [first, end] = fault::shard_range(static_cast<std::int64_t>(inputs.size()), world.rank, world.size);
        // The doubles travel as their bytes: exact, NaN and infinity included.
        std::vector<double> own;
        for (auto i = first; i < end; ++i) own.push_back(counted_step(inputs[static_cast<std::size_t>(i)]));
        return joined(all_gather(as_bytes(own)));
      };
    }
    result = analysis::calibrate(points, options, counted_step);
  }
  progress_line.finish();
  if (world.rank != 0) return 0;

  if (common.json) {
    nlohmann::json j;
    for (std::size_t i = 0; i < fit.size(); ++i) j["fitted"][fit[i]] = result.values[i];
    j["objective"] = result.objective;
    j["evaluations"] = result.evaluations;
    j["converged"] = result.converged;
    for (const analysis::Residual& r : result.residuals) {
      j["residuals"].push_back({{"scenario", r.label},
                                {"measured_step_s", r.measured_step_s},
                                {"predicted_step_s", r.predicted_step_s},
                                {"relative_error", r.relative_error}});
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "fitted on " << points.size() << " measurement(s) with the " << evaluator << " evaluator ("
            << result.evaluations << " evaluations, " << (result.converged ? "converged" : "evaluation limit reached")
            << ")\n\n";
  for (std::size_t i = 0; i < fit.size(); ++i) std::cout << "  " << fit[i] << " = " << result.values[i] << "\n";
  std::cout << "\nscenario                                             measured s   predicted s    error\n";
  double mape = 0;
  for (const analysis::Residual& r : result.residuals) {
    char line[256];
    std::snprintf(line, sizeof line, "%-52s %11.4f %13.4f %+7.2f%%\n", r.label.c_str(), r.measured_step_s,
                  r.predicted_step_s, 100 * r.relative_error);
    std::cout << line;
    mape += std::fabs(r.relative_error);
  }
  std::cout << "mean absolute error " << 100 * mape / static_cast<double>(result.residuals.size()) << "%\n";
  std::cout << "\nhardware fields for the preset (efficiencies are fractions of peak):\n";
  for (std::size_t i = 0; i < fit.size(); ++i) {
    const std::string& n = fit[i];
    if (n == "gemm" || n == "attention" || n == "memory" || n == "small_gemm") {
      std::cout << "  efficiency: { " << n << ": " << result.values[i] << " }\n";
    } else if (n == "kernel_launch" || n == "op_dispatch") {
      std::cout << "  " << n << ": \"" << result.values[i] * 1e6 << " us\"\n";
    } else {
      std::cout << "  # bandwidth factor " << result.values[i] << ": set optimizations.bandwidth_scale\n";
    }
  }
  return 0;
}

}  // namespace mofasim::cli
