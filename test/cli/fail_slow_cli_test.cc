// Fail-slow through `mofasim ettr`: the slow steps are simulated per pipeline stage, the time
// breakdown adds up to the mean end-to-end time, a section that is off changes nothing, and bad
// fields are located errors with exit status 2.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

namespace fs = std::filesystem;

// small.yaml (8 GPUs, pp 2, dp 2) with one slow GPU at 2x, 4 episodes per GPU per day of 1 h.
const std::string kSlow =
    " --set fault_tolerance.fail_slow.scope=gpu --set fault_tolerance.fail_slow.slowdown=2"
    " --set fault_tolerance.fail_slow.duration=1h";

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

nlohmann::json ettr(const std::string& extra) {
  const CliRun run = run_mofasim("ettr scenarios/small.yaml --json -q --step-time 1 --trials 300" + extra);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return nlohmann::json::parse(run.out);
}

TEST(CliFailSlow, SlowStepsArePricedPerStageAndTheTimeAddsUp) {
  const auto healthy_step = nlohmann::json::parse(run_mofasim("simulate scenarios/small.yaml --json -q").out);
  const auto j = ettr(kSlow + " --set fault_tolerance.fail_slow.rate_per_day=4");
  const auto& cases = j.at("fail_slow_cases");
  EXPECT_EQ(cases.at("scope"), "gpu");
  EXPECT_EQ(cases.at("units"), 8);
  EXPECT_DOUBLE_EQ(cases.at("healthy_step_s").get<double>(), healthy_step.at("step_time_s").get<double>());
  ASSERT_EQ(cases.at("slow_step_s_by_stage").size(), 2U);  // pp = 2 position classes
  for (int s = 0; s < 2; ++s) {
    const double slow = cases.at("slow_step_s_by_stage")[s].get<double>();
    EXPECT_GT(slow, cases.at("healthy_step_s").get<double>());
    EXPECT_DOUBLE_EQ(cases.at("slow_step_factor_by_stage")[s].get<double>(), slow / cases.at("healthy_step_s").get<double>());
  }
  const auto& mc = j.at("monte_carlo");
  // Onsets are Poisson on the wall clock: 4 per GPU per day on 8 GPUs over the mean run (about
  // 5 episodes, so a standard error of about sqrt(5 / 300) = 0.13 over 300 trials; 4 of them here).
  const double expected = 32.0 / 86400 * mc.at("e2e_mean_s").get<double>();
  EXPECT_NEAR(mc.at("fail_slow").at("episodes_mean").get<double>(), expected, 4 * std::sqrt(expected / 300));
  EXPECT_GT(mc.at("fail_slow").at("slow_steps_mean_s").get<double>(), 0);
  double sum = 0;
  for (const auto& [key, seconds] : mc.at("time_breakdown_mean_s").items()) sum += seconds.get<double>();
  EXPECT_NEAR(sum, mc.at("e2e_mean_s").get<double>(), 1e-9 * sum);
  // Goodput: 16 sequences of 256 tokens per step, 10,000 steps, over each run's wall time.
  EXPECT_LT(mc.at("goodput_p1_tokens_per_s").get<double>(), mc.at("goodput_p99_tokens_per_s").get<double>());
  EXPECT_LE(mc.at("goodput_p99_tokens_per_s").get<double>(), 16.0 * 256 * 10000 / 10000);
}

TEST(CliFailSlow, PerTrialCsvCarriesTheFailSlowColumns) {
  const std::string csv = (fs::temp_directory_path() / ("mofasim_fail_slow_" + std::to_string(::getpid()) + ".csv")).string();
  const CliRun run = run_mofasim("ettr scenarios/small.yaml -q --step-time 1 --trials 20 --csv " + csv + kSlow +
                                 " --set fault_tolerance.fail_slow.rate_per_day=4");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string text = read_file(csv);
  fs::remove(csv);
  EXPECT_TRUE(text.starts_with("trial,wall_s,ettr,lost_work_s,checkpoint_s,downtime_s,init_s,failures,failures_process,"
                               "failures_pod,failures_job,slow_s,policy_restarts_s,episodes,actions\n"))
      << text.substr(0, 200);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 21);  // the header and 20 trials
}

TEST(CliFailSlow, ASectionAtRateZeroChangesNothing) {
  const auto off = ettr("");
  const auto zero = ettr(kSlow + " --set fault_tolerance.fail_slow.rate_per_day=0");
  EXPECT_EQ(off.at("monte_carlo"), zero.at("monte_carlo"));
  EXPECT_FALSE(zero.contains("fail_slow_cases"));
}

TEST(CliFailSlow, BadFieldsAreLocatedErrors) {
  const CliRun slow = run_mofasim(
      "ettr scenarios/small.yaml -q --step-time 1 --trials 10 --set fault_tolerance.fail_slow.scope=gpu"
      " --set fault_tolerance.fail_slow.slowdown=0.5 --set fault_tolerance.fail_slow.duration=1h"
      " --set fault_tolerance.fail_slow.rate_per_day=1");
  EXPECT_EQ(slow.exit_code, 2);
  EXPECT_EQ(first_line(slow.err), "--set:2:36: fault_tolerance.fail_slow.slowdown: must be >= 1, got 0.500000");
  const CliRun length = run_mofasim(
      "ettr scenarios/small.yaml -q --step-time 1 --trials 10 --set fault_tolerance.fail_slow.rate_per_day=1"
      " --set fault_tolerance.fail_slow.slowdown=2");
  EXPECT_EQ(length.exit_code, 2);
  // The field is absent, so the error points at the section (created by the first --set).
  EXPECT_EQ(first_line(length.err), "--set:1:1: fault_tolerance.fail_slow.duration: missing or 0 (the mean episode length, > 0)");
}

}  // namespace
}  // namespace mofasim::test
