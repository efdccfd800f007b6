// MoFa(36) MoFa(37) MoFa(38) MoFa(39) MoFa(40) MoFa(41) MoFa(42) MoFa(43) MoFa(44) and the renewal-theory ETTR;
// see fault_analytic.h for the contracts.
#include "model/fault_analytic.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/units/check.h"

namespace mofasim::model {
namespace {

constexpr double kSecondsPerDay = 86400.0;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Stall per checkpoint that the closed form charges: the blocking save, or the snapshot of an
// asynchronous checkpoint plus its drain's slowdown of training (its write itself overlaps).
double stall_per_checkpoint_s(const FaultSpec& spec) { return checkpoint_stall_s(spec.checkpoint); }

}  // namespace

double job_failure_rate_per_s(const FaultSpec& spec) {
  return static_cast<double>(spec.failure_units) * spec.node_failure_rate_per_day / kSecondsPerDay;
}

double mean_recovery_s(const RecoveryDistribution& r) {
  switch (r.kind) {
    case RecoveryKind::kFixed:
    case RecoveryKind::kExponential:
    case RecoveryKind::kLognormal:  // parameterised by its mean
      return r.mean_s;
    case RecoveryKind::kEmpirical: {
      double sum = 0;
      for (double s : r.samples_s) sum += s;
      return r.samples_s.empty() ? 0 : sum / static_cast<double>(r.samples_s.size());
    }
  }
  MOFASIM_UNREACHABLE("unknown RecoveryKind");
}

// MoFa(41).
double mttr_s(const std::vector<FailureClass>& classes) {
  double weight = 0;
  double weighted = 0;
  for (const FailureClass& c : classes) {
    weight += c.weight;
    weighted += c.weight * mean_recovery_s(c.recovery);
  }
  return weight > 0 ? weighted / weight : 0;
}

double downtime_per_failure_s(const FaultSpec& spec) {
  // The checkpoint read-back is part of every recovery (0 unless the I/O model derived it).
  return (spec.fixed_downtime_s ? *spec.fixed_downtime_s : mttr_s(spec.classes)) + spec.checkpoint.restore_time_s;
}

// MoFa(40): T_total = (T_init + T_eff + (N_steps / N) * t_save) / (1 - c * (D + N * T_step / 2)).
// It follows from (36)-(39) by writing the failure count of (38) over the whole wall time,
// N_fail = c * T_total, so T_total = T_init + T_eff + saves + c * T_total * (D + N * T_step / 2).
double analytic_total_s(const FaultSpec& spec, const RunSpec& run, double interval_steps) {
  const double c = job_failure_rate_per_s(spec);
  const double t_eff = static_cast<double>(run.n_steps) * run.step_time_s;  // MoFa(37)
  const double saves = static_cast<double>(run.n_steps) / interval_steps * stall_per_checkpoint_s(spec);
  const double loss_per_failure = downtime_per_failure_s(spec) + interval_steps * run.step_time_s / 2;
  const double denominator = 1 - c * loss_per_failure;
  if (denominator <= 0) return kInfinity;
  return (spec.init_time_s + t_eff + saves) / denominator;
}

FaultAnalyticResult analytic_e2e(const FaultSpec& spec, const RunSpec& run) {
  validate(spec);
  validate(run);
  FaultAnalyticResult r;
  const double interval = static_cast<double>(spec.checkpoint.interval_steps);
  r.t_eff_s = static_cast<double>(run.n_steps) * run.step_time_s;  // MoFa(37)
  r.downtime_s = downtime_per_failure_s(spec);
  r.checkpoint_s = static_cast<double>(run.n_steps) / interval * stall_per_checkpoint_s(spec);
  r.t_total_s = analytic_total_s(spec, run, interval);               // MoFa(40)
  r.converges = std::isfinite(r.t_total_s);
  if (!r.converges) {
    r.t_int_s = kInfinity;
    r.n_failures = kInfinity;
    r.ettr = 0;
    return r;
  }
  r.n_failures = job_failure_rate_per_s(spec) * r.t_total_s;  // MoFa(38), N_nodes * lambda * T_days
  r.t_int_s = r.t_total_s - r.t_eff_s;                          // MoFa(39) = T_init + N_fail(...) + saves
  r.ettr = r.t_eff_s / r.t_total_s;                              // MoFa(36)
  return r;
}

// MoFa(44). With A = T_init + T_eff, b = N_steps * t_save, k = c * T_step / 2, MoFa(40) reads
// T(N) = (A + b / N) / (1 - cD - kN). Setting dT/dN = 0 and multiplying by N^2 (1 - cD - kN)^2:
//   -b (1 - cD - kN) + k (A N^2 + b N) = 0   <=>   k A N^2 + 2 b k N - b (1 - cD) = 0,
// whose positive root, written without cancellation, is N* = b (1 - cD) / (b k + sqrt(b^2 k^2 + k A b (1 - cD))).
// For b k << A (1 - cD) this is sqrt(b / (k A)) = sqrt(2 t_save / c) / T_step, Young's interval.
// T(N) is convex on (0, (1 - cD) / k), so the best integer is floor(N*) or ceil(N*).
OptimalInterval optimal_interval(const FaultSpec& spec, const RunSpec& run) {
  validate(spec);
  validate(run);
  OptimalInterval o;
  const double c = job_failure_rate_per_s(spec);
  const double t_save = stall_per_checkpoint_s(spec);
  const double d = downtime_per_failure_s(spec);
  const double a = spec.init_time_s + static_cast<double>(run.n_steps) * run.step_time_s;
  const double b = static_cast<double>(run.n_steps) * t_save;
  const double k = c * run.step_time_s / 2;
  const double slack = 1 - c * d;
  const double max_steps = static_cast<double>(run.n_steps);
  if (c <= 0 || slack <= 0) {
    o.exact_real = kInfinity;
    o.young_steps = kInfinity;
    o.daly_steps = kInfinity;
    o.steps = run.n_steps;
  } else if (t_save <= 0) {
    // Free checkpoints: T(N) grows with N (only the lost work k N remains), so every step; the
    // root, Young and Daly all go to 0 (the root's formula would be 0 / 0).
    o.exact_real = 0;
    o.young_steps = 0;
    o.daly_steps = 0;
    o.steps = 1;
  } else {
    o.exact_real = b * slack / (b * k + std::sqrt(b * b * k * k + k * a * b * slack));
    // Young (1974): tau = sqrt(2 delta M) with M = 1 / c the job MTBF, in steps.
    o.young_steps = std::sqrt(2 * t_save / c) / run.step_time_s;
    // Daly (2006), equation 37 of "A higher order estimate of the optimum checkpoint interval":
    // tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / (2M)) + (1/9) (delta / (2M))] - delta for delta < 2M,
    // tau = M otherwise; tau is compute time between checkpoints.
    const double mtbf = 1 / c;
    const double ratio = t_save / (2 * mtbf);
    const double tau = t_save < 2 * mtbf
                           ? std::sqrt(2 * t_save * mtbf) * (1 + std::sqrt(ratio) / 3 + ratio / 9) - t_save
                           : mtbf;
    o.daly_steps = tau / run.step_time_s;
    const double lo = std::clamp(std::floor(o.exact_real), 1.0, max_steps);
    const double hi = std::clamp(std::ceil(o.exact_real), 1.0, max_steps);
    o.steps = static_cast<std::int64_t>(analytic_total_s(spec, run, hi) < analytic_total_s(spec, run, lo) ? hi : lo);
  }
  o.t_total_s = analytic_total_s(spec, run, static_cast<double>(o.steps));
  o.ettr = std::isfinite(o.t_total_s) ? static_cast<double>(run.n_steps) * run.step_time_s / o.t_total_s : 0;
  return o;
}

namespace {

// Expected wall time to get through `exposed_s` seconds of failure-exposed work that a failure
// sends back to its start, at Poisson rate c, each failure followed by a recovery of expected
// length `recovery_s` (itself already including any restarts). Renewal argument: with X the time
// to the next failure, E = E[min(X, S)] + P(X < S) (R + E), E[min(X, S)] = (1 - e^{-cS}) / c and
// P(X < S) = 1 - e^{-cS}, so E = (e^{cS} - 1) (1 / c + R). By Wald's identity R only enters
// through its mean when recovery times are i.i.d. and independent of the failure times.
double expected_restartable_s(double c, double exposed_s, double recovery_s) {
  if (c <= 0) return exposed_s;
  return std::expm1(c * exposed_s) * (1 / c + recovery_s);
}

// Expected time of one recovery. Failure-free recovery: its mean D. Failures during recovery
// restart it with a fresh draw; for a fixed D that is a restartable segment of length D with no
// extra cost per failure: (e^{cD} - 1) / c. For random recovery times this uses the mean D
// (exact only for a fixed D, since E[e^{cD}] > e^{c E[D]}).
double expected_recovery_s(const FaultSpec& spec, double c) {
  const double d = downtime_per_failure_s(spec);
  if (!spec.failures_during_recovery || c <= 0) return d;
  return std::expm1(c * d) / c;
}

double expected_segment_s(const FaultSpec& spec, const RunSpec& run, double c, double steps) {
  const double stall = stall_per_checkpoint_s(spec);
  const double work = steps * run.step_time_s;
  const double recovery = expected_recovery_s(spec, c);
  if (spec.failures_during_save) return expected_restartable_s(c, work + stall, recovery);
  return expected_restartable_s(c, work, recovery) + stall;
}

}  // namespace

double renewal_ettr(const FaultSpec& spec, const RunSpec& run) {
  validate(spec);
  validate(run);
  const double c = job_failure_rate_per_s(spec);
  const double steps = static_cast<double>(spec.checkpoint.interval_steps);
  return steps * run.step_time_s / expected_segment_s(spec, run, c, steps);
}

double renewal_expected_total_s(const FaultSpec& spec, const RunSpec& run) {
  validate(spec);
  validate(run);
  const double c = job_failure_rate_per_s(spec);
  const std::int64_t n = spec.checkpoint.interval_steps;
  const std::int64_t full = run.n_steps / n;
  const std::int64_t rest = run.n_steps % n;
  double total = spec.failures_during_recovery
                     ? expected_restartable_s(c, spec.init_time_s, expected_recovery_s(spec, c))
                     : spec.init_time_s;
  total += static_cast<double>(full) * expected_segment_s(spec, run, c, static_cast<double>(n));
  if (rest > 0) total += expected_segment_s(spec, run, c, static_cast<double>(rest));
  return total;
}

}  // namespace mofasim::model
