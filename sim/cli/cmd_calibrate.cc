// `mofasim calibrate MEASUREMENTS.csv`: fits a device's uncertain efficiencies (MoFa §5.7) to
// measured step times. The CSV holds `scenario_path,step_time_s` rows (paths relative to the CSV's
// folder); every scenario is loaded as usual, the chosen parameters are fitted once for all rows
// (bounded Nelder-Mead, deterministic), and the fitted values, the residual of every row and the
// hardware YAML to paste into a preset are printed.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <iostream>
#include <map>

#include "sim/analysis/calibrate.h"
#include "sim/analysis/compare.h"
#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/mpi_world.h"
#include "sim/scenario/scenario_specs.h"
#include "sim/fault/trial_shards.h"
#include "sim/progress/progress_reporter.h"

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

}  // namespace

int run_calibrate(const Args& args) {
  CommonOptions common;
  std::string path;
  std::vector<std::string> fit;
  std::string evaluator = "analytic";
  int evaluations = 600;
  bool quiet = false;
  po::options_description desc("options");
  add_common_options(desc, common);
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
    print_command_help("calibrate", "MEASUREMENTS.csv [--fit gemm --fit attention ...] [--evaluator analytic|simulated] [--json] [-q]", desc);
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
  // Under mpirun every rank runs the same deterministic search; each objective evaluation's
  // points are split over the ranks and the predictions shared, so all ranks (and a single
  // process) see the same numbers. --shard has no meaning here: every step needs every point.
  const MpiWorld world = mpi_world();
  // Every objective evaluation predicts every point; at most `evaluations` of them (fewer when the
  // fit converges). With the simulated evaluator each prediction is a step simulation. Under
  // mpirun rank 0 alone shows the line, counting its own share.
  progress::ProgressReporter progress_line = progress::ProgressReporter::for_stderr(
      "calibrate", "predictions",
      static_cast<std::int64_t>(evaluations) * static_cast<std::int64_t>(points.size()) / world.size,
      quiet || world.rank != 0);
  std::int64_t predicted = 0;
  const auto counted_step = [&](const model::AnalyticInput& input) {
    const double step_s = step(input);
    progress_line.update(++predicted);
    return step_s;
  };
  if (world.size > 1) {
    options.evaluate_all = [&](std::span<const model::AnalyticInput> inputs) {
      const auto [first, end] = fault::shard_range(static_cast<std::int64_t>(inputs.size()), world.rank, world.size);
      // The doubles travel as their bytes: exact, NaN and infinity included.
      std::string mine;
      for (auto i = first; i < end; ++i) {
        const double t = counted_step(inputs[static_cast<std::size_t>(i)]);
        mine.append(reinterpret_cast<const char*>(&t), sizeof t);
      }
      std::vector<double> all;
      for (const std::string& part : all_gather(mine)) {
        for (std::size_t at = 0; at + sizeof(double) <= part.size(); at += sizeof(double)) {
          double t = 0;
          std::memcpy(&t, part.data() + at, sizeof t);
          all.push_back(t);
        }
      }
      return all;
    };
  }
  const analysis::CalibrationResult result = analysis::calibrate(points, options, counted_step);
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
