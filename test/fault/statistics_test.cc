// Tests of the sample summary (both tails, the labelled CI) and of how the ETTR study prints them:
// percentiles against a hand-worked sample, the bad tail of each quantity named in the table.
#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/fault/ettr_study.h"
#include "sim/fault/statistics.h"
#include "sim/units/format.h"

namespace mofasim::fault {
namespace {

using ::testing::HasSubstr;

// Sorted: 1 3 4 7 10 (n = 5). Type 7 puts quantile q at position 4q:
//   P1  at 0.04 -> 1 + 0.04 * (3 - 1)  = 1.08     P10 at 0.4 -> 1 + 0.4 * 2 = 1.8
//   P50 at 2    -> 4                               P90 at 3.6 -> 7 + 0.6 * 3 = 8.8
//   P99 at 3.96 -> 7 + 0.96 * (10 - 7) = 9.88
// Mean 5; squared deviations 4 + 16 + 4 + 25 + 1 = 50, s = sqrt(50 / 4) = 3.5355339,
// SE = s / sqrt(5) = 1.5811388, 95 % CI = 5 -/+ 1.959964 * 1.5811388 = 5 -/+ 3.0990 .
TEST(SampleSummary, BothTailsOfAHandWorkedSample) {
  const std::vector<double> x = {7, 1, 3, 10, 4};
  const SampleSummary s = summarize(x);
  EXPECT_DOUBLE_EQ(s.p1, 1.08);
  EXPECT_DOUBLE_EQ(s.p10, 1.8);
  EXPECT_DOUBLE_EQ(s.p50, 4);
  EXPECT_DOUBLE_EQ(s.p90, 8.8);
  EXPECT_DOUBLE_EQ(s.p99, 9.88);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_NEAR(s.std_dev, 3.5355339, 1e-7);
  EXPECT_NEAR(s.std_error, 1.5811388, 1e-7);
  EXPECT_NEAR(s.ci95[0], 5 - 3.0990, 1e-4);
  EXPECT_NEAR(s.ci95[1], 5 + 3.0990, 1e-4);
  EXPECT_EQ(kCiLevel, 0.95);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
}

TEST(SampleSummary, OneSampleHasEveryQuantileAtIt) {
  const std::vector<double> x = {2.5};
  const SampleSummary s = summarize(x);
  for (double q : {s.p1, s.p10, s.p50, s.p90, s.p99}) EXPECT_EQ(q, 2.5);
  EXPECT_EQ(s.ci95[0], 2.5);
  EXPECT_THROW(summarize(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(quantile_sorted(x, 1.5), std::invalid_argument);
}

// Failures often enough that trials differ: 64 nodes at 0.05 per node per day over a 30-day run.
EttrStudy noisy_study() {
  const model::FaultSpec spec{.node_failure_rate_per_day = 0.05, .failure_units = 64, .fixed_downtime_s = 1800,
                              .checkpoint = {.interval_steps = 100, .save_time_s = 30}};
  const model::RunSpec run{.step_time_s = 10, .n_steps = 259200};
  return run_ettr_study(spec, run, {.trials = 400, .seed = 3});
}

TEST(EttrStudyTails, JsonHasBothTailsInTheirOrderAndTheCiLevel) {
  const EttrStudy s = noisy_study();
  const nlohmann::json mc = ettr_study_json(s)["monte_carlo"];
  EXPECT_EQ(mc["ci_level"].get<double>(), 0.95);
  EXPECT_EQ(mc["ettr_bad_tail"], "low");
  EXPECT_EQ(mc["e2e_bad_tail"], "high");
  const double e1 = mc["ettr_p1"], e10 = mc["ettr_p10"], e50 = mc["ettr_p50"], e90 = mc["ettr_p90"], e99 = mc["ettr_p99"];
  EXPECT_LT(e1, e10);
  EXPECT_LT(e10, e50);
  EXPECT_LT(e50, e90);
  EXPECT_LT(e90, e99);
  // The worst ETTR and the longest run are the same trials: P1 of ETTR belongs with P99 of E2E.
  const double useful = 259200.0 * 10;
  EXPECT_NEAR(e1, useful / mc["e2e_p99_s"].get<double>(), 2e-3);
  EXPECT_NEAR(e99, useful / mc["e2e_p1_s"].get<double>(), 2e-3);
  EXPECT_LT(e1, mc["ettr_mean"].get<double>());
  EXPECT_GT(mc["e2e_p99_s"].get<double>(), mc["e2e_mean_s"].get<double>());
}

TEST(EttrStudyTails, TableLabelsTheCiAndTheBadTail) {
  const EttrStudy s = noisy_study();
  const std::string table = render_ettr_table(s);
  const SampleSummary& e = s.monte_carlo.summary.ettr;
  EXPECT_THAT(table, HasSubstr(format_number("(95 %% CI %.4f-", 100 * e.ci95[0]) + format_number("%.4f %%)", 100 * e.ci95[1])));
  EXPECT_THAT(table, ::testing::Not(HasSubstr("+-")));
  EXPECT_THAT(table, HasSubstr("P1      P10   median      P90      P99"));
  EXPECT_THAT(table, HasSubstr(format_number(" %8.4f", 100 * e.p1) + format_number(" %8.4f", 100 * e.p10)));
  EXPECT_THAT(table, HasSubstr("(low = bad: P1 = worst 1 % of runs)"));
  EXPECT_THAT(table, HasSubstr("(high = bad: P99 = worst 1 % of runs)"));
}

}  // namespace
}  // namespace mofasim::fault
