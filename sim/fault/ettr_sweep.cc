// ETTR sweeps and their CSV / SVG renderings.
#include "sim/fault/ettr_sweep.h"
#include "sim/units/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "model/fault_analytic.h"
#include "sim/fault/plot_axes.h"

namespace mofasim::fault {
namespace {

// The picture: title, legend row, a band for the best point's label, the plot, the x axis.
constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 88, kRight = 30, kTop = 76, kBottom = 64;
constexpr double kTitleY = 22, kLegendY = 44, kBestY = kTop - 8;

// Maps data coordinates to SVG pixels.
class Axes {
 public:
  Axes(const AxisTicks& x, bool log_x, const AxisTicks& y)
      : log_x_(log_x), x_lo_(tx(x.lo)), x_hi_(tx(x.hi)), y_lo_(y.lo), y_hi_(y.hi) {
    if (x_hi_ <= x_lo_) x_hi_ = x_lo_ + 1;
    if (y_hi_ <= y_lo_) y_hi_ = y_lo_ + 1e-6;
  }
  [[nodiscard]] double px(double x) const { return kLeft + (tx(x) - x_lo_) / (x_hi_ - x_lo_) * (kWidth - kLeft - kRight); }
  [[nodiscard]] double py(double y) const {
    return kHeight - kBottom - (y - y_lo_) / (y_hi_ - y_lo_) * (kHeight - kTop - kBottom);
  }

 private:
  [[nodiscard]] double tx(double x) const { return log_x_ ? std::log10(x) : x; }
  bool log_x_;
  double x_lo_, x_hi_, y_lo_, y_hi_;
};

std::string px(double v) { return format_number("%.2f", v); }

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string text(double x, double y, const std::string& anchor, const std::string& body, const std::string& extra = "") {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"" + anchor + "\"" + extra + ">" +
         xml_escape(body) + "</text>\n";
}


}  // namespace

EttrSweep analytic_sweep(const std::string& parameter, std::span<const double> values,
                         std::span<const EttrStudyInputs> inputs) {
  if (values.empty()) throw std::invalid_argument("sweep.values must not be empty");
  if (inputs.size() != values.size()) throw std::invalid_argument("analytic_sweep: one input per value");
  EttrSweep sweep;
  sweep.parameter = parameter;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const model::FaultAnalyticResult a = model::analytic_e2e(inputs[i].spec, inputs[i].run);
    sweep.points.push_back({.value = values[i],
                            .step_time_s = inputs[i].run.step_time_s,
                            .analytic_ettr = a.ettr,
                            .analytic_e2e_s = a.t_total_s,
                            .renewal_ettr = model::renewal_ettr(inputs[i].spec, inputs[i].run)});
    // A run that cannot converge has T_total = +inf and never wins.
    if (sweep.points[i].analytic_e2e_s < sweep.points[sweep.best].analytic_e2e_s) sweep.best = i;
  }
  return sweep;
}

void add_monte_carlo(EttrSweep& sweep, const std::function<MonteCarloResult(std::size_t)>& trials_of,
                     const std::function<void(std::int64_t, std::int64_t)>& progress) {
  std::vector<double> best_walls;
  std::vector<double> diff;
  std::int64_t done = 0;
  auto fill_point = [&](std::size_t i) {
    const MonteCarloResult r = trials_of(i);
    SweepPoint& p = sweep.points[i];
    p.mc_ettr_mean = r.summary.ettr.mean;
    p.mc_ettr_std_error = r.summary.ettr.std_error;
    p.mc_ettr_ci95 = r.summary.ettr.ci95;
    p.mc_ettr_pooled = r.summary.ettr_pooled;
    p.mc_e2e_mean_s = r.summary.e2e_s.mean;
    p.mc_e2e_ci95_s = r.summary.e2e_s.ci95;
    p.mc_e2e_p90_s = r.summary.e2e_s.p90;
    if (i == sweep.best) {
      for (const TrialResult& t : r.trials) best_walls.push_back(t.wall_s);
    }
    if (r.trials.size() != best_walls.size()) throw std::invalid_argument("add_monte_carlo: points differ in trials");
    diff.resize(r.trials.size());
    for (std::size_t t = 0; t < r.trials.size(); ++t) diff[t] = r.trials[t].wall_s - best_walls[t];
    const SampleSummary d = summarize(diff);
    p.mc_e2e_minus_best_s = d.mean;
    p.mc_e2e_minus_best_ci95_s = d.ci95;
    if (progress) progress(++done, static_cast<std::int64_t>(sweep.points.size()));
  };
  fill_point(sweep.best);
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    if (i != sweep.best) fill_point(i);
  }
}

EttrSweep run_ettr_sweep(const std::string& parameter, std::span<const double> values,
                         const std::function<EttrStudyInputs(double)>& build, const MonteCarloOptions& options) {
  if (values.empty()) throw std::invalid_argument("sweep.values must not be empty");
  std::vector<EttrStudyInputs> inputs;
  for (const double v : values) inputs.push_back(build(v));
  // The analytic pass first: it names the best point, whose trials the others are paired with.
  EttrSweep sweep = analytic_sweep(parameter, values, inputs);
  MonteCarloOptions per_point = options;  // same seed at every point: common random numbers
  per_point.progress = nullptr;
  add_monte_carlo(
      sweep, [&](std::size_t i) { return run_monte_carlo(inputs[i].spec, inputs[i].run, per_point); }, options.progress);
  return sweep;
}

void write_sweep_csv(std::ostream& out, const EttrSweep& sweep) {
  out << sweep.parameter
      << ",step_time_s,analytic_ettr,analytic_e2e_s,renewal_ettr,mc_ettr_mean,mc_ettr_std_error,mc_ettr_ci95_lo,"
         "mc_ettr_ci95_hi,mc_ettr_pooled,mc_e2e_mean_s,mc_e2e_ci95_lo_s,mc_e2e_ci95_hi_s,mc_e2e_p90_s,"
         "mc_e2e_minus_best_s,mc_e2e_minus_best_ci95_lo_s,mc_e2e_minus_best_ci95_hi_s,best\n";
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    const SweepPoint& p = sweep.points[i];
    char buffer[768];
    std::snprintf(buffer, sizeof buffer,
                  "%.10g,%.9g,%.9f,%.6f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d\n", p.value,
                  p.step_time_s, p.analytic_ettr, p.analytic_e2e_s, p.renewal_ettr, p.mc_ettr_mean, p.mc_ettr_std_error,
                  p.mc_ettr_ci95[0], p.mc_ettr_ci95[1], p.mc_ettr_pooled, p.mc_e2e_mean_s, p.mc_e2e_ci95_s[0],
                  p.mc_e2e_ci95_s[1], p.mc_e2e_p90_s, p.mc_e2e_minus_best_s, p.mc_e2e_minus_best_ci95_s[0],
                  p.mc_e2e_minus_best_ci95_s[1], i == sweep.best ? 1 : 0);
    out << buffer;
  }
}

void write_sweep_svg(std::ostream& out, const EttrSweep& sweep) {
  if (sweep.points.empty()) throw std::invalid_argument("write_sweep_svg: empty sweep");
  const auto& pts = sweep.points;
  double x_lo = pts.front().value, x_hi = x_lo;
  double y_lo = 100, y_hi = 0;
  for (const SweepPoint& p : pts) {
    x_lo = std::min(x_lo, p.value);
    x_hi = std::max(x_hi, p.value);
    for (double y : {p.analytic_ettr, p.mc_ettr_ci95[0], p.mc_ettr_ci95[1]}) {
      if (!std::isfinite(y)) continue;
      y_lo = std::min(y_lo, 100 * y);
      y_hi = std::max(y_hi, 100 * y);
    }
  }
  if (y_hi < y_lo) y_lo = y_hi = 0;
  // ETTR is a share: the axis stays inside [0, 100] %. Round 1-2-5 ticks from a range inside it
  // never cross either end (100 is a multiple of every such step up to 20).
  const double pad = std::max((y_hi - y_lo) * 0.05, 0.01);
  const AxisTicks y_ticks = linear_ticks(std::max(0.0, y_lo - pad), std::min(100.0, y_hi + pad), 5);
  const bool log_x = x_lo > 0 && x_hi / x_lo >= 100;
  const AxisTicks x_ticks = log_x ? log_ticks(x_lo, x_hi) : linear_ticks(x_lo, x_hi, 6);
  const Axes ax(x_ticks, log_x, y_ticks);
  const double bottom = kHeight - kBottom;
  const double right = kWidth - kRight;
  const std::string x_name = (sweep.axis_label.empty() ? sweep.parameter : sweep.axis_label);

  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"440\" viewBox=\"0 0 720 440\" "
         "font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"720\" height=\"440\" fill=\"white\"/>\n"
      << text(kWidth / 2, kTitleY, "middle", fit_text("ETTR vs " + x_name, 15, kWidth - 20), " font-size=\"15\"");
  // Axes, grid and ticks.
  out << "<line x1=\"" << kLeft << "\" y1=\"" << bottom << "\" x2=\"" << right << "\" y2=\"" << bottom
      << "\" stroke=\"black\"/>\n<line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft << "\" y2=\""
      << bottom << "\" stroke=\"black\"/>\n";
  for (double y : y_ticks.values) {
    const double py = ax.py(y);
    out << "<line x1=\"" << kLeft - 5 << "\" y1=\"" << px(py) << "\" x2=\"" << right << "\" y2=\"" << px(py)
        << "\" stroke=\"#ddd\"/>\n"
        << text(kLeft - 8, py + 4, "end", tick_label(y, y_ticks.decimals));
  }
  for (double x : x_ticks.values) {
    const double pxx = ax.px(x);
    out << "<line x1=\"" << px(pxx) << "\" y1=\"" << bottom << "\" x2=\"" << px(pxx) << "\" y2=\"" << bottom + 5
        << "\" stroke=\"black\"/>\n"
        << text(pxx, bottom + 20, "middle", tick_label(x, x_ticks.decimals));
  }
  out << text((kLeft + right) / 2, kHeight - 16, "middle",
              fit_text(x_name + (log_x ? ", log scale" : ""), 12, right - kLeft))
      << text(20, (kTop + bottom) / 2, "middle", "ETTR (%)",
              " transform=\"rotate(-90 20 " + px((kTop + bottom) / 2) + ")\"");
  // Analytic curve (points that cannot converge have no ETTR to draw).
  out << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"";
  for (const SweepPoint& p : pts) {
    if (std::isfinite(p.analytic_ettr)) out << px(ax.px(p.value)) << ',' << px(ax.py(100 * p.analytic_ettr)) << ' ';
  }
  out << "\"/>\n";
  // Monte Carlo means with 95% error bars.
  for (const SweepPoint& p : pts) {
    const std::string x = px(ax.px(p.value));
    out << "<line x1=\"" << x << "\" y1=\"" << px(ax.py(100 * p.mc_ettr_ci95[0])) << "\" x2=\"" << x << "\" y2=\""
        << px(ax.py(100 * p.mc_ettr_ci95[1])) << "\" stroke=\"#d62728\"/>\n"
        << "<circle cx=\"" << x << "\" cy=\"" << px(ax.py(100 * p.mc_ettr_mean)) << "\" r=\"3.5\" fill=\"#d62728\"/>\n";
  }
  // The best point: a dashed line through the plot, its label in the band above the plot,
  // anchored toward the middle and kept inside the plot's width.
  const SweepPoint& best = pts[sweep.best];
  const double bx = ax.px(best.value);
  const std::string label = "shortest E2E at " + format_number("%.6g", best.value) + ": " +
                            format_duration(best.analytic_e2e_s) + format_number(", ETTR %.2f %%", 100 * best.analytic_ettr);
  const TextBox box = estimate_text_box(0, kBestY, label, 12, "start");
  const double width = box.x1 - box.x0;
  const double label_x = std::clamp(bx - width / 2, kLeft, right - width);
  out << "<line x1=\"" << px(bx) << "\" y1=\"" << kTop << "\" x2=\"" << px(bx) << "\" y2=\"" << bottom
      << "\" stroke=\"#2ca02c\" stroke-dasharray=\"5,4\"/>\n"
      << text(label_x, kBestY, "start", label, " fill=\"#2ca02c\"");
  // Legend: one row between the title and the best label.
  out << "<line x1=\"" << kLeft << "\" y1=\"" << kLegendY - 4 << "\" x2=\"" << kLeft + 24 << "\" y2=\""
      << kLegendY - 4 << "\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n"
      << text(kLeft + 30, kLegendY, "start", "analytic (MoFa(40))")
      << "<circle cx=\"" << kLeft + 262 << "\" cy=\"" << kLegendY - 4 << "\" r=\"3.5\" fill=\"#d62728\"/>\n"
      << text(kLeft + 272, kLegendY, "start", "Monte Carlo mean, 95 % CI") << "</svg>\n";
}

std::string monte_carlo_verdict(const EttrSweep& sweep, const std::function<std::string(double)>& format_value) {
  std::string shorter;
  std::string tied;
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    if (i == sweep.best) continue;
    const auto& ci = sweep.points[i].mc_e2e_minus_best_ci95_s;
    const bool is_shorter = ci[1] < 0;
    if (!is_shorter && ci[0] > 0) continue;  // slower beyond the noise
    std::string& list = is_shorter ? shorter : tied;
    list += (list.empty() ? "" : ", ") + format_value(sweep.points[i].value);
  }
  std::string verdict;
  if (!shorter.empty()) verdict = "the Monte Carlo trials find shorter runs than the analytic best at: " + shorter;
  if (!tied.empty()) verdict += (verdict.empty() ? "" : "; ") + std::string("within Monte Carlo noise of the best: ") + tied;
  if (verdict.empty()) verdict = "every other value is slower than the best beyond Monte Carlo noise";
  return verdict + " (paired 95 % CIs of the E2E difference, common random numbers)";
}

}  // namespace mofasim::fault
