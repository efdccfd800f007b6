// How much work a Monte Carlo run will be, before it starts. A trial costs one loop iteration per
// failure (completed segments are skipped arithmetically, sim/fault/trial.h), and when failures
// outpace progress the expected number of failures grows exponentially with the exposed length of
// a checkpoint segment, so a run can take years. The expected count has a closed form (renewal
// argument: a segment of S exposed seconds at job failure rate c is retried until one attempt
// sees no failure, e^{-cS} per attempt, so it meets e^{cS} - 1 failures on average), and runs
// whose estimate exceeds a budget of failure events are refused up front; the trials also stop
// with the same error if they pass the budget anyway (a heavy-tailed process, a random recovery).
// Fail-slow episodes (model::FailSlowSpec) are events of the same budget: each costs the trial a
// few loop iterations like a failure, and a high onset rate makes a trial walk millions of them.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "model/fault_spec.h"

namespace mofasim::fault {

// Failure events over all trials of one Monte Carlo run at most, by default. The shipped
// scenarios need at most about 5e6 (500 failures a trial, 10000 trials); 1e8 takes seconds.
inline constexpr std::int64_t kDefaultMaxEvents = 100'000'000;
// The largest budget one may ask for: weeks of work, and far from overflowing the event counters.
inline constexpr std::int64_t kMaxMaxEvents = 1'000'000'000'000'000;

// The run needs more failure events than its budget. Comes from the input (rates, intervals,
// trials), not from a bug.
class EventBudgetExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Expected failures in one trial: for each checkpoint segment (and the init, when failures strike
// during recovery) e^{cS} - 1, each failure followed by e^{cD} - 1 more during its recovery when
// those are enabled (D the mean downtime). +infinity when it overflows. Exact for Poisson failures
// and a fixed downtime; the mean rate is used for other processes. Spec and run must be valid.
double expected_failures_per_trial(const model::FaultSpec& spec, const model::RunSpec& run);

// Expected fail-slow onsets in one trial: the job's onset rate (rate_per_unit_per_day * units per
// day) over the run's useful time n_steps * step_time_s, a lower bound of its wall time (episodes
// only lengthen it), so the up-front refusal never refuses a run that fits; the trials count the
// episodes they meet against the same budget. 0 when fail-slow is off.
double expected_fail_slow_episodes_per_trial(const model::FaultSpec& spec, const model::RunSpec& run);

// EventBudgetExceeded, with the estimate and what to change, when trials times the expected
// failures and fail-slow episodes per trial exceed max_events.
void check_event_budget(const model::FaultSpec& spec, const model::RunSpec& run, std::int64_t trials,
                        std::int64_t max_events);

// Throws the EventBudgetExceeded that stops trials which passed max_events failures in all.
[[noreturn]] void throw_budget_passed(std::int64_t max_events);

}  // namespace mofasim::fault
