// Tests of the ETTR study outputs (table, JSON, per-trial CSV) and the sweep (CSV, SVG).
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/fault_analytic.h"
#include "sim/fault/ettr_study.h"
#include "sim/fault/ettr_sweep.h"

namespace mofasim::fault {
namespace {

using ::testing::HasSubstr;

// Table 5's 128-GPU LLaMA2 column with the run shortened to 95370 steps.
EttrStudyInputs table5_like(double interval_steps) {
  return {.spec = {.node_failure_rate_per_day = 0.005, .failure_units = 16, .fixed_downtime_s = 134.41,
                   .checkpoint = {.interval_steps = static_cast<std::int64_t>(interval_steps), .save_time_s = 4.19}},
          .run = {.step_time_s = 27.83, .n_steps = 95370}};
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

TEST(EttrStudy, JsonCarriesAnalyticAndMonteCarlo) {
  const EttrStudyInputs in = table5_like(10);
  const EttrStudy s = run_ettr_study(in.spec, in.run, {.trials = 500, .seed = 9});
  const nlohmann::json j = ettr_study_json(s);
  EXPECT_DOUBLE_EQ(j["analytic"]["ettr"].get<double>(), model::analytic_e2e(in.spec, in.run).ettr);
  EXPECT_DOUBLE_EQ(j["analytic"]["e2e_s"].get<double>(), s.analytic.t_total_s);
  EXPECT_EQ(j["analytic"]["optimal_interval_steps"].get<std::int64_t>(), model::optimal_interval(in.spec, in.run).steps);
  EXPECT_EQ(j["monte_carlo"]["trials"].get<std::int64_t>(), 500);
  const auto ci = j["monte_carlo"]["ettr_ci95"].get<std::vector<double>>();
  ASSERT_EQ(ci.size(), 2u);
  const double mean = j["monte_carlo"]["ettr_mean"].get<double>();
  EXPECT_LT(ci[0], mean);
  EXPECT_GT(ci[1], mean);
  EXPECT_NEAR(mean, (ci[0] + ci[1]) / 2, 1e-12);
  EXPECT_GE(j["monte_carlo"]["e2e_p90_s"].get<double>(), j["monte_carlo"]["e2e_p50_s"].get<double>());
  EXPECT_DOUBLE_EQ(j["monte_carlo"]["e2e_mean_s"].get<double>(), s.monte_carlo.summary.e2e_s.mean);
  // Failure-free lower bound: 95370 steps * 27.83 s + 9537 saves * 4.19 s.
  EXPECT_GE(j["monte_carlo"]["e2e_mean_s"].get<double>(), 95370 * 27.83 + 9537 * 4.19);
}

TEST(EttrStudy, TableAndTrialsCsv) {
  const EttrStudyInputs in = table5_like(10);
  const EttrStudy s = run_ettr_study(in.spec, in.run, {.trials = 50, .seed = 1});
  const std::string table = render_ettr_table(s);
  EXPECT_THAT(table, HasSubstr("analytic (MoFa(40))"));
  EXPECT_THAT(table, HasSubstr("optimal interval (MoFa(44))"));
  EXPECT_THAT(table, HasSubstr("ETTR renewal"));
  std::ostringstream csv;
  write_trials_csv(csv, s.monte_carlo);
  const std::string text = csv.str();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "trial,wall_s,ettr,lost_work_s,checkpoint_s,downtime_s,init_s,failures,failures_failure");
  EXPECT_EQ(count(text, "\n"), 51);  // header + 50 trials
}

// Sweep N over 20..200 around the optimum: MoFa(44) gives N* = sqrt(2 * 4.19 / c) / 27.83 with
// c = 16 * 0.005 / 86400, about 108 steps; the best grid point of the analytic curve is the one
// closest in T_total, and every MC point brackets the renewal value within its own CI width x 2.
TEST(EttrSweep, IntervalSweepMarksTheOptimum) {
  std::vector<double> values;
  for (int n = 20; n <= 200; n += 4) values.push_back(n);
  const EttrSweep sweep = run_ettr_sweep("interval_steps", values, table5_like, {.trials = 300, .seed = 4});
  ASSERT_EQ(sweep.points.size(), values.size());
  const std::int64_t best = model::optimal_interval(table5_like(10).spec, table5_like(10).run).steps;
  EXPECT_NEAR(sweep.points[sweep.best].value, static_cast<double>(best), 2.0);
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    // Fixed step time and step count: the shortest run is the highest-ETTR one.
    EXPECT_LE(sweep.points[i].analytic_ettr, sweep.points[sweep.best].analytic_ettr);
    EXPECT_GE(sweep.points[i].analytic_e2e_s, sweep.points[sweep.best].analytic_e2e_s);
  }
  std::ostringstream csv;
  write_sweep_csv(csv, sweep);
  EXPECT_EQ(count(csv.str(), "\n"), static_cast<int>(values.size()) + 1);
  EXPECT_EQ(csv.str().rfind("interval_steps,step_time_s,analytic_ettr,", 0), 0u);
  std::ostringstream svg;
  write_sweep_svg(svg, sweep);
  const std::string text = svg.str();
  EXPECT_EQ(text.rfind("<svg", 0), 0u);
  EXPECT_THAT(text, HasSubstr("</svg>"));
  EXPECT_EQ(count(text, "<circle"), static_cast<int>(values.size()) + 1);  // MC points + legend
  EXPECT_EQ(count(text, "<polyline"), 1);
  EXPECT_THAT(text, HasSubstr("shortest E2E at " + std::to_string(static_cast<int>(sweep.points[sweep.best].value)) + ":"));
  // Deterministic output: the same sweep renders the same bytes.
  std::ostringstream again;
  write_sweep_svg(again, run_ettr_sweep("interval_steps", values, table5_like, {.trials = 300, .seed = 4}));
  EXPECT_EQ(again.str(), text);
}

TEST(EttrSweep, RejectsEmptyValues) {
  EXPECT_THROW(run_ettr_sweep("x", {}, table5_like, {}), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::fault
