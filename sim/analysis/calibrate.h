// Calibration: fit a device's unknown efficiencies (per op class, the modified-roofline fit of
// MoFa §5.7, a bandwidth factor) to measured step times. The objective is the mean squared
// relative error (or MAPE) of predicted against measured step times; the optimiser is a bounded,
// deterministic Nelder–Mead in the unit box of the parameters. The step-time evaluator is a
// callback so that the step simulation can replace the analytic model.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "model/analytic_model.h"

namespace mofasim::analysis {

enum class CalibrationParameter {
  kGemmEfficiency,       // HardwareSpec::efficiency.gemm
  kAttentionEfficiency,  // efficiency.attention
  kMemoryEfficiency,     // efficiency.memory
  kSmallGemmEfficiency,  // efficiency.small_gemm
  kRooflineSlope,        // roofline_slope (FLOP/s per FLOP/byte), modified roofline
  kRooflineIntercept,    // roofline_intercept (FLOP/s)
  kBandwidthFactor,      // multiplies FeatureSpec::bandwidth_scale (μ_b) of every point
  kKernelLaunchSeconds,  // HardwareSpec::kernel_launch_seconds (fixed cost per op phase, seconds)
  kOpDispatchSeconds,    // HardwareSpec::op_dispatch_seconds (host floor per op phase, seconds)
};
const char* calibration_parameter_name(CalibrationParameter p);

struct ParameterRange {
  CalibrationParameter parameter = CalibrationParameter::kGemmEfficiency;
  double lower = 0;
  double upper = 1;
  double initial = 0.5;  // clamped into [lower, upper]
};

enum class CalibrationObjective { kMeanSquaredRelativeError, kMeanAbsolutePercentageError };

struct CalibrationPoint {
  std::string label;  // e.g. the scenario path
  model::AnalyticInput input;
  double measured_step_s = 0;
};

// Predicted step time in seconds of a (parameter-adjusted) input.
using StepEvaluator = std::function<double(const model::AnalyticInput&)>;

// The analytic MoFa model's step time (model::evaluate_mofa).
StepEvaluator analytic_step_evaluator();

struct CalibrationOptions {
  std::vector<ParameterRange> parameters;
  CalibrationObjective objective = CalibrationObjective::kMeanSquaredRelativeError;
  int max_evaluations = 4000;  // objective evaluations (each evaluates every point)
  double tolerance = 1e-14;    // stop when the simplex's objective spread falls below this
  // Predicts every point's adjusted input of one objective evaluation at once, in point order
  // (the MPI mode spreads the points over ranks with it). Empty: the evaluator, point by point.
  std::function<std::vector<double>(std::span<const model::AnalyticInput>)> evaluate_all{};
};

struct Residual {
  std::string label;
  double measured_step_s = 0;
  double predicted_step_s = 0;
  double relative_error = 0;  // (predicted − measured) / measured
};

struct CalibrationResult {
  std::vector<double> values;  // fitted value per CalibrationOptions::parameters entry, same order
  double objective = 0;
  int evaluations = 0;
  bool converged = false;      // tolerance reached before max_evaluations
  std::vector<Residual> residuals;
};

// Sets one parameter on an input.
void apply_parameter(model::AnalyticInput& input, CalibrationParameter parameter, double value);

// Throws std::invalid_argument on no points, a measured time <= 0, no parameters, a parameter
// listed twice or a range with lower >= upper.
CalibrationResult calibrate(std::span<const CalibrationPoint> points, const CalibrationOptions& options,
                            const StepEvaluator& evaluator = analytic_step_evaluator());

// One row of a measurements file: a scenario and its measured step time.
struct Measurement {
  std::string scenario_path;  // resolved against the file's folder when relative
  double step_time_s = 0;
  int line = 0;
};

// Reads a CSV of "scenario_path,step_time_s" rows; blank lines and lines starting with '#' are
// skipped, and a first row whose second field is not a number is taken as a header. Throws
// InputError (sim/analysis/input_file.h, a std::invalid_argument) naming file:line on a malformed
// row, a step time that is not finite and > 0, a file without rows, and when the file cannot be
// read (missing, not a regular file, over kMaxInputFileBytes).
std::vector<Measurement> load_measurements(const std::string& path);

}  // namespace mofasim::analysis
