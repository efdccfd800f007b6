// Tests of fail-slow episodes in the Monte Carlo injector (model::FailSlowSpec): off, the trials
// are today's bit for bit; on, the mean wall time of a simple case matches a closed form derived
// below within 3 standard errors, and each policy (restart, cordon, hot spare) does what it says.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "model/fault_spec.h"
#include "sim/fault/failure_sampler.h"
#include "sim/fault/monte_carlo.h"
#include "sim/fault/rng.h"
#include "sim/fault/trial.h"
#include "sim/fault/statistics.h"

namespace mofasim::fault {
namespace {

using model::CheckpointMode;
using model::FailSlowPolicy;
using model::FailSlowSpec;
using model::FaultSpec;
using model::RecoveryKind;
using model::RunSpec;

// A failure process with one recorded gap of `gap_s` exposed seconds: failures are deterministic.
model::FailureProcess every(double gap_s) {
  return {.kind = model::FailureProcessKind::kEmpirical, .inter_arrival_s = {gap_s}, .recorded_units = 1};
}

// Distributions and sections built member by member: GCC 12 warns falsely on designated
// initialisers that skip a vector (the same note is in sim/executor/simulate_step.h).
model::RecoveryDistribution lasting(RecoveryKind kind, double mean_s, double sigma = 0) {
  model::RecoveryDistribution d;
  d.kind = kind;
  d.mean_s = mean_s;
  d.sigma = sigma;
  return d;
}

FailSlowSpec episodes(double rate_per_unit_per_day, std::int64_t units, const model::RecoveryDistribution& duration,
                      std::vector<double> factors, FailSlowPolicy policy = FailSlowPolicy::kNone) {
  FailSlowSpec f;
  f.rate_per_unit_per_day = rate_per_unit_per_day;
  f.units = units;
  f.duration = duration;
  f.slow_step_factor = std::move(factors);
  f.policy = policy;
  return f;
}

// A fail-slow section with every field set but the rate: it must change nothing.
FailSlowSpec off_but_filled() {
  FailSlowSpec f = episodes(0, 64, lasting(RecoveryKind::kExponential, 600), {3, 4}, FailSlowPolicy::kRestart);
  f.detection_time_s = 60;
  f.action_time_s = 30;
  f.cordon_step_factor = 1.2;
  f.dp_replicas = 8;
  return f;
}

void expect_same_trials(const MonteCarloResult& a, const MonteCarloResult& b) {
  ASSERT_EQ(a.trials.size(), b.trials.size());
  for (std::size_t i = 0; i < a.trials.size(); ++i) {
    // Bit for bit: == on doubles, not a tolerance.
    EXPECT_EQ(a.trials[i].wall_s, b.trials[i].wall_s) << "trial " << i;
    EXPECT_EQ(a.trials[i].ettr, b.trials[i].ettr) << "trial " << i;
    EXPECT_EQ(a.trials[i].lost_work_s, b.trials[i].lost_work_s) << "trial " << i;
    EXPECT_EQ(a.trials[i].checkpoint_s, b.trials[i].checkpoint_s) << "trial " << i;
    EXPECT_EQ(a.trials[i].downtime_s, b.trials[i].downtime_s) << "trial " << i;
    EXPECT_EQ(a.trials[i].failures, b.trials[i].failures) << "trial " << i;
  }
  EXPECT_EQ(a.failures_by_class, b.failures_by_class);
}

TEST(FailSlowOff, DeterministicBlockingRunIsTheHandWorkedOne) {
  // Steps 10 s, N = 10, save 10 s, D = 50 s, a failure every 250 exposed seconds (saves exposed).
  // Segments end at 110 and 220; the third is hit at wall 250, 30 s into its steps (lost 30);
  // recovery to 300, segment 3 again: done at 300 + 100 + 10 = 410. The failure after it would
  // come at exposed 250 after 250 s, past the end (110 s later). With a fail-slow section that is
  // off, the same.
  FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 1, .fixed_downtime_s = 50.0,
                 .checkpoint = {.interval_steps = 10, .save_time_s = 10}, .process = every(250)};
  spec.fail_slow = off_but_filled();
  const TrialResult t = run_monte_carlo(spec, {.step_time_s = 10, .n_steps = 30}, {.trials = 1, .seed = 7}).trials[0];
  EXPECT_EQ(t.wall_s, 410);
  EXPECT_EQ(t.lost_work_s, 30);
  EXPECT_EQ(t.checkpoint_s, 30);
  EXPECT_EQ(t.downtime_s, 50);
  EXPECT_EQ(t.slow_s, 0);
  EXPECT_EQ(t.episodes, 0);
}

TEST(FailSlowOff, DeterministicAsyncRunIsTheHandWorkedOne) {
  // Cycles of 100, 100, 100 and 50 s of steps, 1 s snapshots, 150 s background writes that outlast
  // 100 s of steps: waits of 50, 50 and 100 s; wall = 350 + 200 + 4 * 1 + 150 = 704 s.
  FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 1.0,
                 .checkpoint = {.interval_steps = 10, .save_time_s = 150, .mode = CheckpointMode::kAsync,
                                .snapshot_time_s = 1}};
  spec.fail_slow = off_but_filled();
  const TrialResult t = run_monte_carlo(spec, {.step_time_s = 10, .n_steps = 35}, {.trials = 1, .seed = 7}).trials[0];
  EXPECT_EQ(t.wall_s, 704);
  EXPECT_EQ(t.checkpoint_s, 354);
}

TEST(FailSlowOff, PoissonTrialsAreBitIdentical) {
  for (const CheckpointMode mode : {CheckpointMode::kBlocking, CheckpointMode::kAsync}) {
    FaultSpec spec{.node_failure_rate_per_day = 0.01, .failure_units = 2048,
                   .classes = model::mofa_default_failure_classes(),
                   .checkpoint = {.interval_steps = 40, .save_time_s = 30, .mode = mode, .snapshot_time_s = 2,
                                  .restore_time_s = 20},
                   .init_time_s = 300};
    const RunSpec run{.step_time_s = 6.3, .n_steps = 200000};
    const MonteCarloOptions options{.trials = 300, .seed = 11, .threads = 2};
    const MonteCarloResult plain = run_monte_carlo(spec, run, options);
    spec.fail_slow = off_but_filled();
    expect_same_trials(plain, run_monte_carlo(spec, run, options));
  }
}

TEST(FailSlowOn, EpisodesThatSlowNothingLeaveTheFailStopDrawsAlone) {
  // Fail-slow draws come from their own stream, so episodes of factor 1 change no failure time
  // and no class: the same failures per trial, and the wall time up to rounding (work is then
  // advanced event by event).
  FaultSpec spec{.node_failure_rate_per_day = 0.01, .failure_units = 2048,
                 .classes = model::mofa_default_failure_classes(),
                 .checkpoint = {.interval_steps = 40, .save_time_s = 30}};
  const RunSpec run{.step_time_s = 6.3, .n_steps = 100000};
  const MonteCarloOptions options{.trials = 200, .seed = 5, .threads = 2};
  const MonteCarloResult plain = run_monte_carlo(spec, run, options);
  spec.fail_slow = episodes(0.02, 2048, lasting(RecoveryKind::kExponential, 3600), {1});
  const MonteCarloResult slow = run_monte_carlo(spec, run, options);
  EXPECT_EQ(plain.failures_by_class, slow.failures_by_class);
  for (std::size_t i = 0; i < plain.trials.size(); ++i) {
    EXPECT_NEAR(slow.trials[i].wall_s, plain.trials[i].wall_s, 1e-9 * plain.trials[i].wall_s) << "trial " << i;
  }
  EXPECT_GT(slow.summary.mean_episodes, 100);  // 0.02 * 2048 per day over ~7.5 days
}

// The closed form. No fail-stops, no checkpoint cost, policy none; episodes start as a Poisson
// process of rate r (per second, the whole job), last Exp(mean d) each and slow the step by a
// factor s while at least one is in force. The number in force is then an M/M/inf queue that
// starts empty: with m(t) = r d (1 - e^{-t/d}) episodes expected at t, the chance that the job is
// slow is q(t) = 1 - e^{-m(t)}, tending to q = 1 - e^{-r d}. Work advances at pace 1 when healthy
// and 1/s when slow, so its long-run pace is mu = e^{-r d} + (1 - e^{-r d}) / s, and the expected
// work done by wall time t is mu t + C(t) with C(t) -> C = (1 - 1/s) Int_0^inf (q - q(t)) dt
// = (1 - 1/s) d e^{-r d} Ein(r d), Ein(x) = sum_{k>=1} x^k / (k k!) (substitute u = e^{-t/d}). A
// run of W healthy seconds of work therefore ends, in expectation, at
//     E[T] = (W - C) / mu,
// up to the correlation between the end time and the state then, which is O(d) as C is, and W
// is 10^3 d here. (docs/fail-slow-study.md has the same derivation.)
double expected_wall(double w, double r, double d, double s) {
  const double x = r * d;
  double ein = 0;
  double term = 1;
  for (int k = 1; k < 60; ++k) {
    term *= x / k;  // x^k / k!
    ein += term / k;
  }
  const double mu = std::exp(-x) + (1 - std::exp(-x)) / s;
  const double c = (1 - 1 / s) * d * std::exp(-x) * ein;
  return (w - c) / mu;
}

class ClosedForm : public ::testing::TestWithParam<double> {};

TEST_P(ClosedForm, MeanWallWithinThreeStandardErrors) {
  const double rd = GetParam();
  const double d = 200;  // mean episode, s
  const double s = 2.5;
  const double r = rd / d;
  FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 0.0,
                 .checkpoint = {.interval_steps = 1000, .save_time_s = 0}};
  spec.fail_slow = episodes(r * 86400 / 4, 4, lasting(RecoveryKind::kExponential, d), {s});
  const RunSpec run{.step_time_s = 2, .n_steps = 100000};  // W = 200,000 s = 1000 d
  const MonteCarloResult mc = run_monte_carlo(spec, run, {.trials = 600, .seed = 3, .threads = 2});
  const double expected = expected_wall(200000, r, d, s);
  const SampleSummary& wall = mc.summary.e2e_s;
  EXPECT_NEAR(wall.mean, expected, 3 * wall.std_error) << "r d = " << rd << ", expected " << expected;
  EXPECT_GT(wall.mean, 200000 * 1.01);  // the episodes cost something measurable
  // Every second is accounted for: healthy work plus the slow extra.
  EXPECT_NEAR(mc.summary.mean_slow_s, wall.mean - 200000, 1e-6 * wall.mean);
  EXPECT_NEAR(mc.summary.mean_episodes, r * wall.mean, 5 * std::sqrt(r * wall.mean / 600));
}

INSTANTIATE_TEST_SUITE_P(EpisodesInForce, ClosedForm, ::testing::Values(0.05, 0.5, 2.0));

TEST(FailSlowPolicy, CordoningOneOfTwoReplicasAtOnceIsASlowdownOfTwo) {
  // dp 2, detection 0, no stall and a DP-1 step as fast as a healthy one: a cordon halves the
  // pace at once (one replica's samples per step), which is riding it out at s = 2.
  FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 0.0,
                 .checkpoint = {.interval_steps = 1000, .save_time_s = 0}};
  spec.fail_slow = episodes(86400.0 / 400, 1, lasting(RecoveryKind::kExponential, 200), {7}, FailSlowPolicy::kCordon);
  spec.fail_slow.cordon_step_factor = 1;
  spec.fail_slow.dp_replicas = 2;
  const RunSpec run{.step_time_s = 2, .n_steps = 100000};
  const MonteCarloResult mc = run_monte_carlo(spec, run, {.trials = 300, .seed = 9, .threads = 2});
  const SampleSummary& wall = mc.summary.e2e_s;
  EXPECT_NEAR(wall.mean, expected_wall(200000, 1.0 / 400, 200, 2), 3 * wall.std_error);
  EXPECT_DOUBLE_EQ(mc.summary.mean_mitigations, mc.summary.mean_episodes);  // every episode is cordoned
}

TEST(FailSlowPolicy, RestartAtOnsetLosesHalfAStepPerEpisode) {
  // Checkpoint after every step of 2 s at no cost, detection 0, restarts of 0 s: each onset rolls
  // back the step in progress, on average half of it (onsets are uniform within a step). An
  // episode starts every 1/r wall seconds, so E[T] = W + r E[T] tau / 2: E[T] = W / (1 - r tau / 2).
  const double r = 1.0 / 50;
  FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 0.0,
                 .checkpoint = {.interval_steps = 1, .save_time_s = 0}};
  spec.fail_slow = episodes(r * 86400, 1, lasting(RecoveryKind::kFixed, 1000), {10}, FailSlowPolicy::kRestart);
  const RunSpec run{.step_time_s = 2, .n_steps = 20000};
  const MonteCarloResult mc = run_monte_carlo(spec, run, {.trials = 400, .seed = 4, .threads = 2});
  const SampleSummary& wall = mc.summary.e2e_s;
  EXPECT_NEAR(wall.mean, 40000 / (1 - r * 2 / 2), 3 * wall.std_error);
  EXPECT_EQ(mc.summary.mean_slow_s, 0);  // no step ever ran slow
  EXPECT_NEAR(mc.summary.mean_mitigation_s, wall.mean - 40000, 1e-6 * wall.mean);
}

TEST(FailSlowPolicy, HotSpareSwapAfterDetectionCostsDetectionSlowAndTheSwap) {
  // Fixed episodes of 1,000 s, detected after 100 s, swapped in 300 s; a checkpoint after every
  // 2 s step at no cost. Per episode: 100 s of work at pace 1/3 (200/3 s of extra), the step in
  // progress at detection rolled back (at most one slow step, 6 s), and the 300 s swap. (Onsets
  // are rare enough, 1 per 20,000 s, that the test does not depend on two overlapping.)
  FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 0.0,
                 .checkpoint = {.interval_steps = 1, .save_time_s = 0}};
  spec.fail_slow = episodes(86400.0 / 20000, 1, lasting(RecoveryKind::kFixed, 1000), {3}, FailSlowPolicy::kHotSpare);
  spec.fail_slow.detection_time_s = 100;
  spec.fail_slow.action_time_s = 300;
  const MonteCarloResult mc =
      run_monte_carlo(spec, {.step_time_s = 2, .n_steps = 100000}, {.trials = 200, .seed = 2, .threads = 2});
  for (const TrialResult& t : mc.trials) {
    // Every episode is swapped out but one that starts in the run's last 100 s (detected after it).
    ASSERT_LE(t.episodes - t.mitigations, 1);
    const double n = static_cast<double>(t.mitigations);
    // Never more slow extra than 100 s at pace 1/3 gives per episode.
    EXPECT_LE(t.slow_s, static_cast<double>(t.episodes) * 200.0 / 3 + 1e-6);
    EXPECT_GE(t.mitigation_s, n * 300 - 1e-6);
    EXPECT_LE(t.mitigation_s, n * 306 + 1e-6);
    EXPECT_NEAR(t.wall_s, 200000 + t.slow_s + t.mitigation_s, 1e-6 * t.wall_s);
  }
  EXPECT_GT(mc.summary.mean_mitigations, 5);
}

TEST(FailSlowAccounting, IdentityHoldsWithFailuresCheckpointsAndEveryPolicy) {
  for (const CheckpointMode mode : {CheckpointMode::kBlocking, CheckpointMode::kAsync}) {
    for (const FailSlowPolicy policy :
         {FailSlowPolicy::kNone, FailSlowPolicy::kRestart, FailSlowPolicy::kCordon, FailSlowPolicy::kHotSpare}) {
      FaultSpec spec{.node_failure_rate_per_day = 0.05, .failure_units = 256,
                     .classes = model::mofa_default_failure_classes(),
                     .checkpoint = {.interval_steps = 50, .save_time_s = 40, .mode = mode, .snapshot_time_s = 3,
                                    .restore_time_s = 30},
                     .init_time_s = 120, .failures_during_recovery = true};
      spec.fail_slow = episodes(0.1, 256, lasting(RecoveryKind::kLognormal, 1800, 1), {1.3, 2, 1.1}, policy);
      spec.fail_slow.detection_time_s = 300;
      spec.fail_slow.action_time_s = 120;
      spec.fail_slow.cordon_step_factor = 1.05;
      spec.fail_slow.dp_replicas = 16;
      const RunSpec run{.step_time_s = 5, .n_steps = 50000};
      const MonteCarloResult mc = run_monte_carlo(spec, run, {.trials = 100, .seed = 8, .threads = 2});
      for (const TrialResult& t : mc.trials) {
        const double parts = 250000 + t.lost_work_s + t.checkpoint_s + t.downtime_s + t.init_s + t.slow_s +
                             t.mitigation_s;
        ASSERT_NEAR(t.wall_s, parts, 1e-7 * t.wall_s);
        ASSERT_GE(t.slow_s, 0);
        if (policy == FailSlowPolicy::kNone || policy == FailSlowPolicy::kCordon) {
          ASSERT_EQ(t.mitigation_s, 0);
        }
        if (policy == FailSlowPolicy::kNone) {
          ASSERT_EQ(t.mitigations, 0);
        }
      }
      EXPECT_GT(mc.summary.mean_episodes, 10);
    }
  }
}

// One failure class whose recovery is Exp(mean_s): what a policy restart draws.
std::vector<model::FailureClass> one_class(double mean_s) {
  model::FailureClass c;
  c.name = "restart";
  c.weight = 1;
  c.recovery = lasting(RecoveryKind::kExponential, mean_s);
  return {c};
}

TEST(FailSlowStreams, EveryPolicyMeetsTheSameEpisodes) {
  // Episodes that slow nothing (factor 1), restarted at onset (detection 0) with recoveries of
  // Exp(1 us) and a checkpoint after every 10 ms step: a restart costs under 10 ms of wall time, so
  // policy none and restart run the same wall clock and must meet the same onsets. The restarts'
  // draws used to come from the episode stream and shift every onset after the first restart.
  FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .classes = one_class(1e-6),
                 .checkpoint = {.interval_steps = 1, .save_time_s = 0}};
  spec.fail_slow = episodes(86400.0 / 500, 1, lasting(RecoveryKind::kExponential, 60), {1});
  const RunSpec run{.step_time_s = 0.01, .n_steps = 1'000'000};  // 10,000 s: about 20 onsets a trial
  const MonteCarloOptions options{.trials = 100, .seed = 21, .threads = 2};
  const MonteCarloResult none = run_monte_carlo(spec, run, options);
  spec.fail_slow.policy = FailSlowPolicy::kRestart;
  const MonteCarloResult restart = run_monte_carlo(spec, run, options);
  for (std::size_t i = 0; i < none.trials.size(); ++i) {
    ASSERT_EQ(restart.trials[i].episodes, none.trials[i].episodes) << "trial " << i;
    EXPECT_EQ(restart.trials[i].mitigations, restart.trials[i].episodes) << "trial " << i;  // each restarted
    EXPECT_LT(restart.trials[i].mitigation_s, 0.01 * static_cast<double>(restart.trials[i].episodes) + 1e-3);
  }
  EXPECT_GT(none.summary.mean_episodes, 15);
}

TEST(FailSlowStreams, AnEpisodesLengthIsNotItsRestartsRecoveryTime) {
  // Episode lengths and restart recoveries both Exp(mean 600 s), one episode expected per trial.
  // Per seed: policy none with factor 2 reveals the episode's length d as 2 x slow_s (work at half
  // pace for d seconds; shorter only if it outlives the run), restart at onset reveals the recovery
  // r as mitigation_s (plus at most the 1 s step it rolled back). Drawn from one sample they would
  // agree within 1 s; drawn apart they differ and do not correlate.
  FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .classes = one_class(600),
                 .checkpoint = {.interval_steps = 1, .save_time_s = 0}};
  spec.fail_slow = episodes(86400.0 / 20000, 1, lasting(RecoveryKind::kExponential, 600), {2});
  const RunSpec run{.step_time_s = 1, .n_steps = 20000};
  std::vector<double> d;
  std::vector<double> r;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    spec.fail_slow.policy = FailSlowPolicy::kNone;
    const TrialResult none = run_monte_carlo(spec, run, {.trials = 1, .seed = seed}).trials[0];
    spec.fail_slow.policy = FailSlowPolicy::kRestart;
    const TrialResult restart = run_monte_carlo(spec, run, {.trials = 1, .seed = seed}).trials[0];
    if (none.episodes != 1 || restart.episodes != 1) continue;
    d.push_back(2 * none.slow_s);
    r.push_back(restart.mitigation_s);
    EXPECT_GT(std::abs(d.back() - r.back()), 1.0) << "seed " << seed;
  }
  ASSERT_GE(d.size(), 40U);
  const auto n = static_cast<double>(d.size());
  double md = 0;
  double mr = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    md += d[i] / n;
    mr += r[i] / n;
  }
  double sdr = 0;
  double sdd = 0;
  double srr = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    sdr += (d[i] - md) * (r[i] - mr);
    sdd += (d[i] - md) * (d[i] - md);
    srr += (r[i] - mr) * (r[i] - mr);
  }
  // Independent: the sample correlation is within about 3 / sqrt(n) of 0 (n >= 40: 0.47 at most).
  EXPECT_LT(std::abs(sdr / std::sqrt(sdd * srr)), 3 / std::sqrt(n)) << d.size() << " seeds";
  EXPECT_NEAR(mr, 600, 4 * 600 / std::sqrt(n));  // the recoveries are the class's Exp(600 s)
}

TEST(FailSlowPolicy, ARestartDueDuringAFailStopRecoveryIsThatRecovery) {
  // One segment of W s of work (checkpointed at its end), a failure after G exposed s, recoveries
  // of 200 s, and one episode (x2, 10,000 s) restarted 100 s after its onset t0. The onset comes
  // from the episode stream: read off a copy of it. With G = t0 + 50 and W = t0 + 40:
  //   [0, t0)            work at pace 1: t0 s of W done
  //   [t0, t0 + 50)      work at pace 1/2 (t0 + 25 s done, W not reached); the failure at t0 + 50
  //                      throws the t0 + 50 s of the attempt away (lost work)
  //   [t0 + 50, t0 + 250) the fail-stop recovery; the detection at t0 + 100 falls inside it
  //   [t0 + 250, 2 t0 + 290) the segment again at pace 1, done before the next failure (G s away)
  // The job restarted from the checkpoint anyway and came back without the slow part: the restart
  // the policy ordered is that recovery, charged once. It used to be charged again as a second
  // recovery of 200 s after the first (wall 2 t0 + 490, mitigation 200).
  Rng probe(5, 0);
  const double onset_scale = 1000;  // mean seconds between onsets: 86.4 per unit per day
  const double t0 = onset_scale * probe.exponential();
  static_cast<void>(probe.uniform());  // the episode's position class
  const double second_onset = t0 + onset_scale * probe.exponential();
  ASSERT_GT(second_onset, 2 * t0 + 490);  // one episode in the run, whichever way it is charged
  FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 1, .fixed_downtime_s = 200.0,
                 .checkpoint = {.interval_steps = 1, .save_time_s = 0}, .process = every(t0 + 50)};
  spec.fail_slow = episodes(86.4, 1, lasting(RecoveryKind::kFixed, 10000), {2}, FailSlowPolicy::kRestart);
  spec.fail_slow.detection_time_s = 100;
  const RunSpec run{.step_time_s = t0 + 40, .n_steps = 1};
  const FailureSampler sampler(spec);
  Rng rng(1, 0);
  Rng slow(5, 0);
  Rng restarts(6, 0);
  std::vector<std::int64_t> counts(1, 0);
  const TrialResult t = simulate_trial(spec, run, sampler, rng, counts, 1000, &slow, &restarts);
  EXPECT_EQ(t.failures, 1);
  EXPECT_EQ(t.episodes, 1);
  EXPECT_EQ(t.mitigations, 1);
  EXPECT_NEAR(t.lost_work_s, t0 + 50, 1e-9 * t0);
  EXPECT_EQ(t.downtime_s, 200);
  EXPECT_EQ(t.mitigation_s, 0);
  EXPECT_EQ(t.slow_s, 0);  // the slow work was all thrown away
  EXPECT_NEAR(t.wall_s, 2 * t0 + 290, 1e-9 * t0);
  EXPECT_NEAR(t0, 245.854067, 1e-6);  // this stream's first onset: the timeline above at t0 = 245.85 s
}

TEST(FailSlowSpec, BadFieldsAreNamed) {
  auto message = [](FailSlowSpec f) {
    FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 0.0,
                   .checkpoint = {.interval_steps = 1}};
    spec.fail_slow = f;
    try {
      model::validate(spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const FailSlowSpec good = episodes(1, 8, lasting(RecoveryKind::kFixed, 60), {2});
  EXPECT_EQ(message(good), "accepted");
  FailSlowSpec f = good;
  f.rate_per_unit_per_day = -1;
  EXPECT_EQ(message(f), "fault.fail_slow.rate_per_unit_per_day must be a finite number >= 0");
  f = good;
  f.slow_step_factor = {};
  EXPECT_EQ(message(f), "fault.fail_slow.slow_step_factor must not be empty");
  f = good;
  f.slow_step_factor = {2, std::nan("")};
  EXPECT_EQ(message(f), "fault.fail_slow.slow_step_factor must hold finite numbers > 0");
  f = good;
  f.duration = lasting(RecoveryKind::kLognormal, 60, 0);
  EXPECT_EQ(message(f), "fault.fail_slow.duration.sigma must be > 0 for a lognormal");
  f = good;
  f.policy = FailSlowPolicy::kCordon;
  f.dp_replicas = 1;
  EXPECT_EQ(message(f), "fault.fail_slow.dp_replicas must be >= 2 to cordon a replica");
}

}  // namespace
}  // namespace mofasim::fault
