// Tests of the Monte Carlo fault injector: exact timelines under deterministic failures, the
// renewal-theory mean over a grid of failure rates, the closed form (40) where failures are rare,
// thread-count independence and the per-trial accounting identity.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "model/fault_analytic.h"
#include "model/fault_spec.h"
#include "sim/fault/monte_carlo.h"
#include "sim/fault/statistics.h"

namespace mofasim::fault {
namespace {

using model::CheckpointMode;
using model::FaultSpec;
using model::RunSpec;

// A failure process with one recorded gap of `gap_s` exposed seconds: failures are deterministic.
model::FailureProcess every(double gap_s) {
  return {.kind = model::FailureProcessKind::kEmpirical, .inter_arrival_s = {gap_s}, .recorded_units = 1};
}

TrialResult one_trial(const FaultSpec& spec, const RunSpec& run) {
  const MonteCarloResult r = run_monte_carlo(spec, run, {.trials = 1, .seed = 7});
  return r.trials.at(0);
}

TEST(Trial, NoFailuresBlocking) {
  // 35 steps of 10 s, checkpoints after steps 10, 20, 30 and the final 35: 4 saves of 3 s, init 5 s.
  // wall = 5 + 350 + 4 * 3 = 367 s.
  const FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 1.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 3}, .init_time_s = 5};
  const TrialResult t = one_trial(spec, {.step_time_s = 10, .n_steps = 35});
  EXPECT_DOUBLE_EQ(t.wall_s, 367);
  EXPECT_DOUBLE_EQ(t.ettr, 350.0 / 367);
  EXPECT_DOUBLE_EQ(t.checkpoint_s, 12);
  EXPECT_DOUBLE_EQ(t.init_s, 5);
  EXPECT_EQ(t.failures, 0);
}

TEST(Trial, NoFailuresAsync) {
  // Cycles of 100, 100, 100 and 50 s of steps, 1 s snapshots, 30 s background writes: the writes
  // hide under the next 100 s (and 50 s) of steps; the last write is waited for.
  // wall = 350 + 4 * 1 + 30 = 384 s.
  FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 1.0,
                 .checkpoint = {.interval_steps = 10, .save_time_s = 30, .mode = CheckpointMode::kAsync,
                                .snapshot_time_s = 1}};
  EXPECT_DOUBLE_EQ(one_trial(spec, {.step_time_s = 10, .n_steps = 35}).wall_s, 384);
  // 150 s writes outlast 100 s of steps: waits of 50, 50 and (before the 50 s cycle's snapshot) 100 s.
  // wall = 350 + (50 + 50 + 100) + 4 * 1 + 150 = 704 s.
  spec.checkpoint.save_time_s = 150;
  const TrialResult t = one_trial(spec, {.step_time_s = 10, .n_steps = 35});
  EXPECT_DOUBLE_EQ(t.wall_s, 704);
  EXPECT_DOUBLE_EQ(t.checkpoint_s, 354);
}

TEST(Trial, BlockingFailureRollsBackToLastCheckpoint) {
  // Steps 10 s, N = 10, save 10 s, D = 50 s, a failure every 250 exposed seconds (saves exposed).
  // Segments end at 110 and 220; the third runs from 220 and is hit at exposed 250 = wall 250,
  // 30 s into its steps (lost 30). Recovery to 300 (not exposed), segment 3 again: done at 410.
  const FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 1, .fixed_downtime_s = 50.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 10}, .process = every(250)};
  const TrialResult t = one_trial(spec, {.step_time_s = 10, .n_steps = 30});
  EXPECT_DOUBLE_EQ(t.wall_s, 410);
  EXPECT_EQ(t.failures, 1);
  EXPECT_DOUBLE_EQ(t.lost_work_s, 30);
  EXPECT_DOUBLE_EQ(t.checkpoint_s, 30);
  EXPECT_DOUBLE_EQ(t.downtime_s, 50);
}

TEST(Trial, CheckpointRestoreJoinsEveryRecovery) {
  // As above with a 20 s checkpoint restore (the I/O model's read-back): recovery 50 + 20 s, so
  // the repeated segment starts at 320 and ends at 430.
  const FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 1, .fixed_downtime_s = 50.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 10, .restore_time_s = 20},
                       .process = every(250)};
  const TrialResult t = one_trial(spec, {.step_time_s = 10, .n_steps = 30});
  EXPECT_DOUBLE_EQ(t.wall_s, 430);
  EXPECT_EQ(t.failures, 1);
  EXPECT_DOUBLE_EQ(t.downtime_s, 70);
}

TEST(Trial, SavesCanBeFailureFree) {
  // As above with saves not exposed and a gap of 205 s: exposed time counts only steps, so the
  // failure is 5 s into segment 3's steps, at wall 220 + 5 = 225. Recovery to 275, segment 3 to 385.
  const FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 1, .fixed_downtime_s = 50.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 10}, .failures_during_save = false,
                       .process = every(205)};
  const TrialResult t = one_trial(spec, {.step_time_s = 10, .n_steps = 30});
  EXPECT_DOUBLE_EQ(t.wall_s, 385);
  EXPECT_DOUBLE_EQ(t.lost_work_s, 5);
}

TEST(Trial, FailureDuringSaveLosesTheSegment) {
  // N = 1, steps 100 s, saves 10 s, D = 50 s, a failure every 215 exposed seconds, 2 steps.
  // Segment 1: 0-110. Segment 2: steps 110-210, save 210-220 hit at 215 (5 s in): its 100 s of
  // steps and 5 s of save are lost. Recovery to 265; segment 2 again 265-375 (110 < 215 exposed).
  // wall = 200 useful + 100 lost + (10 + 5 + 10) checkpoint + 50 down = 375 s.
  const FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 1, .fixed_downtime_s = 50.0,
                       .checkpoint = {.interval_steps = 1, .save_time_s = 10}, .process = every(215)};
  const TrialResult t = one_trial(spec, {.step_time_s = 100, .n_steps = 2});
  EXPECT_DOUBLE_EQ(t.wall_s, 375);
  EXPECT_EQ(t.failures, 1);
  EXPECT_DOUBLE_EQ(t.lost_work_s, 100);
  EXPECT_DOUBLE_EQ(t.checkpoint_s, 25);
}

TEST(Trial, AsyncFailureAfterTheWriteCompletesKeepsThatCheckpoint) {
  // Steps 10 s, N = 10, snapshot 1 s, write 30 s, D = 50, a failure every 140 exposed seconds.
  // Cycle 0: steps 0-100, snapshot 100-101 (write of steps 0-10 done at 131). Cycle 1 steps from
  // 101, hit at 140 (39 s in, after 131): checkpoint 10 kept, lost 39. Recovery to 190.
  // From step 10: steps 190-290, snapshot 290-291 (write done 321), last cycle steps from 291, hit
  // at 291 + 39 = 330 (after 321): checkpoint 20 kept, lost 39. Recovery to 380.
  // From step 20: steps 380-480, snapshot + final write 31 s: done at 511 (9 s of gap to spare).
  const FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 1, .fixed_downtime_s = 50.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 30, .mode = CheckpointMode::kAsync,
                                      .snapshot_time_s = 1},
                       .process = every(140)};
  const TrialResult t = one_trial(spec, {.step_time_s = 10, .n_steps = 30});
  EXPECT_DOUBLE_EQ(t.wall_s, 511);
  EXPECT_EQ(t.failures, 2);
  EXPECT_DOUBLE_EQ(t.lost_work_s, 78);
  EXPECT_DOUBLE_EQ(t.checkpoint_s, 33);
  EXPECT_DOUBLE_EQ(t.downtime_s, 100);
}

TEST(Trial, AsyncFailureBeforeTheWriteCompletesLosesThatCheckpoint) {
  // Steps 10 s, N = 10, 3 segments, snapshot 1 s, D = 50 s, a failure every 250 exposed seconds.
  // Write 30 s: steps 0-100, snap 100-101 (write 0 done 131), steps 101-201, snap 201-202 (write 1
  // done 232), last steps 202-302 hit at 250, 48 s in and after 232: checkpoint 20 kept, lost 48.
  // Recovery to 300; last segment 300-400, snapshot + final write 31 s: done at 431.
  FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 1, .fixed_downtime_s = 50.0,
                 .checkpoint = {.interval_steps = 10, .save_time_s = 30, .mode = CheckpointMode::kAsync,
                                .snapshot_time_s = 1},
                 .process = every(250)};
  const TrialResult kept = one_trial(spec, {.step_time_s = 10, .n_steps = 30});
  EXPECT_DOUBLE_EQ(kept.wall_s, 431);
  EXPECT_DOUBLE_EQ(kept.lost_work_s, 48);
  // Write 60 s: write 1 (from 202) would complete at 262 > 250, so checkpoint 20 is lost with
  // segment 2's 100 s of steps: lost 148, restart from step 10 at 300. Steps 300-400, snap 400-401
  // (write done 461), last steps 401-501 (exposed 201), final snap + write of 61 s hit at exposed
  // 250 = wall 550, 49 s in: lost 100 more, checkpoint 20 (written at 461) kept. Recovery to 600,
  // last segment 600-700 and 61 s: done at 761.
  // Checkpoint time = 1 + 1 (first attempt) + 1 + 49 (second) + 61 (third) = 113 s;
  // 300 + 248 + 113 + 100 = 761.
  spec.checkpoint.save_time_s = 60;
  const TrialResult lost = one_trial(spec, {.step_time_s = 10, .n_steps = 30});
  EXPECT_DOUBLE_EQ(lost.wall_s, 761);
  EXPECT_DOUBLE_EQ(lost.lost_work_s, 248);
  EXPECT_DOUBLE_EQ(lost.checkpoint_s, 113);
  EXPECT_EQ(lost.failures, 2);
}

// MC vs the exact renewal mean. The formula's assumptions, matched exactly here: Poisson
// failures; blocking saves during which failures may strike; a fixed downtime D during which they
// may not; no init; every segment identical (n a multiple of N) and the run ending with a save,
// so E[wall] = (n / N) * (e^{c (Delta + w)} - 1) (1 / c + D) exactly, and the pooled ETTR
// n T / mean(wall) estimates c Delta / ((1 + c D)(e^{c (Delta + w)} - 1)). Grid: c * Delta from
// 1e-4 to 0.5 with Delta = 100 s, w = 10 s, D = 50 s, 100 segments per run.
class RenewalGrid : public ::testing::TestWithParam<double> {};

TEST_P(RenewalGrid, MeanWallTimeWithinThreeStandardErrors) {
  const double c_delta = GetParam();
  const double c = c_delta / 100;  // per second
  const FaultSpec spec{.node_failure_rate_per_day = c * 86400, .failure_units = 1, .fixed_downtime_s = 50.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 10}};
  const RunSpec run{.step_time_s = 10, .n_steps = 1000};
  const MonteCarloResult r = run_monte_carlo(spec, run, {.trials = 4000, .seed = 42, .threads = 2});
  const double expected = 100 * std::expm1(c * 110) * (1 / c + 50);
  EXPECT_DOUBLE_EQ(model::renewal_expected_total_s(spec, run), expected);
  const SampleSummary& wall = r.summary.e2e_s;
  EXPECT_NEAR(wall.mean, expected, 3 * wall.std_error) << "c*Delta = " << c_delta;
  // Pooled ETTR vs the renewal ETTR; the standard error follows from the delta method.
  const double ettr = model::renewal_ettr(spec, run);
  EXPECT_NEAR(r.summary.ettr_pooled, ettr, 3 * ettr * wall.std_error / wall.mean);
}

INSTANTIATE_TEST_SUITE_P(CDelta, RenewalGrid, ::testing::Values(1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.25, 0.5));

// Where failures are rare per interval, the closed form (40) is the renewal mean to first order
// (it differs by about c * w / 2 = 1e-6 relative here, see fault_analytic_test). Table 5's
// 128-GPU LLaMA2 column, shortened to 95367 steps (about 2.5 failures per run):
// (40) ETTR = 0.98492; per-trial spread of ETTR is about 1e-3, so 4000 trials give SE ~2e-5.
TEST(MonteCarlo, MatchesClosedFormWhenFailuresAreRare) {
  const FaultSpec spec{.node_failure_rate_per_day = 0.005, .failure_units = 16, .fixed_downtime_s = 134.41,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 4.19}};
  const RunSpec run{.step_time_s = 27.83, .n_steps = 95370};
  const MonteCarloResult r = run_monte_carlo(spec, run, {.trials = 4000, .seed = 3, .threads = 2});
  const model::FaultAnalyticResult a = model::analytic_e2e(spec, run);
  const double tolerance = 3 * a.t_total_s * 1e-6 + 3 * r.summary.e2e_s.std_error;
  EXPECT_NEAR(r.summary.e2e_s.mean, a.t_total_s, tolerance);
  EXPECT_NEAR(r.summary.ettr_pooled, a.ettr, 3 * a.ettr * tolerance / a.t_total_s);
  // MoFa(38): c * T_total failures on average; Poisson, so SE = sqrt(mean / trials).
  EXPECT_NEAR(r.summary.mean_failures, a.n_failures, 3 * std::sqrt(a.n_failures / 4000));
}

TEST(MonteCarlo, IdenticalForAnyThreadCount) {
  const FaultSpec spec{.node_failure_rate_per_day = 2, .failure_units = 64,
                       .classes = model::mofa_default_failure_classes(),
                       .checkpoint = {.interval_steps = 7, .save_time_s = 20}};
  const RunSpec run{.step_time_s = 30, .n_steps = 5000};
  const MonteCarloResult one = run_monte_carlo(spec, run, {.trials = 3000, .seed = 11, .threads = 1});
  const MonteCarloResult two = run_monte_carlo(spec, run, {.trials = 3000, .seed = 11, .threads = 2});
  const MonteCarloResult three = run_monte_carlo(spec, run, {.trials = 3000, .seed = 11, .threads = 3});
  for (std::size_t i = 0; i < one.trials.size(); ++i) {
    ASSERT_EQ(one.trials[i].wall_s, two.trials[i].wall_s) << i;
    ASSERT_EQ(one.trials[i].wall_s, three.trials[i].wall_s) << i;
  }
  EXPECT_EQ(one.failures_by_class, two.failures_by_class);
  EXPECT_EQ(one.summary.ettr.mean, three.summary.ettr.mean);
  const MonteCarloResult other = run_monte_carlo(spec, run, {.trials = 3000, .seed = 12, .threads = 2});
  EXPECT_NE(one.summary.e2e_s.mean, other.summary.e2e_s.mean);
}

// Class mix: 3:6:1 of the failures. Recovery D = 230.2 s on average (MoFa(41)).
TEST(MonteCarlo, ClassMixAndDowntimeFollowTheWeights) {
  const FaultSpec spec{.node_failure_rate_per_day = 2, .failure_units = 64,
                       .classes = model::mofa_default_failure_classes(),
                       .checkpoint = {.interval_steps = 7, .save_time_s = 20}};
  const MonteCarloResult r = run_monte_carlo(spec, {.step_time_s = 30, .n_steps = 5000}, {.trials = 2000});
  const double total = r.summary.mean_failures;
  ASSERT_GT(total, 50);  // c = 64 * 2 / 86400 per s over ~1.6e5 s: ~240 failures per run
  // Binomial share: SE = sqrt(p (1 - p) / (trials * total)) < 1e-3; allow 5e-3.
  EXPECT_NEAR(r.summary.mean_failures_by_class[0] / total, 0.3, 5e-3);
  EXPECT_NEAR(r.summary.mean_failures_by_class[1] / total, 0.6, 5e-3);
  EXPECT_NEAR(r.summary.mean_failures_by_class[2] / total, 0.1, 5e-3);
  EXPECT_NEAR(r.summary.mean_downtime_s / total, 230.2, 1.0);
}

// Every trial's time splits into useful + lost + checkpoint + downtime + init, for every mode.
TEST(MonteCarlo, AccountingIdentityHoldsPerTrial) {
  for (const bool async : {false, true}) {
    for (const bool during : {false, true}) {
      FaultSpec spec{.node_failure_rate_per_day = 5, .failure_units = 32,
                     .classes = {{.name = "a", .weight = 1,
                                  .recovery = {.kind = model::RecoveryKind::kLognormal, .mean_s = 200, .sigma = 0.8}},
                                 {.name = "b", .weight = 2,
                                  .recovery = {.kind = model::RecoveryKind::kExponential, .mean_s = 60}}},
                     .checkpoint = {.interval_steps = 5, .save_time_s = 40,
                                    .mode = async ? CheckpointMode::kAsync : CheckpointMode::kBlocking,
                                    .snapshot_time_s = 2},
                     .init_time_s = 300, .failures_during_save = during, .failures_during_recovery = during,
                     .process = {.kind = model::FailureProcessKind::kWeibull, .weibull_shape = 0.7}};
      const RunSpec run{.step_time_s = 12, .n_steps = 2003};
      const MonteCarloResult r = run_monte_carlo(spec, run, {.trials = 300, .seed = 5});
      for (std::size_t i = 0; i < r.trials.size(); ++i) {
        const TrialResult& t = r.trials[i];
        const double parts = 2003 * 12.0 + t.lost_work_s + t.checkpoint_s + t.downtime_s + t.init_s;
        ASSERT_NEAR(t.wall_s, parts, 1e-9 * t.wall_s) << "trial " << i << " async " << async;
        std::int64_t sum = 0;
        for (std::size_t c = 0; c < 2; ++c) sum += r.failures_by_class[i * 2 + c];
        ASSERT_EQ(sum, t.failures);
        ASSERT_GE(t.lost_work_s, 0);
        ASSERT_GE(t.init_s, 300);
      }
    }
  }
}

// Weibull renewal keeps the mean rate c: over a long run the failure count per exposed second
// tends to c (elementary renewal theorem). With recovery not exposed and saves exposed, exposed
// time = wall - downtime - init. Shape 0.7 and 2: within 3% (about 500 failures per run).
TEST(MonteCarlo, WeibullKeepsTheMeanRate) {
  for (const double shape : {0.7, 2.0}) {
    const FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 100, .fixed_downtime_s = 30.0,
                         .checkpoint = {.interval_steps = 10, .save_time_s = 5},
                         .process = {.kind = model::FailureProcessKind::kWeibull, .weibull_shape = shape}};
    const MonteCarloResult r = run_monte_carlo(spec, {.step_time_s = 5, .n_steps = 80000}, {.trials = 200});
    const double exposed = r.summary.e2e_s.mean - r.summary.mean_downtime_s - r.summary.mean_init_s;
    EXPECT_NEAR(r.summary.mean_failures / exposed, 100.0 / 86400, 0.03 * 100.0 / 86400) << shape;
  }
}

TEST(MonteCarlo, EmpiricalGapsScaleWithClusterSize) {
  // 20 steps of 10 s, a checkpoint after every step at no cost, D = 0.
  // Gaps of 1000 s recorded on 2 units, run on 4 units: 500 s apart, so a 200 s run sees none.
  FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 4, .fixed_downtime_s = 0.0,
                 .checkpoint = {.interval_steps = 1, .save_time_s = 0},
                 .process = {.kind = model::FailureProcessKind::kEmpirical, .inter_arrival_s = {1000},
                             .recorded_units = 2}};
  const RunSpec run{.step_time_s = 10, .n_steps = 20};
  EXPECT_EQ(run_monte_carlo(spec, run, {.trials = 1}).trials[0].failures, 0);
  // Gaps of 95 s recorded on 1 unit, run on 2: 47.5 s of computing apart. Each failure is 7.5 s
  // into a step and loses it: every 47.5 s yields 40 s of steps. After 4 failures (160 s kept,
  // 30 s lost, exposed 190 s) the last 40 s fit before the next one: wall = 200 + 30 = 230 s.
  spec.process.inter_arrival_s = {95};
  spec.process.recorded_units = 1;
  spec.failure_units = 2;
  const TrialResult t = run_monte_carlo(spec, run, {.trials = 1}).trials[0];
  EXPECT_EQ(t.failures, 4);
  EXPECT_DOUBLE_EQ(t.lost_work_s, 30);
  EXPECT_DOUBLE_EQ(t.wall_s, 230);
}

TEST(MonteCarlo, ProgressIsReportedToTheEnd) {
  const FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 8, .fixed_downtime_s = 10.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 1}};
  std::vector<std::int64_t> seen;
  run_monte_carlo(spec, {.step_time_s = 1, .n_steps = 100},
                  {.trials = 1000, .threads = 2, .progress = [&](std::int64_t done, std::int64_t total) {
                     EXPECT_EQ(total, 1000);
                     seen.push_back(done);
                   }});
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 1000);
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_LE(seen[i - 1], seen[i]);
}

TEST(MonteCarlo, RejectsBadOptions) {
  const FaultSpec spec{.node_failure_rate_per_day = 1, .failure_units = 8, .fixed_downtime_s = 10.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 1}};
  EXPECT_THROW(run_monte_carlo(spec, {.step_time_s = 1, .n_steps = 10}, {.trials = 0}), std::invalid_argument);
  EXPECT_THROW(run_monte_carlo(spec, {.step_time_s = 1, .n_steps = 10}, {.threads = 0}), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::fault
