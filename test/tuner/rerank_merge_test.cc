// Tests of the two tuner outputs that used to mislead: the re-rank's end-to-end time (re-computed
// from the simulated step, not kept from the analytic one) and the shard merge's counts (summed
// from the shards' stats lines, equal to the unsharded run's).
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/tuner/merge.h"
#include "sim/tuner/report.h"
#include "sim/tuner/rerank.h"
#include "sim/tuner/tune.h"
#include "sim/units/format.h"
#include "test/tuner/tuner_test_support.h"

namespace mofasim::tuner {
namespace {

using ::testing::HasSubstr;
using testing::synthetic_evaluator;
using testing::tiny_problem;

// 16 GPUs = 2 nodes at λ = 0.0432 per node per day: c = 1e-6 failures/s; t_save 50 s, D 100 s,
// N_steps 1e6 (the hand-worked case of tune_test.cc). MoFa(40) at interval n and step T:
//   T_total(n, T) = (N_steps T + (N_steps / n) t_save) / (1 - c (D + n T / 2)).
E2ESettings hand_worked_settings() {
  E2ESettings s;
  s.fault.node_failure_rate_per_day = 0.0432;
  s.fault.fixed_downtime_s = 100.0;
  s.fault.checkpoint.save_time_s = 50.0;
  s.n_steps = 1'000'000;
  return s;
}

double eq40(double n, double step_s) { return (1e6 * step_s + 1e6 / n * 50.0) / (1 - 1e-6 * (100.0 + n * step_s / 2)); }

// The best integer interval by brute force, independent of MoFa(44)'s root.
std::pair<std::int64_t, double> best_eq40(double step_s) {
  std::pair<std::int64_t, double> best{0, std::numeric_limits<double>::infinity()};
  for (std::int64_t n = 1; n <= 20000; ++n) {
    const double t = eq40(static_cast<double>(n), step_s);
    if (t > 0 && t < best.second) best = {n, t};
  }
  return best;
}

// Analytic steps 10, 11, 12 s; the "simulation" says 13, 10.5, 12.5 s. With E2E the rows carry
// the analytic T_total; the re-rank must re-compute it from the simulated step.
TEST(TunerRerankE2E, EndToEndTimeIsRecomputedFromTheSimulatedStep) {
  const TuneProblem problem = tiny_problem(16, 8, 8);
  TuneOptions options;
  options.e2e = hand_worked_settings();
  TuneResult r;
  for (int k = 0; k < 3; ++k) {
    Row row;
    row.candidate.id = static_cast<std::uint64_t>(k);
    row.candidate.layout = Layout{.tp = 1 << k, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .dp = 16 >> k};
    row.step.step_time_s = 10.0 + k;
    row.e2e = estimate_e2e(*options.e2e, row.candidate.layout, row.step.step_time_s, problem.topology);
    r.rows.push_back(row);
  }
  rank_rows(r);
  // The analytic row at 10 s: MoFa(44) gives 994.9 steps, the better neighbour is kept.
  EXPECT_TRUE(r.ranked(0).e2e->interval_steps == 994 || r.ranked(0).e2e->interval_steps == 995);
  EXPECT_NEAR(r.ranked(0).e2e->total_s, best_eq40(10).second, 1e-9 * best_eq40(10).second);

  const StepFn simulate = [](const ConfigView& v) {
    StepEvaluation e;
    e.step_time_s = v.parallel.tp == 1 ? 13.0 : (v.parallel.tp == 2 ? 10.5 : 12.5);
    return e;
  };
  const RerankResult rr = rerank(r, problem, options, 5, simulate);
  ASSERT_EQ(rr.entries.size(), 3u);
  const std::vector<double> simulated_in_order = {10.5, 12.5, 13.0};
  for (std::size_t k = 0; k < 3; ++k) {
    const RerankEntry& e = rr.entries[k];
    EXPECT_EQ(e.simulated.step_time_s, simulated_in_order[k]);
    ASSERT_TRUE(e.simulated_e2e.has_value());
    const auto [n, total] = best_eq40(e.simulated.step_time_s);
    EXPECT_EQ(e.simulated_e2e->interval_steps, n) << "entry " << k;
    EXPECT_NEAR(e.simulated_e2e->total_s, total, 1e-9 * total) << "entry " << k;
    EXPECT_NEAR(e.simulated_e2e->ettr, 1e6 * e.simulated.step_time_s / total, 1e-12);
    // Not the analytic row's value: its step differs.
    EXPECT_NE(e.simulated_e2e->total_s, r.rows[e.row].e2e->total_s);
  }
  const std::string text = format_rerank(r, rr);
  EXPECT_THAT(text, HasSubstr("   simulated_E2E"));
  // End-to-end times in the one duration format of every command's text (sim/units/format.h).
  EXPECT_THAT(text, HasSubstr(" " + format_duration(best_eq40(10.5).second) + " "));
}

TuneOptions shardable_options() {
  TuneOptions o;
  o.space.max_vpp = 4;
  o.space.max_micro_batch = 4;
  o.rules.overlap_dominates = false;
  return o;
}

TEST(TunerMergeCounts, CsvShardsMergeToTheUnshardedCounts) {
  const TuneProblem problem = tiny_problem(16, 8, 32);
  const Evaluator ev = synthetic_evaluator(6.0);
  TuneOptions o = shardable_options();
  const TuneResult whole = tune(problem, o, ev);
  ASSERT_GT(whole.stats.raw_configs, 0u);
  std::vector<std::string> csvs;
  for (int i = 0; i < 3; ++i) {
    o.shard = Shard{.index = i, .count = 3};
    std::ostringstream csv;
    write_csv(csv, tune(problem, o, ev));
    csvs.push_back(csv.str());
  }
  EXPECT_EQ(csvs[0].rfind(std::string(kCsvStatsPrefix), 0), 0u);
  const TuneResult merged = merge_csv(csvs);
  EXPECT_EQ(to_json(merged.stats), to_json(whole.stats));
  EXPECT_EQ(format_stats(merged.stats), format_stats(whole.stats));
  EXPECT_THAT(format_stats(merged.stats),
              HasSubstr("space: " + std::to_string(whole.stats.raw_configs) + " configurations"));

  // Two of three shards: a third of the layouts (rounded) is missing, the space is still known.
  const TuneResult partial = merge_csv({csvs[0], csvs[1]});
  EXPECT_EQ(partial.stats.raw_configs, whole.stats.raw_configs);
  EXPECT_LT(partial.stats.shard_configs, whole.stats.shard_configs);
  EXPECT_EQ(partial.stats.evaluated, partial.rows.size());
}

TEST(TunerMergeCounts, StatsLineMustAgreeWithTheRowsAndOldFilesSayCountsAreUnknown) {
  const TuneProblem problem = tiny_problem(16, 8, 32);
  const TuneResult whole = tune(problem, shardable_options(), synthetic_evaluator(6.0));
  std::ostringstream out;
  write_csv(out, whole);
  std::string csv = out.str();
  // Drop the last row: the stats line still says every row was evaluated.
  std::string cut = csv.substr(0, csv.rfind('\n', csv.size() - 2) + 1);
  try {
    merge_csv({cut});
    ADD_FAILURE() << "a shard with a missing row was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "tuner merge: shard 1 says " + std::to_string(whole.rows.size()) +
                                         " evaluated but holds " + std::to_string(whole.rows.size() - 1) + " rows");
  }
  // A file without the stats line (written before it existed): rows only, and format_stats says so.
  const std::string old = csv.substr(csv.find('\n') + 1);
  const TuneResult merged = merge_csv({old});
  EXPECT_EQ(merged.stats.evaluated, whole.stats.evaluated);
  EXPECT_EQ(merged.stats.feasible, whole.stats.feasible);
  EXPECT_THAT(format_stats(merged.stats), HasSubstr("space: unknown"));
  EXPECT_THAT(format_stats(merged.stats), ::testing::Not(HasSubstr("space: 0")));
  EXPECT_EQ(read_csv(old).size(), read_csv(csv).size());
}

}  // namespace
}  // namespace mofasim::tuner
