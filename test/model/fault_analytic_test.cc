// Tests of the analytic fault-tolerance model: MoFa(36) MoFa(37) MoFa(38) MoFa(39) MoFa(40) MoFa(41) against the
// paper's Table 5, the optimal interval of MoFa(44) against brute force, Young's and Daly's intervals and the exact
// renewal ETTR against hand-worked values.
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/fault_analytic.h"
#include "model/fault_spec.h"

namespace mofasim::model {
namespace {

using ::testing::HasSubstr;

// One column of MoFa Table 5 (rows decoded in mofa-model.md).
struct Table5Column {
  const char* name;
  int gpus;
  int gpus_per_unit;
  double t_save_s;
  double downtime_s;
  double step_s;       // the paper's predicted step time
  std::int64_t n_steps;
  double e2e_s;        // printed E2E time
  double ettr_percent; // printed ETTR, two decimals
};

constexpr Table5Column kTable5[] = {
    {"llama2_70b_128", 128, 8, 4.19, 134.41, 27.83, 953675, 26947190.75, 98.49},
    {"llama2_70b_256", 256, 8, 2.35, 147.72, 27.99, 476838, 13465926.21, 99.11},
    {"llama2_70b_512", 512, 8, 1.59, 174.34, 28.33, 238419, 6800277.57, 99.32},
    {"llama2_70b_1024", 1024, 8, 0.95, 227.58, 28.83, 119210, 3457670.27, 99.39},
    {"llama3_405b_64", 64, 8, 9.3, 127.75, 24.46, 15258790, 387465533.9, 96.32},
    {"deepseek_v3_128", 128, 32, 7.7, 134.41, 74.5, 254314, 19144461.2, 98.96},
};

FaultSpec table5_spec(const Table5Column& col) {
  return FaultSpec{
      .node_failure_rate_per_day = 0.005,
      .failure_units = col.gpus / col.gpus_per_unit,
      .fixed_downtime_s = col.downtime_s,
      .checkpoint = {.interval_steps = 10, .save_time_s = col.t_save_s},
      .init_time_s = 0,
  };
}

void PrintTo(const Table5Column& col, std::ostream* os) { *os << col.name; }

class Table5 : public ::testing::TestWithParam<Table5Column> {};

// MoFa(40) with T_init = 0: T_total = (N_steps T_step + (N_steps / 10) t_save) /
// (1 - (units * 0.005 / 86400) (D + 10 T_step / 2)). E.g. the 128-GPU LLaMA2 column:
// units = 16, c = 9.259e-7 /s, numerator = 26540775.25 + 399600.83 = 26940376.08 s,
// denominator = 1 - 9.259e-7 * 273.56 = 0.99974671, T_total = 26947190.70 s (paper: .75).
// Every column matches the printed E2E to better than 4e-8 relative (the printed figures carry
// 9-10 significant digits; the residue is the paper's rounding of its own inputs), so E2E is
// asserted to 1e-7 relative. The printed ETTR is TRUNCATED to two decimals, not rounded (e.g.
// 99.3255 % is printed 99.32 %, 99.3971 % is printed 99.39 %), so ETTR is asserted to lie in
// [printed, printed + 0.01) percent.
TEST_P(Table5, ClosedFormReproducesPrintedE2eAndEttr) {
  const Table5Column& col = GetParam();
  const FaultAnalyticResult r = analytic_e2e(table5_spec(col), {.step_time_s = col.step_s, .n_steps = col.n_steps});
  ASSERT_TRUE(r.converges);
  EXPECT_NEAR(r.t_total_s / col.e2e_s, 1.0, 1e-7) << r.t_total_s;
  EXPECT_GE(r.ettr * 100, col.ettr_percent - 1e-9) << r.ettr;
  EXPECT_LT(r.ettr * 100, col.ettr_percent + 0.01) << r.ettr;
  // MoFa(37) MoFa(36).
  EXPECT_DOUBLE_EQ(r.t_eff_s, static_cast<double>(col.n_steps) * col.step_s);
  EXPECT_DOUBLE_EQ(r.ettr, r.t_eff_s / r.t_total_s);
}

// MoFa(38) MoFa(39) evaluated at the fixed point: T_total = T_init + T_eff + N_fail (D + N T / 2) + saves
// with N_fail = c T_total.
TEST_P(Table5, InterruptionTimeIsEquation39AtTheFixedPoint) {
  const Table5Column& col = GetParam();
  const FaultSpec spec = table5_spec(col);
  const FaultAnalyticResult r = analytic_e2e(spec, {.step_time_s = col.step_s, .n_steps = col.n_steps});
  const double c = static_cast<double>(col.gpus / col.gpus_per_unit) * 0.005 / 86400;
  EXPECT_NEAR(r.n_failures, c * r.t_total_s, 1e-9 * r.n_failures);
  const double saves = static_cast<double>(col.n_steps) / 10 * col.t_save_s;
  const double t_int = r.n_failures * (col.downtime_s + 10 * col.step_s / 2) + saves;
  EXPECT_NEAR(r.t_int_s, t_int, 1e-9 * r.t_total_s);
  EXPECT_DOUBLE_EQ(r.checkpoint_s, saves);
}

// MoFa(44)'s root rounded both ways is the best integer interval: compare with a scan of N.
TEST_P(Table5, OptimalIntervalMatchesBruteForce) {
  const Table5Column& col = GetParam();
  const FaultSpec spec = table5_spec(col);
  const RunSpec run{.step_time_s = col.step_s, .n_steps = col.n_steps};
  std::int64_t best = 1;
  double best_total = analytic_total_s(spec, run, 1);
  for (std::int64_t n = 2; n <= 20000; ++n) {
    const double t = analytic_total_s(spec, run, static_cast<double>(n));
    if (t < best_total) {
      best_total = t;
      best = n;
    }
  }
  const OptimalInterval o = optimal_interval(spec, run);
  EXPECT_EQ(o.steps, best);
  EXPECT_DOUBLE_EQ(o.t_total_s, best_total);
  EXPECT_GE(o.ettr, analytic_e2e(spec, run).ettr);  // the paper's N = 10 is no better
  // The exact root satisfies the quadratic k A N^2 + 2 b k N - b (1 - cD) = 0.
  const double c = static_cast<double>(spec.failure_units) * 0.005 / 86400;
  const double a = run.step_time_s * static_cast<double>(run.n_steps);
  const double b = static_cast<double>(run.n_steps) * col.t_save_s;
  const double k = c * run.step_time_s / 2;
  const double n = o.exact_real;
  EXPECT_NEAR(k * a * n * n + 2 * b * k * n - b * (1 - c * col.downtime_s), 0, 1e-9 * b);
  // Young's interval is the first-order root: within a few percent here since b k << A (1 - cD).
  EXPECT_NEAR(o.young_steps / o.exact_real, 1.0, 0.03);
}

INSTANTIATE_TEST_SUITE_P(MofaPaper, Table5, ::testing::ValuesIn(kTable5),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

// MoFa(41) with the paper's 3:6:1 mix and 141 / 262 / 307 s:
// MTTR = 0.3 * 141 + 0.6 * 262 + 0.1 * 307 = 42.3 + 157.2 + 30.7 = 230.2 s.
// NOTE: Table 5's per-failure D (127.75 to 227.58 s) is not this MTTR; a weighted mean of
// 141, 262 and 307 s cannot be below 141 s, so the 134.41 s of Table 5 comes from elsewhere.
TEST(Mttr, MofaDefaultMixIsTheWeightedMean) {
  EXPECT_NEAR(mttr_s(mofa_default_failure_classes()), 230.2, 1e-12);
}

TEST(Mttr, UsesDistributionMeansAndNormalisesWeights) {
  // Weights 1 : 3 with an exponential of mean 100 s and empirical samples {10, 20, 60} (mean 30):
  // MTTR = (1 * 100 + 3 * 30) / 4 = 47.5 s.
  const std::vector<FailureClass> classes = {
      {.name = "a", .weight = 1, .recovery = {.kind = RecoveryKind::kExponential, .mean_s = 100}},
      {.name = "b", .weight = 3, .recovery = {.kind = RecoveryKind::kEmpirical, .samples_s = {10, 20, 60}}},
  };
  EXPECT_DOUBLE_EQ(mttr_s(classes), 47.5);
}

TEST(Mttr, FixedDowntimeOverridesTheMix) {
  FaultSpec spec{.node_failure_rate_per_day = 0.01, .failure_units = 4, .classes = mofa_default_failure_classes(),
                 .fixed_downtime_s = 99.0, .checkpoint = {.interval_steps = 5, .save_time_s = 1}};
  EXPECT_DOUBLE_EQ(downtime_per_failure_s(spec), 99.0);
  spec.fixed_downtime_s.reset();
  EXPECT_NEAR(downtime_per_failure_s(spec), 230.2, 1e-12);
}

// Young: sqrt(2 t_save / c) / T_step. With c = 1/3600 /s (one failure an hour), t_save = 60 s,
// T_step = 10 s: sqrt(2 * 60 * 3600) / 10 = 657.267 / 10 = 65.7267 steps.
// Daly: tau = sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta with
// delta / 2M = 1/120: 657.2671 * 1.0313550 - 60 = 617.8756 s = 61.78756 steps.
TEST(OptimalInterval, YoungAndDalyHandWorked) {
  const FaultSpec spec{.node_failure_rate_per_day = 24.0,  // 24 / day per unit, one unit: 1 per hour
                       .failure_units = 1,
                       .fixed_downtime_s = 0.0,
                       .checkpoint = {.interval_steps = 1, .save_time_s = 60}};
  const OptimalInterval o = optimal_interval(spec, {.step_time_s = 10, .n_steps = 100000});
  EXPECT_NEAR(o.young_steps, std::sqrt(2.0 * 60 * 3600) / 10, 1e-9);
  EXPECT_NEAR(o.daly_steps, 61.78756496, 1e-6);
}

TEST(OptimalInterval, NoFailuresMeansCheckpointOnlyAtTheEnd) {
  const FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 8, .fixed_downtime_s = 100.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 5}};
  const OptimalInterval o = optimal_interval(spec, {.step_time_s = 2, .n_steps = 500});
  EXPECT_EQ(o.steps, 500);
  EXPECT_TRUE(std::isinf(o.exact_real));
  // One save: (500 * 2 + 1 * 5) s.
  EXPECT_DOUBLE_EQ(o.t_total_s, 1005.0);
}

TEST(OptimalInterval, FreeCheckpointsMeanEveryStep) {
  // It gave n_steps (the branch for "no failures"), whose lost work outpaces progress: E2E inf.
  // c = 1 / 3600 s, no save or downtime: T(1) = 1e6 s / (1 - c * 10 s / 2) = 1e6 * 3600 / 3595 s.
  const FaultSpec spec{.node_failure_rate_per_day = 24.0, .failure_units = 1, .fixed_downtime_s = 0.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 0}};
  const OptimalInterval o = optimal_interval(spec, {.step_time_s = 10, .n_steps = 100000});
  EXPECT_EQ(o.steps, 1);
  EXPECT_EQ(o.exact_real, 0.0);
  EXPECT_EQ(o.young_steps, 0.0);
  EXPECT_EQ(o.daly_steps, 0.0);
  EXPECT_NEAR(o.t_total_s, 1e6 * 3600 / 3595, 1e-6);
  EXPECT_NEAR(o.ettr, 3595.0 / 3600, 1e-12);
}

// Renewal ETTR = c Delta / ((1 + c D) (e^{c (Delta + w)} - 1)). c = 1e-4 /s, Delta = 10 * 100 s,
// w = 100 s, D = 500 s: 0.1 / (1.05 * (e^{0.11} - 1)) = 0.1 / (1.05 * 0.1162781) = 0.8190547.
TEST(RenewalEttr, HandWorked) {
  // c = units * lambda / 86400 = 1e-4  =>  lambda = 8.64 per day with one unit.
  const FaultSpec spec{.node_failure_rate_per_day = 8.64, .failure_units = 1, .fixed_downtime_s = 500.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 100}};
  const RunSpec run{.step_time_s = 100, .n_steps = 1000};
  EXPECT_NEAR(renewal_ettr(spec, run), 0.8190546580, 1e-9);
  // 100 segments, each E = (e^{0.11} - 1) (1 / c + D) = 0.1162781 * 10500 = 1220.9197 s.
  EXPECT_NEAR(renewal_expected_total_s(spec, run), 100 * 1220.9197398, 1e-4);
}

// As c -> 0 the renewal ETTR tends to Delta / (Delta + w), and to first order in c it agrees with
// MoFa(40) except for the save lost to failures during saves:
// 1 / ETTR ~ (S / Delta)(1 + c D + c S / 2) (renewal) vs (S / Delta)(1 + c D + c Delta / 2) (40).
TEST(RenewalEttr, AgreesWithClosedFormToFirstOrder) {
  FaultSpec spec{.node_failure_rate_per_day = 0.005, .failure_units = 16, .fixed_downtime_s = 134.41,
                 .checkpoint = {.interval_steps = 10, .save_time_s = 4.19}};
  const RunSpec run{.step_time_s = 27.83, .n_steps = 953675};
  const double renewal = renewal_ettr(spec, run);
  const double closed = analytic_e2e(spec, run).ettr;
  const double c = 16 * 0.005 / 86400;
  const double s = 278.3 + 4.19;
  // The two differ by about ETTR * c * w / 2 = 1.91e-6; the O(c^2) terms are a few percent of that.
  EXPECT_NEAR(closed - renewal, closed * c * 4.19 / 2, 0.05 * closed * c * 4.19 / 2);
  spec.node_failure_rate_per_day = 0;
  EXPECT_NEAR(renewal_ettr(spec, run), 278.3 / s, 1e-12);
}

TEST(RenewalEttr, RecoveryExposedToFailuresForFixedDowntime) {
  // With failures during a fixed recovery D, each recovery takes (e^{cD} - 1) / c on average, so a
  // segment takes (e^{cS} - 1) e^{cD} / c. c = 1e-4, S = 1100, D = 500:
  // 0.1162781 * 1.0512711 * 10000 = 1222.4...; ETTR = 1000 / that.
  const FaultSpec spec{.node_failure_rate_per_day = 8.64, .failure_units = 1, .fixed_downtime_s = 500.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 100},
                       .failures_during_recovery = true};
  const double segment = std::expm1(0.11) * std::exp(0.05) / 1e-4;
  EXPECT_NEAR(renewal_ettr(spec, {.step_time_s = 100, .n_steps = 1000}), 1000 / segment, 1e-12);
}

TEST(AnalyticE2e, DivergesWhenFailuresOutpaceProgress) {
  // c (D + N T / 2) = (1 / 100) (50 + 10 * 20 / 2) = 1.5 >= 1: the run never finishes on average.
  const FaultSpec spec{.node_failure_rate_per_day = 864, .failure_units = 1, .fixed_downtime_s = 50.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 1}};
  const FaultAnalyticResult r = analytic_e2e(spec, {.step_time_s = 20, .n_steps = 100});
  EXPECT_FALSE(r.converges);
  EXPECT_EQ(r.ettr, 0);
  EXPECT_TRUE(std::isinf(r.t_total_s));
}

TEST(AnalyticE2e, AsyncChargesOnlyTheSnapshot) {
  // No failures: T_total = 100 * 10 + (100 / 10) * 0.5 = 1005 s (the 30 s write is hidden).
  const FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 0.0,
                       .checkpoint = {.interval_steps = 10, .save_time_s = 30, .mode = CheckpointMode::kAsync,
                                      .snapshot_time_s = 0.5}};
  EXPECT_DOUBLE_EQ(analytic_e2e(spec, {.step_time_s = 10, .n_steps = 100}).t_total_s, 1005.0);
}

TEST(AnalyticE2e, AsyncChargesTheSnapshotAndTheDrainsSlowdown) {
  // No failures: T_total = 100 * 10 + (100 / 10) * (0.5 + 2) = 1025 s: the write overlaps, the
  // 2 s it costs the steps it runs beside does not.
  FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 0.0,
                 .checkpoint = {.interval_steps = 10, .save_time_s = 30, .mode = CheckpointMode::kAsync,
                                .snapshot_time_s = 0.5, .drain_slowdown_s = 2}};
  const RunSpec run{.step_time_s = 10, .n_steps = 100};
  EXPECT_DOUBLE_EQ(checkpoint_stall_s(spec.checkpoint), 2.5);
  EXPECT_DOUBLE_EQ(analytic_e2e(spec, run).t_total_s, 1025.0);
  EXPECT_DOUBLE_EQ(analytic_e2e(spec, run).checkpoint_s, 25.0);
  // Young's interval with t_save = 2.5 s at c = 100 failures/day: sqrt(2 * 2.5 * 864) / 10 = 6.573 steps.
  spec.node_failure_rate_per_day = 100;
  EXPECT_NEAR(optimal_interval(spec, run).young_steps, std::sqrt(2 * 2.5 * 864.0) / 10, 1e-12);
  spec.checkpoint.drain_slowdown_s = -1;
  EXPECT_THAT([&] { validate(spec); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("fault.checkpoint.drain_slowdown_s")));
}

TEST(Validate, NamesTheField) {
  FaultSpec spec{.node_failure_rate_per_day = 0.01, .failure_units = 4, .fixed_downtime_s = 10.0,
                 .checkpoint = {.interval_steps = 0, .save_time_s = 1}};
  EXPECT_THAT([&] { validate(spec); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("fault.checkpoint.interval_steps")));
  spec.checkpoint.interval_steps = 1;
  spec.failure_units = 0;
  EXPECT_THAT([&] { validate(spec); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("fault.failure_units")));
  spec.failure_units = 1;
  spec.fixed_downtime_s.reset();
  EXPECT_THAT([&] { validate(spec); }, ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("fault.classes")));
  spec.classes = {{.name = "x", .recovery = {.kind = RecoveryKind::kLognormal, .mean_s = 10, .sigma = 0}}};
  EXPECT_THAT([&] { validate(spec); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("fault.classes[0].recovery.sigma")));
  EXPECT_THAT([] { validate(RunSpec{.step_time_s = 0, .n_steps = 1}); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("run.step_time_s")));
}

}  // namespace
}  // namespace mofasim::model
