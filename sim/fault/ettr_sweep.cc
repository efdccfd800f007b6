// ETTR sweeps and their CSV / SVG renderings.
#include "sim/fault/ettr_sweep.h"
#include "sim/units/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "model/fault_analytic.h"

namespace mofasim::fault {
namespace {

// Maps data coordinates to SVG pixels.
class Axes {
 public:
  static constexpr double kWidth = 720, kHeight = 440, kLeft = 80, kRight = 30, kTop = 40, kBottom = 60;

  Axes(double x_lo, double x_hi, bool log_x, double y_lo, double y_hi)
      : log_x_(log_x), x_lo_(tx(x_lo)), x_hi_(tx(x_hi)), y_lo_(y_lo), y_hi_(y_hi) {
    if (x_hi_ <= x_lo_) x_hi_ = x_lo_ + 1;
    if (y_hi_ <= y_lo_) y_hi_ = y_lo_ + 1e-6;
  }
  [[nodiscard]] double px(double x) const {
    return kLeft + (tx(x) - x_lo_) / (x_hi_ - x_lo_) * (kWidth - kLeft - kRight);
  }
  [[nodiscard]] double py(double y) const {
    return kHeight - kBottom - (y - y_lo_) / (y_hi_ - y_lo_) * (kHeight - kTop - kBottom);
  }
  [[nodiscard]] bool log_x() const { return log_x_; }

 private:
  [[nodiscard]] double tx(double x) const { return log_x_ ? std::log10(x) : x; }
  bool log_x_;
  double x_lo_, x_hi_, y_lo_, y_hi_;
};

}  // namespace

EttrSweep run_ettr_sweep(const std::string& parameter, std::span<const double> values,
                         const std::function<EttrStudyInputs(double)>& build, const MonteCarloOptions& options) {
  if (values.empty()) throw std::invalid_argument("sweep.values must not be empty");
  EttrSweep sweep;
  sweep.parameter = parameter;
  MonteCarloOptions per_point = options;
  per_point.progress = nullptr;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const EttrStudyInputs in = build(values[i]);
    const model::FaultAnalyticResult a = model::analytic_e2e(in.spec, in.run);
    const MonteCarloSummary mc = run_monte_carlo(in.spec, in.run, per_point).summary;
    sweep.points.push_back({.value = values[i],
                            .analytic_ettr = a.ettr,
                            .analytic_e2e_s = a.t_total_s,
                            .renewal_ettr = model::renewal_ettr(in.spec, in.run),
                            .mc_ettr_mean = mc.ettr.mean,
                            .mc_ettr_std_error = mc.ettr.std_error,
                            .mc_ettr_ci95 = mc.ettr.ci95,
                            .mc_ettr_pooled = mc.ettr_pooled,
                            .mc_e2e_mean_s = mc.e2e_s.mean,
                            .mc_e2e_p90_s = mc.e2e_s.p90});
    if (sweep.points.back().analytic_ettr > sweep.points[sweep.best_analytic].analytic_ettr) sweep.best_analytic = i;
    if (options.progress) options.progress(static_cast<std::int64_t>(i + 1), static_cast<std::int64_t>(values.size()));
  }
  return sweep;
}

void write_sweep_csv(std::ostream& out, const EttrSweep& sweep) {
  out << sweep.parameter
      << ",analytic_ettr,analytic_e2e_s,renewal_ettr,mc_ettr_mean,mc_ettr_std_error,mc_ettr_ci95_lo,"
         "mc_ettr_ci95_hi,mc_ettr_pooled,mc_e2e_mean_s,mc_e2e_p90_s\n";
  for (const SweepPoint& p : sweep.points) {
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, "%.10g,%.9f,%.6f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.6f,%.6f\n", p.value,
                  p.analytic_ettr, p.analytic_e2e_s, p.renewal_ettr, p.mc_ettr_mean, p.mc_ettr_std_error,
                  p.mc_ettr_ci95[0], p.mc_ettr_ci95[1], p.mc_ettr_pooled, p.mc_e2e_mean_s, p.mc_e2e_p90_s);
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
      y_lo = std::min(y_lo, 100 * y);
      y_hi = std::max(y_hi, 100 * y);
    }
  }
  const double pad = std::max((y_hi - y_lo) * 0.08, 1e-4);
  y_lo -= pad;
  y_hi += pad;
  const bool log_x = x_lo > 0 && x_hi / x_lo >= 100;
  const Axes ax(x_lo, x_hi, log_x, y_lo, y_hi);
  const double bottom = Axes::kHeight - Axes::kBottom;
  const double right = Axes::kWidth - Axes::kRight;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"440\" viewBox=\"0 0 720 440\" "
         "font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"720\" height=\"440\" fill=\"white\"/>\n"
      << "<text x=\"360\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">ETTR vs " << sweep.parameter << "</text>\n";
  // Axes and ticks.
  out << "<line x1=\"" << Axes::kLeft << "\" y1=\"" << bottom << "\" x2=\"" << right << "\" y2=\"" << bottom
      << "\" stroke=\"black\"/>\n<line x1=\"" << Axes::kLeft << "\" y1=\"" << Axes::kTop << "\" x2=\""
      << Axes::kLeft << "\" y2=\"" << bottom << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double y = y_lo + (y_hi - y_lo) * i / 5;
    out << "<line x1=\"" << Axes::kLeft - 5 << "\" y1=\"" << format_number("%.2f", ax.py(y)) << "\" x2=\"" << right
        << "\" y2=\"" << format_number("%.2f", ax.py(y)) << "\" stroke=\"#ddd\"/>\n<text x=\"" << Axes::kLeft - 8 << "\" y=\""
        << format_number("%.2f", ax.py(y) + 4) << "\" text-anchor=\"end\">" << format_number("%.3f", y) << "</text>\n";
    const double x = log_x ? x_lo * std::pow(x_hi / x_lo, i / 5.0) : x_lo + (x_hi - x_lo) * i / 5;
    out << "<line x1=\"" << format_number("%.2f", ax.px(x)) << "\" y1=\"" << bottom << "\" x2=\"" << format_number("%.2f", ax.px(x))
        << "\" y2=\"" << bottom + 5 << "\" stroke=\"black\"/>\n<text x=\"" << format_number("%.2f", ax.px(x)) << "\" y=\""
        << bottom + 20 << "\" text-anchor=\"middle\">" << format_number("%.4g", x) << "</text>\n";
  }
  out << "<text x=\"" << (Axes::kLeft + right) / 2 << "\" y=\"" << Axes::kHeight - 15 << "\" text-anchor=\"middle\">"
      << sweep.parameter << (log_x ? " (log scale)" : "") << "</text>\n"
      << "<text x=\"18\" y=\"" << (Axes::kTop + bottom) / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 "
      << (Axes::kTop + bottom) / 2 << ")\">ETTR (%)</text>\n";
  // Analytic curve.
  out << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"";
  for (const SweepPoint& p : pts) out << format_number("%.2f", ax.px(p.value)) << ',' << format_number("%.2f", ax.py(100 * p.analytic_ettr)) << ' ';
  out << "\"/>\n";
  // Monte Carlo means with 95% error bars.
  for (const SweepPoint& p : pts) {
    const std::string x = format_number("%.2f", ax.px(p.value));
    out << "<line x1=\"" << x << "\" y1=\"" << format_number("%.2f", ax.py(100 * p.mc_ettr_ci95[0])) << "\" x2=\"" << x
        << "\" y2=\"" << format_number("%.2f", ax.py(100 * p.mc_ettr_ci95[1])) << "\" stroke=\"#d62728\"/>\n"
        << "<circle cx=\"" << x << "\" cy=\"" << format_number("%.2f", ax.py(100 * p.mc_ettr_mean))
        << "\" r=\"3.5\" fill=\"#d62728\"/>\n";
  }
  // The analytic optimum.
  const SweepPoint& best = pts[sweep.best_analytic];
  const std::string bx = format_number("%.2f", ax.px(best.value));
  out << "<line x1=\"" << bx << "\" y1=\"" << Axes::kTop << "\" x2=\"" << bx << "\" y2=\"" << bottom
      << "\" stroke=\"#2ca02c\" stroke-dasharray=\"5,4\"/>\n<text x=\"" << bx << "\" y=\"" << Axes::kTop - 4
      << "\" text-anchor=\"middle\" fill=\"#2ca02c\">best " << format_number("%.4g", best.value)
      << format_number(" (%.3f %%)", 100 * best.analytic_ettr) << "</text>\n";
  // Legend.
  out << "<line x1=\"" << right - 200 << "\" y1=\"" << bottom - 40 << "\" x2=\"" << right - 175 << "\" y2=\""
      << bottom - 40 << "\" stroke=\"#1f77b4\" stroke-width=\"2\"/><text x=\"" << right - 170 << "\" y=\""
      << bottom - 36 << "\">analytic (MoFa eq. 40)</text>\n<circle cx=\"" << right - 187 << "\" cy=\"" << bottom - 20
      << "\" r=\"3.5\" fill=\"#d62728\"/><text x=\"" << right - 170 << "\" y=\"" << bottom - 16
      << "\">Monte Carlo mean, 95% CI</text>\n</svg>\n";
}

}  // namespace mofasim::fault
