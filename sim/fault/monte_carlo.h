// The Monte Carlo fault injector: many independent seeded trials of a whole training run
// (sim/fault/trial.h), split over threads, with per-trial results and aggregate statistics.
// Trial i always draws from the stream Rng(seed, i), so results are bit-identical for any
// thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/fault_spec.h"
#include "sim/fault/event_budget.h"
#include "sim/fault/statistics.h"
#include "sim/fault/trial.h"

namespace mofasim::fault {

// More threads than this is a mistake, not a machine: the trials are split in chunks of 256 and
// each thread needs a stack, so a huge count only exhausts the process.
inline constexpr int kMaxMonteCarloThreads = 1024;

// Trials at most: each keeps its result (about 100 bytes with its failure counts), so 1e7 trials
// hold about 1 GB; a statistic needs far fewer.
inline constexpr std::int64_t kMaxMonteCarloTrials = 10'000'000;

struct MonteCarloOptions {
  std::int64_t trials = 10000;  // in [1, kMaxMonteCarloTrials]
  std::uint64_t seed = 1;
  int threads = 1;  // in [1, kMaxMonteCarloThreads]; the calling thread is one of them
  // Failure events (fail-slow episodes included) over all trials at most (sim/fault/event_budget.h):
  // refused up front when the expected count exceeds it, stopped with the same error when the
  // trials pass it.
  std::int64_t max_events = kDefaultMaxEvents;
  // A shard: run only trials [first_trial, end_trial) of the `trials` (end_trial -1 = trials).
  // Trial i still draws from Rng(seed, i), so the shards of a run hold exactly its trials.
  std::int64_t first_trial = 0;
  std::int64_t end_trial = -1;
  // Called on the calling thread between chunks of trials and once at the end, with
  // (trials done, trials in all). May be empty.
  std::function<void(std::int64_t, std::int64_t)> progress{};
};

struct MonteCarloSummary {
  std::int64_t trials = 0;
  std::uint64_t seed = 0;
  SampleSummary ettr{};             // per-trial ETTR
  SampleSummary e2e_s{};            // per-trial wall time
  double ettr_pooled = 0;         // useful time / mean wall time (the ratio of means, like MoFa(36))
  double mean_failures = 0;
  std::vector<double> mean_failures_by_class{};
  double mean_lost_work_s = 0;
  double mean_checkpoint_s = 0;
  double mean_downtime_s = 0;
  double mean_init_s = 0;
  // Fail-slow (zero when it is off) and goodput (empty unless run.tokens_per_step > 0).
  double mean_slow_s = 0;
  double mean_mitigation_s = 0;
  double mean_episodes = 0;
  double mean_mitigations = 0;
  bool has_goodput = false;
  SampleSummary goodput{};  // tokens per wall second: n_steps * tokens_per_step / wall_s (high = good)
};

struct MonteCarloResult {
  std::vector<std::string> class_names{};
  std::vector<TrialResult> trials{};                 // trials[i] is trial first_trial + i
  std::vector<std::int64_t> failures_by_class{};     // trial i, class c at i * class_names.size() + c
  MonteCarloSummary summary{};
};

// The statistics of `result.trials` (summary.trials = their number, summary.seed = seed).
MonteCarloSummary summarize_trials(const MonteCarloResult& result, const model::RunSpec& run, std::uint64_t seed);

// Validates the inputs (std::invalid_argument naming the field), checks the event budget
// (EventBudgetExceeded) and runs the trials. The outcome, budget error included, is the same for
// any thread count: the error means the failures of all trials add up to more than max_events.
MonteCarloResult run_monte_carlo(const model::FaultSpec& spec, const model::RunSpec& run,
                                 const MonteCarloOptions& options);

}  // namespace mofasim::fault
