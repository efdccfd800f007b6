// Monte Carlo shards (sim/fault/trial_shards.h): the merged shards are the single-process run bit
// for bit, and bad merges are refused with a message naming the fault.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "model/fault_spec.h"
#include "sim/fault/monte_carlo.h"
#include "sim/fault/trial_shards.h"

namespace mofasim::fault {
namespace {

const model::FaultSpec kSpec{.node_failure_rate_per_day = 8.0 / 2048, .failure_units = 2048,
                             .classes = model::mofa_default_failure_classes(),
                             .checkpoint = {.interval_steps = 50, .save_time_s = 20}};
const model::RunSpec kRun{.step_time_s = 30, .n_steps = 20000};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Shard documents travel as text: dump and parse them as the command line does.
nlohmann::json through_text(const nlohmann::json& j) { return nlohmann::json::parse(j.dump()); }

TEST(ShardRange, SplitsContiguouslyAndEvenly) {
  EXPECT_EQ(shard_range(10, 0, 3), std::make_pair(std::int64_t{0}, std::int64_t{3}));
  EXPECT_EQ(shard_range(10, 1, 3), std::make_pair(std::int64_t{3}, std::int64_t{6}));
  EXPECT_EQ(shard_range(10, 2, 3), std::make_pair(std::int64_t{6}, std::int64_t{10}));
  EXPECT_EQ(shard_range(2, 2, 4), std::make_pair(std::int64_t{1}, std::int64_t{1}));  // empty shard
  EXPECT_THROW(shard_range(10, 3, 3), std::invalid_argument);
}

TEST(TrialShards, MergedShardsAreTheSingleRunBitForBit) {
  const MonteCarloOptions options{.trials = 700, .seed = 11, .threads = 2};
  const MonteCarloResult single = run_monte_carlo(kSpec, kRun, options);
  std::vector<nlohmann::json> docs;
  for (int i = 3; i-- > 0;) docs.push_back(through_text(run_trial_shard(kSpec, kRun, options, i, 3)));
  const MonteCarloResult merged = merge_trial_shards(docs, kRun, false);
  ASSERT_EQ(merged.trials.size(), 700u);
  EXPECT_EQ(merged.class_names, single.class_names);
  EXPECT_EQ(merged.failures_by_class, single.failures_by_class);
  for (std::size_t i = 0; i < 700; ++i) {
    EXPECT_TRUE(same_bits(merged.trials[i].wall_s, single.trials[i].wall_s)) << i;
    EXPECT_TRUE(same_bits(merged.trials[i].ettr, single.trials[i].ettr)) << i;
    EXPECT_EQ(merged.trials[i].failures, single.trials[i].failures) << i;
  }
  EXPECT_EQ(merged.summary.trials, 700);
  EXPECT_EQ(merged.summary.seed, 11u);
  EXPECT_TRUE(same_bits(merged.summary.ettr.mean, single.summary.ettr.mean));
  EXPECT_TRUE(same_bits(merged.summary.e2e_s.p90, single.summary.e2e_s.p90));
  EXPECT_TRUE(same_bits(merged.summary.mean_lost_work_s, single.summary.mean_lost_work_s));
  EXPECT_GT(single.summary.mean_failures, 0);  // the case has failures to get right
}

TEST(TrialShards, ARangeRunsExactlyThoseTrials) {
  const MonteCarloOptions all{.trials = 40, .seed = 3};
  const MonteCarloResult single = run_monte_carlo(kSpec, kRun, all);
  MonteCarloOptions part = all;
  part.first_trial = 25;
  part.end_trial = 31;
  const MonteCarloResult slice = run_monte_carlo(kSpec, kRun, part);
  ASSERT_EQ(slice.trials.size(), 6u);
  EXPECT_EQ(slice.summary.trials, 6);
  for (std::size_t k = 0; k < 6; ++k) EXPECT_TRUE(same_bits(slice.trials[k].wall_s, single.trials[25 + k].wall_s));
  part.end_trial = 41;
  EXPECT_THROW(run_monte_carlo(kSpec, kRun, part), std::invalid_argument);
}

std::string merge_error(const std::vector<nlohmann::json>& docs) {
  try {
    merge_trial_shards(docs, kRun, false);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(TrialShards, BadMergesNameTheProblem) {
  const MonteCarloOptions options{.trials = 90, .seed = 1};
  const auto shard = [&](int i) { return run_trial_shard(kSpec, kRun, options, i, 3); };
  EXPECT_EQ(merge_error({shard(0), shard(2)}), "trials 30 to 59 are in no shard");
  EXPECT_EQ(merge_error({shard(0), shard(1), shard(1), shard(2)}), "shards overlap at trial 30");
  EXPECT_EQ(merge_error({shard(0), shard(1)}), "the shards hold 60 of 90 trials (a shard is missing)");
  MonteCarloOptions other = options;
  other.seed = 2;
  EXPECT_EQ(merge_error({shard(0), run_trial_shard(kSpec, kRun, other, 1, 3)}),
            "shard 2 comes from a different run (trials, seed or failure classes differ)");
  EXPECT_EQ(merge_error({nlohmann::json{{"kind", "x"}}}), "shard 1 is not a Monte Carlo shard document");
  nlohmann::json broken = shard(0);
  broken["rows"][0].erase(0);
  EXPECT_EQ(merge_error({broken, shard(1), shard(2)}), "trial 0 has the wrong columns");
  EXPECT_EQ(merge_error({}), "no shards given");
}

TEST(TrialShards, ShardsWrittenBeforeFailSlowAreRunsWithoutIt) {
  // The format before fail-slow: rows end at the failures by class (one class here), with no
  // slow_s, mitigation_s, episodes, mitigations. Two trials of 100 steps of 9 s (900 s useful):
  // 900 + 50 lost + 40 checkpoints + 10 downtime = 1000 s, and 900 + 100 + 50 + 50 = 1100 s.
  const auto old = nlohmann::json::parse(
      R"({"kind": "mofasim.monte_carlo_shard", "trials": 2, "seed": 7, "first_trial": 0, "class_names": ["node"],
          "rows": [[1000.0, 0.9, 50.0, 40.0, 10.0, 0.0, 1, 1],
                   [1100.0, 0.8181818181818182, 100.0, 50.0, 50.0, 0.0, 2, 2]]})");
  const model::RunSpec run{.step_time_s = 9, .n_steps = 100};
  const MonteCarloResult merged = merge_trial_shards({old}, run, false);
  ASSERT_EQ(merged.trials.size(), 2U);
  EXPECT_EQ(merged.trials[1].wall_s, 1100);
  EXPECT_EQ(merged.trials[1].lost_work_s, 100);
  EXPECT_EQ(merged.trials[1].failures, 2);
  EXPECT_EQ(merged.failures_by_class, (std::vector<std::int64_t>{1, 2}));
  for (const TrialResult& t : merged.trials) {
    EXPECT_EQ(t.slow_s, 0);
    EXPECT_EQ(t.mitigation_s, 0);
    EXPECT_EQ(t.episodes, 0);
    EXPECT_EQ(t.mitigations, 0);
  }
  EXPECT_EQ(merged.summary.e2e_s.mean, 1050);
  EXPECT_DOUBLE_EQ(merged.summary.ettr_pooled, 900.0 / 1050);
  EXPECT_EQ(merged.summary.mean_failures, 1.5);
  EXPECT_EQ(merged.summary.mean_episodes, 0);
  // An old shard merges with a new one of the same run (trial 1 written with the four columns).
  auto first = old;
  first["rows"].erase(1);
  auto second = old;
  second["first_trial"] = 1;
  second["rows"].erase(0);
  for (const double x : {0.0, 0.0, 0.0, 0.0}) second["rows"][0].push_back(x);
  const MonteCarloResult mixed = merge_trial_shards({second, first}, run, false);
  EXPECT_EQ(mixed.summary.e2e_s.mean, 1050);
  // A row of neither length is still refused.
  auto short_row = old;
  short_row["rows"][0].erase(7);
  EXPECT_EQ(merge_error({short_row}), "trial 0 has the wrong columns");
  // A run with fail-slow on cannot take them: they ran without it.
  try {
    merge_trial_shards({old}, run, true);
    ADD_FAILURE() << "an old shard merged into a fail-slow run";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "trial 0 has no fail-slow columns (written before fail-slow), but this run has "
                           "fault_tolerance.fail_slow: run that shard again");
  }
  auto written_after = old;  // ... but the same rows with the four columns, yes
  for (auto& row : written_after["rows"]) {
    for (const double x : {0.0, 0.0, 0.0, 0.0}) row.push_back(x);
  }
  EXPECT_EQ(merge_trial_shards({written_after}, run, true).summary.e2e_s.mean, 1050);
}

}  // namespace
}  // namespace mofasim::fault
