// Calibration by bounded Nelder–Mead (see calibrate.h).
#include "sim/analysis/calibrate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "sim/analysis/input_file.h"

namespace mofasim::analysis {
namespace {

using Vec = std::vector<double>;

double clamp01(double u) { return std::min(1.0, std::max(0.0, u)); }

class Objective {
 public:
  Objective(std::span<const CalibrationPoint> points, const CalibrationOptions& options, const StepEvaluator& eval)
      : points_(points), options_(options), eval_(eval) {}

  [[nodiscard]] Vec values(const Vec& u) const {
    Vec x(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) {
      const ParameterRange& r = options_.parameters[i];
      x[i] = r.lower + (r.upper - r.lower) * clamp01(u[i]);
    }
    return x;
  }

  [[nodiscard]] model::AnalyticInput adjusted(const CalibrationPoint& p, const Vec& x) const {
    model::AnalyticInput in = p.input;
    for (std::size_t i = 0; i < x.size(); ++i) apply_parameter(in, options_.parameters[i].parameter, x[i]);
    return in;
  }

  double operator()(const Vec& u) {
    ++evaluations_;
    const Vec x = values(u);
    std::vector<double> predicted;
    if (options_.evaluate_all) {
      std::vector<model::AnalyticInput> inputs;
      for (const CalibrationPoint& p : points_) inputs.push_back(adjusted(p, x));
      predicted = options_.evaluate_all(inputs);
      if (predicted.size() != points_.size()) throw std::logic_error("calibrate: evaluate_all returned the wrong count");
    } else {
      for (const CalibrationPoint& p : points_) predicted.push_back(eval_(adjusted(p, x)));
    }
    double sum = 0;
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const double rel = (predicted[i] - points_[i].measured_step_s) / points_[i].measured_step_s;
      sum += options_.objective == CalibrationObjective::kMeanSquaredRelativeError ? rel * rel : std::abs(rel);
    }
    return sum / static_cast<double>(points_.size());
  }

  [[nodiscard]] int evaluations() const { return evaluations_; }

 private:
  std::span<const CalibrationPoint> points_;
  const CalibrationOptions& options_;
  const StepEvaluator& eval_;
  int evaluations_ = 0;
};

// Nelder–Mead (reflection 1, expansion 2, contraction 0.5, shrink 0.5) on the unit box, points
// clamped into it; restarted from the best vertex with a fresh simplex until a restart no longer
// improves. Deterministic: no randomness, ties keep index order (stable sort).
struct Minimum {
  Vec u;
  double f = 0;
  bool converged = false;
};

Minimum nelder_mead(Objective& fn, Vec start, int max_evals, double tol) {
  const std::size_t n = start.size();
  Minimum best{start, fn(start), false};
  for (int restart = 0; restart < 8 && fn.evaluations() < max_evals; ++restart) {
    const double step = restart == 0 ? 0.1 : 0.02;
    std::vector<Vec> s(n + 1, best.u);
    Vec f(n + 1, best.f);
    for (std::size_t i = 0; i < n; ++i) {
      s[i + 1][i] = best.u[i] + (best.u[i] + step <= 1 ? step : -step);
      f[i + 1] = fn(s[i + 1]);
    }
    std::vector<std::size_t> idx(n + 1);
    bool converged = false;
    while (fn.evaluations() < max_evals) {
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return f[a] < f[b]; });
      const std::size_t lo = idx.front();
      const std::size_t hi = idx.back();
      double size = 0;
      for (std::size_t i = 0; i <= n; ++i) {
        for (std::size_t d = 0; d < n; ++d) size = std::max(size, std::abs(s[i][d] - s[lo][d]));
      }
      if (f[hi] - f[lo] <= tol && size < 1e-9) {
        converged = true;
        break;
      }
      if (size < 1e-12) {
        converged = true;
        break;
      }
      Vec centroid(n, 0.0);
      for (std::size_t i = 0; i <= n; ++i) {
        if (i == hi) continue;
        for (std::size_t d = 0; d < n; ++d) centroid[d] += s[i][d] / static_cast<double>(n);
      }
      auto along = [&](double t) {
        Vec p(n);
        for (std::size_t d = 0; d < n; ++d) p[d] = clamp01(centroid[d] + t * (s[hi][d] - centroid[d]));
        return p;
      };
      const std::size_t second = idx[n - 1];
      Vec r = along(-1.0);
      const double fr = fn(r);
      if (fr < f[lo]) {
        Vec e = along(-2.0);
        const double fe = fn(e);
        if (fe < fr) {
          s[hi] = e;
          f[hi] = fe;
        } else {
          s[hi] = r;
          f[hi] = fr;
        }
      } else if (fr < f[second]) {
        s[hi] = r;
        f[hi] = fr;
      } else {
        Vec c = fr < f[hi] ? along(-0.5) : along(0.5);
        const double fc = fn(c);
        if (fc < std::min(fr, f[hi])) {
          s[hi] = c;
          f[hi] = fc;
        } else {
          for (std::size_t i = 0; i <= n; ++i) {
            if (i == lo) continue;
            for (std::size_t d = 0; d < n; ++d) s[i][d] = s[lo][d] + 0.5 * (s[i][d] - s[lo][d]);
            f[i] = fn(s[i]);
          }
        }
      }
    }
    const auto it = std::min_element(f.begin(), f.end());
    const std::size_t b = static_cast<std::size_t>(it - f.begin());
    const bool improved = f[b] < best.f - tol;
    if (f[b] <= best.f) best = Minimum{s[b], f[b], converged};
    best.converged = converged;
    if (!improved && restart > 0) break;
  }
  return best;
}

}  // namespace

const char* calibration_parameter_name(CalibrationParameter p) {
  switch (p) {
    case CalibrationParameter::kGemmEfficiency: return "gemm_efficiency";
    case CalibrationParameter::kAttentionEfficiency: return "attention_efficiency";
    case CalibrationParameter::kMemoryEfficiency: return "memory_efficiency";
    case CalibrationParameter::kSmallGemmEfficiency: return "small_gemm_efficiency";
    case CalibrationParameter::kRooflineSlope: return "roofline_slope";
    case CalibrationParameter::kRooflineIntercept: return "roofline_intercept";
    case CalibrationParameter::kBandwidthFactor: return "bandwidth_factor";
    case CalibrationParameter::kKernelLaunchSeconds: return "kernel_launch_seconds";
    case CalibrationParameter::kOpDispatchSeconds: return "op_dispatch_seconds";
  }
  return "?";
}

void apply_parameter(model::AnalyticInput& input, CalibrationParameter parameter, double value) {
  model::HardwareSpec& hw = input.hardware;
  switch (parameter) {
    case CalibrationParameter::kGemmEfficiency: hw.efficiency.gemm = value; return;
    case CalibrationParameter::kAttentionEfficiency: hw.efficiency.attention = value; return;
    case CalibrationParameter::kMemoryEfficiency: hw.efficiency.memory = value; return;
    case CalibrationParameter::kSmallGemmEfficiency: hw.efficiency.small_gemm = value; return;
    case CalibrationParameter::kRooflineSlope: hw.roofline_slope = value; return;
    case CalibrationParameter::kRooflineIntercept: hw.roofline_intercept = value; return;
    case CalibrationParameter::kBandwidthFactor: input.features.bandwidth_scale *= value; return;
    case CalibrationParameter::kKernelLaunchSeconds: hw.kernel_launch_seconds = value; return;
    case CalibrationParameter::kOpDispatchSeconds: hw.op_dispatch_seconds = value; return;
  }
}

StepEvaluator analytic_step_evaluator() {
  return [](const model::AnalyticInput& in) { return model::evaluate_mofa(in).timing.step_time_s; };
}

CalibrationResult calibrate(std::span<const CalibrationPoint> points, const CalibrationOptions& options,
                            const StepEvaluator& evaluator) {
  if (points.empty()) throw std::invalid_argument("calibrate: no measured points");
  if (options.parameters.empty()) throw std::invalid_argument("calibrate: no parameters to fit");
  for (const CalibrationPoint& p : points) {
    if (!(p.measured_step_s > 0)) {
      throw std::invalid_argument("calibrate: measured_step_s of '" + p.label + "' must be > 0");
    }
  }
  Vec start;
  for (std::size_t i = 0; i < options.parameters.size(); ++i) {
    const ParameterRange& r = options.parameters[i];
    if (!(r.lower < r.upper)) {
      throw std::invalid_argument(std::string("calibrate: ") + calibration_parameter_name(r.parameter) +
                                  " needs lower < upper");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (options.parameters[j].parameter == r.parameter) {
        throw std::invalid_argument(std::string("calibrate: ") + calibration_parameter_name(r.parameter) +
                                    " is listed twice");
      }
    }
    start.push_back(clamp01((r.initial - r.lower) / (r.upper - r.lower)));
  }
  Objective fn(points, options, evaluator);
  const Minimum best = nelder_mead(fn, start, options.max_evaluations, options.tolerance);
  CalibrationResult out;
  out.values = fn.values(best.u);
  out.objective = best.f;
  out.evaluations = fn.evaluations();
  out.converged = best.converged;
  for (const CalibrationPoint& p : points) {
    const double predicted = evaluator(fn.adjusted(p, out.values));
    out.residuals.push_back(Residual{.label = p.label,
                                     .measured_step_s = p.measured_step_s,
                                     .predicted_step_s = predicted,
                                     .relative_error = (predicted - p.measured_step_s) / p.measured_step_s});
  }
  return out;
}

std::vector<Measurement> load_measurements(const std::string& path) {
  std::istringstream file(read_input_file(path, "measurements file"));
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::vector<Measurement> out;
  std::string line;
  int number = 0;
  bool first_row = true;
  while (std::getline(file, line)) {
    ++number;
    const auto begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos || line[begin] == '#') continue;
    const auto comma = line.find(',');
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (comma == std::string::npos) throw InputError(where + "expected 'scenario_path,step_time_s'");
    auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(" \t\r");
      const auto e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    const std::string scenario = trim(line.substr(0, comma));
    const std::string time_text = trim(line.substr(comma + 1));
    double seconds = 0;
    std::size_t used = 0;
    bool numeric = true;
    try {
      seconds = std::stod(time_text, &used);
    } catch (const std::exception&) {
      numeric = false;
    }
    numeric = numeric && used == time_text.size();
    const bool header = first_row && !numeric;
    first_row = false;
    if (header) continue;
    if (!numeric) throw InputError(where + "step_time_s '" + time_text + "' is not a number");
    if (!(seconds > 0 && std::isfinite(seconds))) {
      throw InputError(where + "step_time_s must be a finite number > 0, got " + time_text);
    }
    if (scenario.empty()) throw InputError(where + "scenario_path is empty");
    std::filesystem::path p(scenario);
    if (p.is_relative()) p = folder / p;
    out.push_back(Measurement{.scenario_path = p.string(), .step_time_s = seconds, .line = number});
  }
  if (out.empty()) throw InputError(path + ":1: no measurement rows (expected 'scenario_path,step_time_s' lines)");
  return out;
}

}  // namespace mofasim::analysis
