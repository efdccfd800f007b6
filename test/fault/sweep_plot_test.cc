// Tests of the sweep's ranking and common random numbers, and of its SVG plot read back as a
// picture: every text element's estimated box inside the viewBox and apart from the others,
// round ticks, an ETTR axis that never leaves [0, 100] %, axes named with units.
#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/fault_analytic.h"
#include "sim/fault/ettr_sweep.h"
#include "sim/fault/plot_axes.h"

namespace mofasim::fault {
namespace {

using ::testing::HasSubstr;

EttrStudyInputs base(double step_time_s, std::int64_t interval, double rate_per_day) {
  return {.spec = {.node_failure_rate_per_day = rate_per_day, .failure_units = 64, .fixed_downtime_s = 1800,
                   .checkpoint = {.interval_steps = interval, .save_time_s = 30}},
          .run = {.step_time_s = step_time_s, .n_steps = 100000}};
}

// The verdict reads the paired CIs of each point's E2E minus the analytic best's: wholly below 0 is
// shorter (the trials see fail-slow and stalls MoFa leaves out), containing 0 is a tie, above 0 slower.
TEST(SweepVerdict, NamesPointsTheTrialsFindShorterThanTheAnalyticBest) {
  EttrSweep sweep{.parameter = "fault_tolerance.checkpoint.interval_steps", .best = 1};
  const auto point = [](double value, double lo, double hi) {
    SweepPoint p{.value = value};
    p.mc_e2e_minus_best_ci95_s = {lo, hi};
    return p;
  };
  sweep.points = {point(35, -468, -168), point(40, 0, 0), point(45, -30, 40), point(50, 200, 500)};
  const auto fmt = [](double v) { return std::to_string(static_cast<int>(v)); };
  EXPECT_EQ(monte_carlo_verdict(sweep, fmt),
            "the Monte Carlo trials find shorter runs than the analytic best at: 35; "
            "within Monte Carlo noise of the best: 45 (paired 95 % CIs of the E2E difference, common random numbers)");
  sweep.points[0] = point(35, 10, 90);
  sweep.points[2] = point(45, 1, 40);
  EXPECT_EQ(monte_carlo_verdict(sweep, fmt),
            "every other value is slower than the best beyond Monte Carlo noise "
            "(paired 95 % CIs of the E2E difference, common random numbers)");
}

TEST(SweepCommonRandomNumbers, EqualPointsAreEqualTrialByTrial) {
  // Three values that build the same inputs: with one seed for every point they must agree
  // exactly, and each equals the Monte Carlo run of that seed trial by trial.
  const std::vector<double> values = {1, 2, 3};
  const MonteCarloOptions options{.trials = 300, .seed = 11};
  const EttrSweep sweep = run_ettr_sweep("x", values, [](double) { return base(10, 100, 0.05); }, options);
  const EttrStudyInputs in = base(10, 100, 0.05);
  const MonteCarloResult a = run_monte_carlo(in.spec, in.run, options);
  const MonteCarloResult b = run_monte_carlo(in.spec, in.run, options);
  ASSERT_EQ(a.trials.size(), 300u);
  for (std::size_t i = 0; i < a.trials.size(); ++i) {
    EXPECT_EQ(a.trials[i].wall_s, b.trials[i].wall_s) << "trial " << i;
    EXPECT_EQ(a.trials[i].failures, b.trials[i].failures) << "trial " << i;
  }
  for (const SweepPoint& p : sweep.points) {
    EXPECT_EQ(p.mc_ettr_mean, a.summary.ettr.mean);
    EXPECT_EQ(p.mc_e2e_mean_s, a.summary.e2e_s.mean);
    EXPECT_EQ(p.mc_e2e_p90_s, a.summary.e2e_s.p90);
  }
}

TEST(SweepCommonRandomNumbers, SameFailuresAtEveryInterval) {
  // Saves not exposed: a failure-free run is exposed for exactly 100000 x 10 s at any checkpoint
  // interval, and trial i's first failure falls at the same exposed time at every point, so the
  // failure-free trials are the same ones at interval 50 and at 200 (about half of them:
  // c = 64 x 0.000945 / 86400 per s, P(no failure) = exp(-c x 1e6) = 0.50).
  auto build = [](double v) {
    EttrStudyInputs in = base(10, static_cast<std::int64_t>(v), 0.000945);
    in.spec.failures_during_save = false;
    return in;
  };
  const MonteCarloOptions options{.trials = 400, .seed = 5};
  const MonteCarloResult a = run_monte_carlo(build(50).spec, build(50).run, options);
  const MonteCarloResult b = run_monte_carlo(build(200).spec, build(200).run, options);
  int free_runs = 0;
  for (std::size_t i = 0; i < a.trials.size(); ++i) {
    EXPECT_EQ(a.trials[i].failures == 0, b.trials[i].failures == 0) << "trial " << i;
    free_runs += a.trials[i].failures == 0 ? 1 : 0;
  }
  EXPECT_GT(free_runs, 150);
  EXPECT_LT(free_runs, 250);
  // ... and the sweep's points are exactly these runs.
  const std::vector<double> values = {50, 200};
  const EttrSweep sweep = run_ettr_sweep("interval_steps", values, build, options);
  EXPECT_EQ(sweep.points[0].mc_e2e_mean_s, a.summary.e2e_s.mean);
  EXPECT_EQ(sweep.points[1].mc_e2e_mean_s, b.summary.e2e_s.mean);
}

TEST(SweepCommonRandomNumbers, PairedDifferencesToTheBestAreTighterThanTheMeansCis) {
  // Intervals around the optimum of 64 nodes at 0.05 per day: neighbouring E2E means lie inside
  // each other's 95% CIs, but trial-by-trial differences (same failures at every point) separate
  // them: the paired CI is less than half as wide as a point's own.
  const std::vector<double> values = {60, 90, 120, 150};
  const EttrSweep sweep = run_ettr_sweep(
      "interval_steps", values, [](double v) { return base(10, static_cast<std::int64_t>(v), 0.05); },
      {.trials = 400, .seed = 7});
  const SweepPoint& best = sweep.points[sweep.best];
  EXPECT_EQ(best.mc_e2e_minus_best_s, 0);
  EXPECT_EQ(best.mc_e2e_minus_best_ci95_s[0], 0);
  EXPECT_EQ(best.mc_e2e_minus_best_ci95_s[1], 0);
  for (const SweepPoint& p : sweep.points) {
    if (&p == &best) continue;
    EXPECT_NEAR(p.mc_e2e_minus_best_s, p.mc_e2e_mean_s - best.mc_e2e_mean_s, 1e-6 * p.mc_e2e_mean_s);
    const double paired = p.mc_e2e_minus_best_ci95_s[1] - p.mc_e2e_minus_best_ci95_s[0];
    const double own = p.mc_e2e_ci95_s[1] - p.mc_e2e_ci95_s[0];
    EXPECT_LT(paired, 0.5 * own) << "interval " << p.value;
  }
}

// A bandwidth-like sweep: a higher value shortens the step (10 s at 10, 6 s at 50) but the
// checkpoint interval in steps is fixed, so ETTR falls while the run gets shorter. The best
// point is the shortest run, not the highest ETTR, and each row carries its step time.
EttrStudyInputs faster_network(double gbps) { return base(4 + 60 / gbps, 100, 0.05); }

TEST(SweepRanking, BestIsTheShortestRunNotTheHighestEttr) {
  const std::vector<double> values = {10, 20, 30, 40, 50};
  const EttrSweep sweep = run_ettr_sweep("bandwidth", values, faster_network, {.trials = 50, .seed = 1});
  EXPECT_EQ(sweep.best, 4u);
  EXPECT_GT(sweep.points[0].analytic_ettr, sweep.points[4].analytic_ettr);
  EXPECT_DOUBLE_EQ(sweep.points[0].step_time_s, 10);
  EXPECT_DOUBLE_EQ(sweep.points[4].step_time_s, 5.2);
  for (const SweepPoint& p : sweep.points) {
    const EttrStudyInputs in = faster_network(p.value);
    EXPECT_DOUBLE_EQ(p.analytic_e2e_s, model::analytic_e2e(in.spec, in.run).t_total_s);
  }
  std::ostringstream csv;
  write_sweep_csv(csv, sweep);
  const std::string text = csv.str();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "bandwidth,step_time_s,analytic_ettr,analytic_e2e_s,renewal_ettr,mc_ettr_mean,mc_ettr_std_error,"
            "mc_ettr_ci95_lo,mc_ettr_ci95_hi,mc_ettr_pooled,mc_e2e_mean_s,mc_e2e_ci95_lo_s,mc_e2e_ci95_hi_s,"
            "mc_e2e_p90_s,mc_e2e_minus_best_s,mc_e2e_minus_best_ci95_lo_s,mc_e2e_minus_best_ci95_hi_s,best");
  EXPECT_THAT(text, HasSubstr("\n50,5.2,"));
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.substr(text.size() - 3), ",1\n");  // the last row is the best
}

TEST(PlotAxes, RoundTicksAndLabels) {
  const AxisTicks t = linear_ticks(91.213, 91.287, 5);
  EXPECT_EQ(t.values.front(), t.lo);
  EXPECT_LE(t.lo, 91.213);
  EXPECT_GE(t.hi, 91.287);
  EXPECT_EQ(t.decimals, 2);
  EXPECT_EQ(tick_label(t.values[1], t.decimals), "91.22");
  const AxisTicks ints = linear_ticks(20, 200, 6);
  EXPECT_EQ(ints.values, (std::vector<double>{0, 50, 100, 150, 200}));
  const AxisTicks logs = log_ticks(0.001, 0.1);
  EXPECT_EQ(logs.values.size(), 7u);  // 0.001 0.002 0.005 0.01 0.02 0.05 0.1
  EXPECT_EQ(tick_label(-0.0, 1), "0.0");
  EXPECT_EQ(axis_label("fault_tolerance.checkpoint.save_time", "s"), "checkpoint save time (s)");
  EXPECT_EQ(axis_label("fault_tolerance.checkpoint.interval_steps", ""), "checkpoint interval (steps)");
  EXPECT_EQ(axis_label("cluster.network.bandwidth", "GB/s"), "network bandwidth (GB/s)");
  EXPECT_EQ(axis_label("fault_tolerance.node_failure_rate_per_day", ""), "node failure rate (1/day)");
  EXPECT_EQ(axis_label("fault_tolerance.failure_units", ""), "failure units");
}

struct SvgText {
  TextBox box;
  std::string body;
  double x = 0, y = 0;
  std::string anchor;
};

double attr(const std::string& tag, const std::string& name, double fallback) {
  const std::regex re(" " + name + "=\"([-0-9.]+)\"");
  std::smatch m;
  return std::regex_search(tag, m, re) ? std::stod(m[1]) : fallback;
}

std::string unescape(std::string s) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}}) {
    for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p)) s.replace(p, from.size(), to);
  }
  return s;
}

// Every <text>, with its box (a rotate(-90 cx cy) transform turns the box about its centre).
std::vector<SvgText> texts_of(const std::string& svg) {
  std::vector<SvgText> out;
  const std::regex re("<text([^>]*)>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    const std::string tag = (*it)[1];
    SvgText t;
    t.body = unescape((*it)[2]);
    t.x = attr(tag, "x", 0);
    t.y = attr(tag, "y", 0);
    std::smatch m;
    t.anchor = std::regex_search(tag, m, std::regex("text-anchor=\"(\\w+)\"")) ? std::string(m[1]) : "start";
    t.box = estimate_text_box(t.x, t.y, t.body, attr(tag, "font-size", 12), t.anchor);
    if (std::regex_search(tag, m, std::regex("rotate\\(-90 ([-0-9.]+) ([-0-9.]+)\\)"))) {
      const double cx = std::stod(m[1]), cy = std::stod(m[2]);
      const TextBox b = t.box;  // (x, y) -> (cx + (y - cy), cy - (x - cx))
      t.box = {.x0 = cx + (b.y0 - cy), .y0 = cy - (b.x1 - cx), .x1 = cx + (b.y1 - cy), .y1 = cy - (b.x0 - cx)};
    }
    out.push_back(t);
  }
  return out;
}

bool is_number(const std::string& s, double& v) {
  std::size_t used = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == s.size();
}

// The steps between consecutive ticks are all equal and 1, 2 or 5 times a power of ten.
void expect_round(std::vector<double> ticks, const std::string& what) {
  ASSERT_GE(ticks.size(), 2u) << what;
  std::sort(ticks.begin(), ticks.end());
  const double step = ticks[1] - ticks[0];
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  EXPECT_TRUE(std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 || std::abs(mantissa - 5) < 1e-6)
      << what << " step " << step;
  for (std::size_t i = 1; i < ticks.size(); ++i) {
    EXPECT_NEAR(ticks[i] - ticks[i - 1], step, 1e-9 * std::max(1.0, std::abs(ticks[i]))) << what;
    const double k = ticks[i] / step;
    EXPECT_NEAR(k, std::round(k), 1e-6) << what << " tick " << ticks[i] << " is not a multiple of " << step;
  }
}

void check_plot(const EttrSweep& sweep, bool log_x, const std::string& what) {
  std::ostringstream out;
  write_sweep_svg(out, sweep);
  const std::string svg = out.str();
  EXPECT_THAT(svg, HasSubstr("viewBox=\"0 0 720 440\""));
  const std::vector<SvgText> texts = texts_of(svg);
  ASSERT_GE(texts.size(), 8u) << what;
  std::vector<double> y_ticks, x_ticks;
  bool best_label = false;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const SvgText& t = texts[i];
    EXPECT_GE(t.box.x0, 0) << what << ": '" << t.body << "' leaves the picture on the left";
    EXPECT_LE(t.box.x1, 720) << what << ": '" << t.body << "' leaves the picture on the right";
    EXPECT_GE(t.box.y0, 0) << what << ": '" << t.body << "' leaves the picture at the top";
    EXPECT_LE(t.box.y1, 440) << what << ": '" << t.body << "' leaves the picture at the bottom";
    for (std::size_t j = i + 1; j < texts.size(); ++j) {
      EXPECT_FALSE(t.box.overlaps(texts[j].box)) << what << ": '" << t.body << "' overlaps '" << texts[j].body << "'";
    }
    double v = 0;
    if (is_number(t.body, v)) (t.anchor == "end" ? y_ticks : x_ticks).push_back(v);
    if (t.body.starts_with("shortest E2E at ")) best_label = true;
    EXPECT_THAT(t.body, ::testing::Not(HasSubstr("fault_tolerance."))) << what << ": a raw field path";
  }
  EXPECT_TRUE(best_label) << what;
  expect_round(y_ticks, what + " y");
  for (double y : y_ticks) {
    EXPECT_GE(y, 0) << what << ": ETTR axis below 0 %";
    EXPECT_LE(y, 100) << what << ": ETTR axis above 100 %";
  }
  if (!log_x) expect_round(x_ticks, what + " x");
  EXPECT_THAT(svg, HasSubstr(">ETTR (%)</text>"));
}

TEST(SweepPlot, IntervalSweepIsReadable) {
  std::vector<double> values;
  for (int n = 20; n <= 200; n += 4) values.push_back(n);
  EttrSweep sweep = run_ettr_sweep(
      "fault_tolerance.checkpoint.interval_steps", values,
      [](double v) { return base(10, static_cast<std::int64_t>(v), 0.05); }, {.trials = 100, .seed = 2});
  sweep.axis_label = axis_label(sweep.parameter, "");
  check_plot(sweep, false, "interval sweep");
  std::ostringstream out;
  write_sweep_svg(out, sweep);
  EXPECT_THAT(out.str(), HasSubstr(">checkpoint interval (steps)</text>"));
}

TEST(SweepPlot, NearZeroEttrStaysAtOrAboveZero) {
  // Failures so frequent (a mean gap of 4 to 7 minutes against 17-minute checkpoint segments)
  // that ETTR is a few percent or less: the axis used to run to -0.026 %.
  const std::vector<double> values = {3, 4, 5, 6};
  auto build = [](double v) {
    EttrStudyInputs in = base(10, 100, v);
    in.run.n_steps = 5000;
    return in;
  };
  EttrSweep sweep = run_ettr_sweep("fault_tolerance.node_failure_rate", values, build, {.trials = 20, .seed = 2});
  ASSERT_LT(sweep.points.back().analytic_ettr, 0.05);
  sweep.axis_label = axis_label(sweep.parameter, "1/day");
  check_plot(sweep, false, "near-zero ETTR");
}

TEST(SweepPlot, LogAxisAndNearHundredPercent) {
  // Rare failures (ETTR close to 100 %) over four decades of rate: a log x axis, the y axis capped at 100.
  const std::vector<double> values = {1e-5, 1e-4, 1e-3, 1e-2, 1e-1};
  EttrSweep sweep = run_ettr_sweep(
      "fault_tolerance.node_failure_rate", values, [](double v) { return base(10, 1000, v); },
      {.trials = 50, .seed = 2});
  sweep.axis_label = axis_label(sweep.parameter, "1/day");
  check_plot(sweep, true, "log sweep");
}

TEST(SweepPlot, ARawLongParameterNameIsShortenedToFit) {
  const std::vector<double> values = {10, 20, 30};
  const std::string path(150, 'x');
  const EttrSweep sweep = run_ettr_sweep(path, values, faster_network, {.trials = 10, .seed = 1});
  check_plot(sweep, false, "a 150-character parameter");
  EXPECT_EQ(fit_text("abc", 12, 100), "abc");
  EXPECT_EQ(fit_text(std::string(20, 'a'), 10, 6.2 * 10), std::string(7, 'a') + "...");  // 10 characters of 6.2 px
}

TEST(SweepPlot, BestAtEitherEdgeKeepsItsLabelInside) {
  const std::vector<double> values = {10, 20, 30, 40, 50};
  EttrSweep right = run_ettr_sweep("cluster.network.bandwidth", values, faster_network, {.trials = 20, .seed = 1});
  right.axis_label = axis_label(right.parameter, "GB/s");
  ASSERT_EQ(right.best, 4u);
  check_plot(right, false, "best at the right edge");
  EttrSweep left = run_ettr_sweep(
      "cluster.network.bandwidth", values, [](double v) { return faster_network(60 - v); }, {.trials = 20, .seed = 1});
  left.axis_label = axis_label(left.parameter, "GB/s");
  ASSERT_EQ(left.best, 0u);
  check_plot(left, false, "best at the left edge");
}

}  // namespace
}  // namespace mofasim::fault
