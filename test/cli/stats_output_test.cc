// End-to-end checks of what `ettr`, `sweep` and `tune --merge` print: the labelled CI and both
// tails, the sweep's E2E ranking and plot labels, and shard merges that keep their counts.
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string temp(const std::string& name) {
  return (fs::temp_directory_path() / ("mofasim_stats_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(CliStats, EttrPrintsTheCiLevelAndBothTails) {
  const std::string args = "ettr scenarios/mofa/table5-llama2-70b-128.yaml --step-time 27.83 --trials 500 -q";
  const CliRun text = run_mofasim(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("(95 % CI "));
  EXPECT_THAT(text.out, ::testing::Not(HasSubstr("+-")));
  EXPECT_THAT(text.out, HasSubstr("(low = bad: P1 = worst 1 % of runs)"));
  const CliRun json = run_mofasim(args + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json mc = nlohmann::json::parse(json.out)["monte_carlo"];
  EXPECT_LT(mc["ettr_p1"].get<double>(), mc["ettr_p50"].get<double>());
  EXPECT_LT(mc["ettr_p50"].get<double>(), mc["ettr_p99"].get<double>());
  EXPECT_GT(mc["e2e_p99_s"].get<double>(), mc["e2e_p1_s"].get<double>());
  EXPECT_EQ(mc["ci_level"].get<double>(), 0.95);
}

TEST(CliStats, SweepRanksByEndToEndTimeAndLabelsItsAxes) {
  const std::string prefix = temp("sweep");
  const CliRun run = run_mofasim(
      "sweep scenarios/mofa/table5-llama2-70b-128.yaml --step-time 27.83 --trials 100 -q "
      "--param fault_tolerance.checkpoint.interval_steps=60:160:20 --out '" + prefix + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string csv = read_file(prefix + ".csv");
  const std::string svg = read_file(prefix + ".svg");
  fs::remove(prefix + ".csv");
  fs::remove(prefix + ".svg");
  // MoFa(44) puts the optimum at 107.9 steps; among 60..160 by 20 the shortest run is at 100.
  EXPECT_THAT(run.out, HasSubstr("best (shortest analytic end-to-end time): fault_tolerance.checkpoint.interval_steps = 100\n"));
  EXPECT_THAT(run.out, HasSubstr("within Monte Carlo noise of the best"));
  EXPECT_THAT(csv, HasSubstr("\n100,27.83,"));
  EXPECT_THAT(svg, HasSubstr(">checkpoint interval (steps)</text>"));
  EXPECT_THAT(svg, HasSubstr(">shortest E2E at 100: "));
}

TEST(CliStats, TuneMergeOfShardCsvsPrintsTheUnshardedCounts) {
  const std::string scenario = "tune scenarios/mofa/table5-llama3-405b-64.yaml -q --rerank 0 --threads 1";
  const CliRun whole = run_mofasim(scenario);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const std::string s0 = temp("s0.csv"), s1 = temp("s1.csv");
  ASSERT_EQ(run_mofasim(scenario + " --shard 0/2 --csv '" + s0 + "'").exit_code, 0);
  ASSERT_EQ(run_mofasim(scenario + " --shard 1/2 --csv '" + s1 + "'").exit_code, 0);
  const CliRun merged = run_mofasim(scenario + " --merge '" + s0 + "' '" + s1 + "'");
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(merged.out, whole.out);
  EXPECT_THAT(merged.out, HasSubstr("space: 1935360 configurations (3360 layouts)"));
  // A malformed shard is bad input, named by its file.
  const std::string bad = temp("bad.csv");
  { std::ofstream(bad) << "id,tp\n1,2\n"; }
  const CliRun rejected = run_mofasim(scenario + " --merge '" + s0 + "' '" + bad + "'");
  EXPECT_EQ(rejected.exit_code, 2);
  EXPECT_EQ(rejected.err, "mofasim tune: --merge: " + bad + ": tuner CSV line 1: expected 34 fields, got 2\n");
  fs::remove(s0);
  fs::remove(s1);
  fs::remove(bad);
}

}  // namespace
}  // namespace mofasim::test
