// Regenerates the numbers of docs/validation-measured.md from vTrain's public A100 measurements:
//   validation_measured_report [--data DIR] [--svg FILE] [--csv FILE] [--fit]
// DIR defaults to ../shared/validation/vtrain beside the source tree. Prints the subset tables of
// the step simulation (calibrated), the analytic model (calibrated) and the uncalibrated A100
// preset; writes the simulated scatter SVG and per-row CSV when asked. --fit re-runs the
// single-node calibration (sim/analysis/calibrate.h, vtrain_a100_fit_options) and prints the fitted
// values and the single-node objective.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "sim/analysis/measured_calibration.h"
#include "sim/analysis/measured_compare.h"
#include "sim/analysis/measured_report.h"
#include "sim/analysis/measured_stats.h"
#include "sim/analysis/measured_validate.h"

namespace {

using namespace mofasim::analysis;

// The declared split of the fit: rows at even file lines are fitted, rows at odd lines held out
// (the file interleaves layouts and sizes, so both halves cover every layout).
void fit(const std::vector<MeasuredRow>& single) {
  std::vector<MeasuredRow> fitted;
  std::vector<MeasuredRow> held_out;
  for (const MeasuredRow& r : single) (r.line % 2 == 0 ? fitted : held_out).push_back(r);
  const mofasim::model::HardwareSpec preset = hardware_from_preset("a100-80gb");
  const CalibrationOptions options = vtrain_a100_fit_options(preset);
  const MeasuredConditions base = vtrain_a100_conditions(preset);
  const CalibrationResult r = fit_measured(fitted, base, options);
  std::printf("single-node even lines (%zu rows) objective (MAPE) %.4f after %d evaluations%s;", fitted.size(),
              r.objective, r.evaluations, r.converged ? "" : " (not converged)");
  for (std::size_t i = 0; i < r.values.size(); ++i) {
    std::printf(" %s=%.6g", calibration_parameter_name(options.parameters[i].parameter), r.values[i]);
  }
  const MeasuredConditions applied = apply_fit(base, options.parameters, r.values);
  const ErrorStats odd = error_stats(compare_measured(held_out, applied, analytic_step_predictor()));
  std::printf("\nheld-out odd lines (%zu rows): analytic MAPE %.2f%%\n", held_out.size(), odd.mape);
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = std::string(MOFASIM_SOURCE_DIR) + "/../shared/validation/vtrain";
  std::optional<std::string> svg;
  std::optional<std::string> csv;
  bool do_fit = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--data" && i + 1 < argc) {
      data = argv[++i];
    } else if (a == "--svg" && i + 1 < argc) {
      svg = argv[++i];
    } else if (a == "--csv" && i + 1 < argc) {
      csv = argv[++i];
    } else if (a == "--fit") {
      do_fit = true;
    } else {
      std::cerr << "usage: validation_measured_report [--data DIR] [--svg FILE] [--csv FILE] [--fit]\n";
      return 2;
    }
  }
  const std::vector<std::string> files{data + "/ground_truth_single.csv", data + "/ground_truth_multi.csv"};
  if (!std::filesystem::exists(files[0])) {
    std::cerr << files[0] << ": not found (vTrain's measurements are not in this checkout)\n";
    return 2;
  }
  try {
    if (do_fit) {
      fit(read_measured_csv(files[0]));
      return 0;
    }
    const auto t0 = std::chrono::steady_clock::now();
    MeasuredValidateOptions sim{.measured = files, .csv_path = csv, .svg_path = svg};
    std::cout << "## Step simulation (folded), calibrated A100\n\n";
    validate_measured_command(sim, std::cout);
    const auto t1 = std::chrono::steady_clock::now();
    std::cout << "\n(" << std::chrono::duration<double>(t1 - t0).count() << " s)\n\n## Analytic MoFa model, calibrated A100\n\n";
    validate_measured_command({.measured = files, .predictor = MeasuredPredictorKind::kAnalytic}, std::cout);
    std::cout << "\n## Analytic MoFa model, A100 preset as shipped (no fit)\n\n";
    validate_measured_command({.measured = files,
                               .predictor = MeasuredPredictorKind::kAnalytic,
                               .conditions = vtrain_a100_conditions(hardware_from_preset("a100-80gb"))},
                              std::cout);
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
  return 0;
}
