// Analytic end-to-end time and ETTR under failures (MoFa §3.4, MoFa(36) MoFa(37) MoFa(38) MoFa(39) MoFa(40)
// MoFa(41) MoFa(42) MoFa(43) MoFa(44)), the optimal checkpoint interval (exact root of MoFa(44), Young's and Daly's approximations) and the exact
// renewal-theory ETTR for Poisson failures, against which the Monte Carlo injector is checked.
// All times in seconds; lambda in failures per failure unit per day.
#pragma once

#include <cstdint>
#include <vector>

#include "model/fault_spec.h"

namespace mofasim::model {

// Job failure rate c = failure_units * lambda / 86400, failures per second of wall time.
double job_failure_rate_per_s(const FaultSpec& spec);

// Mean of one recovery-time distribution.
double mean_recovery_s(const RecoveryDistribution& r);

// MoFa(41): MTTR = sum_i p_i * t_i with p_i = weight_i / sum(weights).
double mttr_s(const std::vector<FailureClass>& classes);

// D of MoFa(39): fixed_downtime_s if set, otherwise the MTTR of the class mix; plus the checkpoint
// restore time when the I/O model derived one.
double downtime_per_failure_s(const FaultSpec& spec);

struct FaultAnalyticResult {
  double t_eff_s = 0;        // MoFa(37)
  double t_total_s = 0;      // MoFa(40); +infinity when the run cannot converge
  double t_int_s = 0;        // MoFa(39) evaluated at T_total: t_total_s - t_eff_s
  double n_failures = 0;     // MoFa(38) with T_days = T_total / 86400
  double checkpoint_s = 0;   // (N_steps / N_ckpt) * t_save
  double ettr = 0;           // MoFa(36) = t_eff / t_total; 0 when the run cannot converge
  double downtime_s = 0;     // D used
  bool converges = true;     // false when c * (D + N_ckpt * T_step / 2) >= 1
};

// MoFa(36) MoFa(37) MoFa(38) MoFa(39) MoFa(40), the closed form. The checkpoint stall per interval is save_time_s for
// blocking saves and snapshot_time_s for async ones (the background write is assumed hidden).
FaultAnalyticResult analytic_e2e(const FaultSpec& spec, const RunSpec& run);

// T_total of MoFa(40) as a function of the interval N (steps), for the tuner and the sweep.
double analytic_total_s(const FaultSpec& spec, const RunSpec& run, double interval_steps);

struct OptimalInterval {
  double exact_real = 0;          // positive root of MoFa(44)
  std::int64_t steps = 1;         // floor or ceil of exact_real (>= 1), whichever gives the smaller T_total
  double young_steps = 0;         // sqrt(2 t_save / c) / T_step
  double daly_steps = 0;          // Daly (2006) higher-order interval / T_step
  double t_total_s = 0;           // MoFa(40) at `steps`
  double ettr = 0;                // MoFa(36) at `steps`
};

// MoFa(44) and its first-order (Young) and higher-order (Daly) approximations. Requires a
// positive failure rate and a positive stall per checkpoint; otherwise every N is as good as
// another and the result is steps = n_steps (checkpoint only at the end), exact_real = +infinity.
OptimalInterval optimal_interval(const FaultSpec& spec, const RunSpec& run);

// Exact long-run ETTR for Poisson failures at job rate c, blocking saves of w seconds taken every
// Delta = N_ckpt * T_step seconds of work, failures during saves, none during the recovery D:
//   ETTR = c * Delta / ((1 + c * D) * (exp(c * (Delta + w)) - 1)).
// D is downtime_per_failure_s(spec) (exact only for a fixed D: see the .cc for why the mean of a
// random recovery time gives the same expectation).
double renewal_ettr(const FaultSpec& spec, const RunSpec& run);

// The expected wall time of a run of ceil(n / N) such segments (the last one shorter when N does
// not divide n), each segment's expected time from the same renewal argument.
double renewal_expected_total_s(const FaultSpec& spec, const RunSpec& run);

}  // namespace mofasim::model
