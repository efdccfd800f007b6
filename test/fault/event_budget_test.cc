// Tests of the Monte Carlo work bounds: the closed-form expected failures per trial against hand
// values and against the trials themselves, the up-front refusal and the in-run stop (the same for
// any thread count), the thread cap, and a trial at INT64_MAX steps (no signed overflow).
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/fault_spec.h"
#include "sim/fault/event_budget.h"
#include "sim/fault/failure_sampler.h"
#include "sim/fault/monte_carlo.h"
#include "sim/fault/rng.h"
#include "sim/fault/trial.h"

namespace mofasim::fault {
namespace {

using model::FaultSpec;
using model::RunSpec;

// One failure unit at lambda per day such that c * 100 s = ln 2: a 100 s segment is retried until
// an attempt sees no failure (probability 1/2), so it meets e^{ln 2} - 1 = 1 failure on average.
constexpr double kLn2Per100sPerDay = std::numbers::ln2 / 100 * 86400;

FaultSpec ln2_spec() {
  return FaultSpec{.node_failure_rate_per_day = kLn2Per100sPerDay, .failure_units = 1, .fixed_downtime_s = 10.0,
                   .checkpoint = {.interval_steps = 100, .save_time_s = 0}, .init_time_s = 0};
}

TEST(EventBudget, ExpectedFailuresHandValues) {
  // 1000 steps of 1 s, segments of 100: 10 segments, one failure each.
  EXPECT_NEAR(expected_failures_per_trial(ln2_spec(), {.step_time_s = 1, .n_steps = 1000}), 10.0, 1e-9);
  // 1050 steps: 10 full segments and one of 50 s, e^{ln2 / 2} - 1 = sqrt(2) - 1.
  EXPECT_NEAR(expected_failures_per_trial(ln2_spec(), {.step_time_s = 1, .n_steps = 1050}), 10 + std::sqrt(2.0) - 1,
              1e-9);
  // Failures during recovery: a 100 s downtime meets e^{ln 2} - 1 = 1 more failure per failure, so
  // 2 per segment failure; a 100 s init meets 1 failure (and its recovery 1 more): (10 + 1) * 2.
  FaultSpec spec = ln2_spec();
  spec.fixed_downtime_s = 100.0;
  spec.init_time_s = 100;
  spec.failures_during_recovery = true;
  EXPECT_NEAR(expected_failures_per_trial(spec, {.step_time_s = 1, .n_steps = 1000}), 22.0, 1e-9);
  // No failures at rate 0; infinity when e^{cS} overflows.
  spec.node_failure_rate_per_day = 0;
  EXPECT_EQ(expected_failures_per_trial(spec, {.step_time_s = 1, .n_steps = 1000}), 0);
  EXPECT_EQ(expected_failures_per_trial(ln2_spec(), {.step_time_s = 1e6, .n_steps = 1000}),
            std::numeric_limits<double>::infinity());
}

TEST(EventBudget, EstimateMatchesTheTrials) {
  // 4000 Poisson trials of 10 segments: mean 10 failures, standard deviation of one trial's count
  // sqrt(10 * 2) (geometric, variance (1-p)/p^2 = 2 per segment), so the mean is 10 +- 0.07.
  const MonteCarloResult r = run_monte_carlo(ln2_spec(), {.step_time_s = 1, .n_steps = 1000}, {.trials = 4000, .seed = 3});
  EXPECT_NEAR(r.summary.mean_failures, 10.0, 0.3);
}

TEST(EventBudget, RefusedUpFrontWithTheEstimate) {
  const RunSpec run{.step_time_s = 1, .n_steps = 1000};
  // 100 trials x 10 = 1000 events: exactly the budget passes, one less is refused.
  EXPECT_NO_THROW(check_event_budget(ln2_spec(), run, 100, 1001));
  try {
    check_event_budget(ln2_spec(), run, 100, 999);
    FAIL() << "expected EventBudgetExceeded";
  } catch (const EventBudgetExceeded& e) {
    EXPECT_EQ(std::string(e.what()),
              "monte carlo: a trial is expected to meet 10 failures (a checkpoint segment is 100 s of exposed time "
              "against a mean time between failures of 144 s), so 100 trials need 1e+03 failure events, over the "
              "budget of 999; shorten fault_tolerance.checkpoint.interval_steps or the run, lower the failure rate, "
              "or use fewer --trials or a larger --max-events");
  }
  EXPECT_THROW(run_monte_carlo(ln2_spec(), run, {.trials = 100, .max_events = 999}), EventBudgetExceeded);
}

TEST(EventBudget, StopsInTheRunTheSameForAnyThreadCount) {
  // Expected 10 failures a trial, 1000 trials: an estimate of 10000 events. With seed 11 the trials
  // draw 10083 in all, so a budget of 10082 passes the up-front check but is passed during the run:
  // the error is the same for any thread count, and a budget of 10083 completes.
  const RunSpec run{.step_time_s = 1, .n_steps = 1000};
  const MonteCarloResult full = run_monte_carlo(ln2_spec(), run, {.trials = 1000, .seed = 11, .threads = 1});
  std::int64_t total = 0;
  for (const TrialResult& t : full.trials) total += t.failures;
  ASSERT_EQ(total, 10083);
  for (int threads : {1, 2, 4}) {
    const MonteCarloResult ok =
        run_monte_carlo(ln2_spec(), run, {.trials = 1000, .seed = 11, .threads = threads, .max_events = 10083});
    EXPECT_EQ(ok.summary.mean_failures, full.summary.mean_failures) << threads;
    try {
      (void)run_monte_carlo(ln2_spec(), run, {.trials = 1000, .seed = 11, .threads = threads, .max_events = 10082});
      FAIL() << "expected EventBudgetExceeded with " << threads << " threads";
    } catch (const EventBudgetExceeded& e) {
      EXPECT_EQ(std::string(e.what()).substr(0, 71),
                "monte carlo: the trials met more than their budget of 10082 failure eve")
          << threads;
    }
  }
}

// Fail-slow only (no failures): onsets at 864 per unit per day on one unit, one every 100 s of
// wall time, lasting a fixed `episode_s` at `factor`. Built member by member (GCC 12 warns falsely on
// designated initialisers that skip a vector).
FaultSpec fail_slow_spec(double episode_s, double factor) {
  FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 0.0,
                 .checkpoint = {.interval_steps = 1000, .save_time_s = 0}, .init_time_s = 0};
  spec.fail_slow.rate_per_unit_per_day = 864;
  spec.fail_slow.units = 1;
  spec.fail_slow.duration.kind = model::RecoveryKind::kFixed;
  spec.fail_slow.duration.mean_s = episode_s;
  spec.fail_slow.slow_step_factor = {factor};
  return spec;
}

TEST(EventBudget, FailSlowEpisodesCountUpFront) {
  // 1000 s of useful time at one onset per 100 s: at least 10 episodes a trial, no failures; 100
  // trials need 1000 events. Episodes used to be outside the budget (an estimate of 0).
  const FaultSpec spec = fail_slow_spec(10, 2);
  const RunSpec run{.step_time_s = 1, .n_steps = 1000};
  EXPECT_DOUBLE_EQ(expected_fail_slow_episodes_per_trial(spec, run), 10.0);
  EXPECT_EQ(expected_fail_slow_episodes_per_trial(ln2_spec(), run), 0);  // fail-slow off
  EXPECT_NO_THROW(check_event_budget(spec, run, 100, 1000));
  try {
    check_event_budget(spec, run, 100, 999);
    FAIL() << "expected EventBudgetExceeded";
  } catch (const EventBudgetExceeded& e) {
    EXPECT_EQ(std::string(e.what()),
              "monte carlo: a trial is expected to meet 0 failures and at least 10 fail-slow episodes, so 100 trials "
              "need 1e+03 events, over the budget of 999; shorten fault_tolerance.checkpoint.interval_steps or the "
              "run, lower the failure rate or fault_tolerance.fail_slow.rate_per_day, or use fewer --trials or a "
              "larger --max-events");
  }
  // Failures and episodes add up: 10 + 10 a trial with the ln 2 failure rate.
  FaultSpec both = spec;
  both.node_failure_rate_per_day = kLn2Per100sPerDay;
  both.checkpoint.interval_steps = 100;
  both.fixed_downtime_s = 10.0;
  EXPECT_NO_THROW(check_event_budget(both, run, 100, 2000));
  EXPECT_THROW(check_event_budget(both, run, 100, 1999), EventBudgetExceeded);
}

TEST(EventBudget, FailSlowEpisodesStopTheRun) {
  // Episodes of 1000 s at 10x: the job is slow nearly all the time, so a trial's 1000 s of work
  // takes about 10,000 s of wall time and meets about 100 onsets, 10x the up-front lower bound.
  // 20 trials: 200 events estimated, about 2000 met; a budget of 1000 passes the estimate and is
  // passed during the run (each trial alone stays under it, so only the shared count stops it).
  const FaultSpec spec = fail_slow_spec(1000, 10);
  const RunSpec run{.step_time_s = 1, .n_steps = 1000};
  const MonteCarloResult full = run_monte_carlo(spec, run, {.trials = 20, .seed = 5, .threads = 1});
  std::int64_t total = 0;
  for (const TrialResult& t : full.trials) {
    EXPECT_LT(t.episodes, 1000);
    total += t.episodes;
  }
  ASSERT_GT(total, 1500);
  for (int threads : {1, 2}) {
    try {
      (void)run_monte_carlo(spec, run, {.trials = 20, .seed = 5, .threads = threads, .max_events = 1000});
      FAIL() << "expected EventBudgetExceeded with " << threads << " threads";
    } catch (const EventBudgetExceeded& e) {
      EXPECT_EQ(std::string(e.what()).substr(0, 70),
                "monte carlo: the trials met more than their budget of 1000 failure eve")
          << threads;
    }
  }
  // A budget of exactly the events met completes.
  EXPECT_NO_THROW(run_monte_carlo(spec, run, {.trials = 20, .seed = 5, .threads = 2, .max_events = total}));
}

TEST(EventBudget, ThreadCountIsCapped) {
  const RunSpec run{.step_time_s = 1, .n_steps = 1000};
  try {
    (void)run_monte_carlo(ln2_spec(), run, {.trials = 10, .threads = kMaxMonteCarloThreads + 1});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "monte_carlo.threads must be in [1, 1024], got 1025");
  }
  // The most threads, fewer trials than one chunk: the same result as one thread.
  const MonteCarloResult many = run_monte_carlo(ln2_spec(), run, {.trials = 300, .seed = 5, .threads = 1024});
  const MonteCarloResult one = run_monte_carlo(ln2_spec(), run, {.trials = 300, .seed = 5, .threads = 1});
  EXPECT_EQ(many.summary.e2e_s.mean, one.summary.e2e_s.mean);
  EXPECT_EQ(many.summary.mean_failures, one.summary.mean_failures);
}

TEST(EventBudget, TrialAtInt64MaxStepsDoesNotOverflow) {
  // No failures; INT64_MAX steps of 1 s in segments of 3 (INT64_MAX = 3 * 3074457345618258602 + 1):
  // 3074457345618258603 saves of 1 s. Rounding the segment count up used to add interval - 1 to
  // INT64_MAX first.
  const FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 1.0,
                       .checkpoint = {.interval_steps = 3, .save_time_s = 1}, .init_time_s = 0};
  const RunSpec run{.step_time_s = 1, .n_steps = std::numeric_limits<std::int64_t>::max()};
  const FailureSampler sampler(spec);
  Rng rng(1, 0);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(sampler.num_classes()), 0);
  const TrialResult t = simulate_trial(spec, run, sampler, rng, counts);
  EXPECT_EQ(t.failures, 0);
  EXPECT_DOUBLE_EQ(t.checkpoint_s, 3074457345618258603.0);
  EXPECT_DOUBLE_EQ(t.wall_s, 9223372036854775807.0 + 3074457345618258603.0);
}

}  // namespace
}  // namespace mofasim::fault
