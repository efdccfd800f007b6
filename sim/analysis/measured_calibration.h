// Fitting a campaign's uncertain device parameters to measured rows through the calibration path
// (sim/analysis/calibrate.h: bounded Nelder–Mead on the analytic MoFa model), and the stored fit
// for vTrain's A100 measurements, so a report can use one parameter set for every row.
//
// The vTrain fit (vtrain_a100_fit) was made ONCE on the 720 single-node rows at even file lines,
// with the A100 preset's peaks fixed; the 720 at odd lines and the 109 multi-node rows are held out. How it
// was made, and the values, are in docs/validation-measured.md; regenerate with the
// validation_measured_report program's --fit mode.
#pragma once

#include <span>
#include <vector>

#include "sim/analysis/calibrate.h"
#include "sim/analysis/measured_specs.h"

namespace mofasim::analysis {

// The calibration points of `rows` under `conditions` (label "file:line", the row's specs as an
// AnalyticInput, the measured iteration time).
std::vector<CalibrationPoint> measured_calibration_points(std::span<const MeasuredRow> rows,
                                                          const MeasuredConditions& conditions);

// Runs calibrate() on the rows and returns its result (values in options.parameters order).
CalibrationResult fit_measured(std::span<const MeasuredRow> rows, const MeasuredConditions& conditions,
                               const CalibrationOptions& options,
                               const StepEvaluator& evaluator = analytic_step_evaluator());

// `conditions` with fitted `values` (options.parameters order) applied: efficiencies and the
// roofline fit on the hardware; a bandwidth factor multiplies MeasuredConditions::bandwidth_scale
// (the topology's μ_b, which both step models honour).
MeasuredConditions apply_fit(const MeasuredConditions& conditions, std::span<const ParameterRange> parameters,
                             std::span<const double> values);

// The fitted parameters stored for vTrain's A100 set.
struct DeviceFit {
  model::EfficiencySpec efficiency;
  double kernel_launch_seconds = 0;
  double op_dispatch_seconds = 0;  // HardwareSpec::op_dispatch_seconds (host floor per op phase)
  double bandwidth_scale = 1.0;
};
DeviceFit vtrain_a100_fit();

// The parameters and ranges the vTrain fit uses (gemm, attention and memory efficiency and the
// host dispatch floor per op phase), starting from the preset's values (dispatch: 50 us).
CalibrationOptions vtrain_a100_fit_options(const model::HardwareSpec& preset);

// vtrain_a100_conditions on the A100 preset with vtrain_a100_fit() applied.
MeasuredConditions vtrain_a100_calibrated_conditions();

}  // namespace mofasim::analysis
