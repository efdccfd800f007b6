#include "sim/fault/event_budget.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/fault_analytic.h"
#include "sim/units/format.h"

namespace mofasim::fault {
namespace {

// Exposed seconds of one checkpoint segment of `steps` steps, as the trial counts them.
double exposed_segment_s(const model::FaultSpec& spec, const model::RunSpec& run, double steps) {
  const double work = steps * run.step_time_s;
  if (!spec.failures_during_save) return work;
  const model::CheckpointPolicy& ck = spec.checkpoint;
  if (ck.mode == model::CheckpointMode::kBlocking) return work + ck.save_time_s;
  return work + model::checkpoint_stall_s(ck) + std::max(0.0, ck.save_time_s - work);  // snapshot, then wait for the write
}

}  // namespace

double expected_failures_per_trial(const model::FaultSpec& spec, const model::RunSpec& run) {
  const double c = model::job_failure_rate_per_s(spec);
  if (c <= 0) return 0;
  const std::int64_t n = spec.checkpoint.interval_steps;
  const auto full = static_cast<double>(run.n_steps / n);
  const std::int64_t rest = run.n_steps % n;
  double failures = full > 0 ? std::expm1(c * exposed_segment_s(spec, run, static_cast<double>(n))) * full : 0;
  if (rest > 0) failures += std::expm1(c * exposed_segment_s(spec, run, static_cast<double>(rest)));
  if (spec.failures_during_recovery) {
    failures += std::expm1(c * spec.init_time_s);
    if (failures > 0) failures *= std::exp(c * model::downtime_per_failure_s(spec));
  }
  return failures;
}

double expected_fail_slow_episodes_per_trial(const model::FaultSpec& spec, const model::RunSpec& run) {
  const model::FailSlowSpec& f = spec.fail_slow;
  if (!f.on()) return 0;
  const double onsets_per_s = f.rate_per_unit_per_day * static_cast<double>(f.units) / 86400.0;
  return onsets_per_s * static_cast<double>(run.n_steps) * run.step_time_s;
}

void check_event_budget(const model::FaultSpec& spec, const model::RunSpec& run, std::int64_t trials,
                        std::int64_t max_events) {
  const double per_trial = expected_failures_per_trial(spec, run);
  const double episodes = expected_fail_slow_episodes_per_trial(spec, run);
  const double total = (per_trial + episodes) * static_cast<double>(trials);
  if (total <= static_cast<double>(max_events)) return;
  const double c = model::job_failure_rate_per_s(spec);
  // When the failures alone are over the budget they are what to change: named alone, as before
  // fail-slow existed; the episodes are named when they are what takes the run over.
  if (per_trial * static_cast<double>(trials) > static_cast<double>(max_events)) {
    const double segment_s = exposed_segment_s(spec, run, static_cast<double>(spec.checkpoint.interval_steps));
    throw EventBudgetExceeded(
        "monte carlo: a trial is expected to meet " + format_number("%.3g", per_trial) +
        " failures (a checkpoint segment is " + format_number("%.3g", segment_s) +
        " s of exposed time against a mean time between failures of " + format_number("%.3g", 1 / c) + " s), so " +
        std::to_string(trials) + " trials need " + format_number("%.3g", per_trial * static_cast<double>(trials)) +
        " failure events, over the budget of " + std::to_string(max_events) +
        "; shorten fault_tolerance.checkpoint.interval_steps or the run, lower the failure rate, or use fewer "
        "--trials or a larger --max-events");
  }
  throw EventBudgetExceeded(
      "monte carlo: a trial is expected to meet " + format_number("%.3g", per_trial) + " failures and at least " +
      format_number("%.3g", episodes) + " fail-slow episodes, so " + std::to_string(trials) + " trials need " +
      format_number("%.3g", total) + " events, over the budget of " + std::to_string(max_events) +
      "; shorten fault_tolerance.checkpoint.interval_steps or the run, lower the failure rate or "
      "fault_tolerance.fail_slow.rate_per_day, or use fewer --trials or a larger --max-events");
}

void throw_budget_passed(std::int64_t max_events) {
  throw EventBudgetExceeded("monte carlo: the trials met more than their budget of " + std::to_string(max_events) +
                            " failure events before completing (failures outpace progress); shorten "
                            "fault_tolerance.checkpoint.interval_steps or the run, lower the failure rate, or use "
                            "fewer --trials or a larger --max-events");
}

}  // namespace mofasim::fault
