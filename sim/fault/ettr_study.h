// The ETTR study: the analytic model (MoFa(36) MoFa(37) MoFa(38) MoFa(39) MoFa(40) MoFa(41) MoFa(42)
// MoFa(43) MoFa(44), the renewal ETTR) side by side with the
// Monte Carlo injector for one FaultSpec, rendered as a human table, as JSON and as a per-trial
// CSV. The `mofasim ettr` command is a thin front end over these functions.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/fault_analytic.h"
#include "model/fault_spec.h"
#include "sim/fault/monte_carlo.h"

namespace mofasim::fault {

struct EttrStudy {
  model::FaultSpec spec{};
  model::RunSpec run{};
  model::FaultAnalyticResult analytic{};
  model::OptimalInterval optimum{};
  double renewal_ettr = 0;  // exact for Poisson failures, blocking saves, failure-free recovery
  MonteCarloResult monte_carlo{};
};

// Validates (std::invalid_argument naming the field), evaluates the analytic model and runs the
// Monte Carlo trials.
EttrStudy run_ettr_study(const model::FaultSpec& spec, const model::RunSpec& run, const MonteCarloOptions& options);

// The same study around trials already run (e.g. merged from shards, trial_shards.h).
EttrStudy ettr_study_from_trials(const model::FaultSpec& spec, const model::RunSpec& run, MonteCarloResult trials);

// Where the mean run's wall time went: useful steps, fail-stop lost work and recoveries,
// checkpoints, init, and with fail-slow on its slow steps (and cordon stalls) and the policy's
// restarts; the parts add up to the mean E2E.
struct TimeShare {
  std::string key;    // JSON key
  std::string label;  // table label
  double seconds = 0;
};
std::vector<TimeShare> time_breakdown(const EttrStudy& study);

// A fixed-width table: inputs, analytic vs Monte Carlo ETTR and E2E, the optimal interval, the
// failure and time breakdown. Deterministic text (no locale, fixed precision).
std::string render_ettr_table(const EttrStudy& study);

// JSON with at least analytic.{ettr, e2e_s, optimal_interval_steps} and monte_carlo.{ettr_mean,
// ci_level, ettr_ci95 [lo, hi], ettr_p1/p10/p50/p90/p99, e2e_mean_s, e2e_p1_s ... e2e_p99_s,
// ettr_bad_tail "low", e2e_bad_tail "high", trials}; non-finite numbers become null.
nlohmann::json ettr_study_json(const EttrStudy& study);

// One row per trial: trial, wall_s, ettr, lost_work_s, checkpoint_s, downtime_s, init_s,
// failures, then one failures_<class> column per class; with `fail_slow`, then slow_s,
// policy_restarts_s, episodes and actions.
void write_trials_csv(std::ostream& out, const MonteCarloResult& result, bool fail_slow = false);

}  // namespace mofasim::fault
