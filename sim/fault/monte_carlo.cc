// Runs the Monte Carlo trials over std::threads and aggregates them.
#include "sim/fault/monte_carlo.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "sim/fault/failure_sampler.h"
#include "sim/fault/rng.h"

namespace mofasim::fault {
namespace {

constexpr std::int64_t kChunk = 256;  // trials claimed at a time; small enough for even load
// Trial i's fail-slow draws come from Rng(seed ^ kFailSlowStream, i): a stream apart from its
// fail-stop draws, which therefore stay the same whether fail-slow is on or off.
constexpr std::uint64_t kFailSlowStream = 0xFA11'5107'0000'0017ULL;
// The restart policy's own draws (each restart's class and recovery time) come from
// Rng(seed ^ kRestartStream, i): kept off the episode stream, so that they never shift the
// episodes that follow (every policy meets the same episodes) nor repeat an episode's draws.
constexpr std::uint64_t kRestartStream = 0x2E57'A27D'0000'0029ULL;

}  // namespace

MonteCarloSummary summarize_trials(const MonteCarloResult& r, const model::RunSpec& run, std::uint64_t seed) {
  MonteCarloSummary s;
  s.trials = static_cast<std::int64_t>(r.trials.size());
  s.seed = seed;
  const std::size_t n = r.trials.size();
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = r.trials[i].ettr;
  s.ettr = summarize(values);
  for (std::size_t i = 0; i < n; ++i) values[i] = r.trials[i].wall_s;
  s.e2e_s = summarize(values);
  if (run.tokens_per_step > 0) {
    const double tokens = static_cast<double>(run.n_steps) * run.tokens_per_step;
    for (std::size_t i = 0; i < n; ++i) values[i] = tokens / r.trials[i].wall_s;
    s.goodput = summarize(values);
    s.has_goodput = true;
  }
  s.ettr_pooled = static_cast<double>(run.n_steps) * run.step_time_s / s.e2e_s.mean;
  const std::size_t classes = r.class_names.size();
  s.mean_failures_by_class.assign(classes, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const TrialResult& t = r.trials[i];
    s.mean_failures += static_cast<double>(t.failures);
    s.mean_lost_work_s += t.lost_work_s;
    s.mean_checkpoint_s += t.checkpoint_s;
    s.mean_downtime_s += t.downtime_s;
    s.mean_init_s += t.init_s;
    s.mean_slow_s += t.slow_s;
    s.mean_mitigation_s += t.mitigation_s;
    s.mean_episodes += static_cast<double>(t.episodes);
    s.mean_mitigations += static_cast<double>(t.mitigations);
    for (std::size_t c = 0; c < classes; ++c) {
      s.mean_failures_by_class[c] += static_cast<double>(r.failures_by_class[i * classes + c]);
    }
  }
  const double dn = static_cast<double>(n);
  s.mean_failures /= dn;
  s.mean_lost_work_s /= dn;
  s.mean_checkpoint_s /= dn;
  s.mean_downtime_s /= dn;
  s.mean_init_s /= dn;
  s.mean_slow_s /= dn;
  s.mean_mitigation_s /= dn;
  s.mean_episodes /= dn;
  s.mean_mitigations /= dn;
  for (double& m : s.mean_failures_by_class) m /= dn;
  return s;
}

MonteCarloResult run_monte_carlo(const model::FaultSpec& spec, const model::RunSpec& run,
                                 const MonteCarloOptions& options) {
  model::validate(spec);
  model::validate(run);
  if (options.trials < 1 || options.trials > kMaxMonteCarloTrials) {
    throw std::invalid_argument("monte_carlo.trials must be in [1, " + std::to_string(kMaxMonteCarloTrials) + "], got " +
                                std::to_string(options.trials));
  }
  if (options.threads < 1 || options.threads > kMaxMonteCarloThreads) {
    throw std::invalid_argument("monte_carlo.threads must be in [1, " + std::to_string(kMaxMonteCarloThreads) + "], got " +
                                std::to_string(options.threads));
  }
  if (options.max_events < 1 || options.max_events > kMaxMaxEvents) {
    throw std::invalid_argument("monte_carlo.max_events must be in [1, " + std::to_string(kMaxMaxEvents) + "], got " +
                                std::to_string(options.max_events));
  }
  check_event_budget(spec, run, options.trials, options.max_events);
  const std::int64_t first = options.first_trial;
  const std::int64_t last = options.end_trial < 0 ? options.trials : options.end_trial;
  if (first < 0 || first >= last || last > options.trials) {
    throw std::invalid_argument("monte_carlo: trial range [" + std::to_string(first) + ", " + std::to_string(last) +
                                ") is empty or outside [0, " + std::to_string(options.trials) + ")");
  }
  const std::int64_t count = last - first;
  const FailureSampler sampler(spec);
  MonteCarloResult result;
  result.class_names = sampler.class_names();
  const auto trials = static_cast<std::size_t>(count);
  const auto classes = static_cast<std::size_t>(sampler.num_classes());
  result.trials.resize(trials);
  result.failures_by_class.assign(trials * classes, 0);

  std::atomic<std::int64_t> next{first};
  std::atomic<std::int64_t> done{0};
  // Failures and fail-slow episodes of the finished trials. A trial may use what is left of the budget; past it, the
  // total over all trials is over the budget whatever the order of the trials, so the error does
  // not depend on the thread count.
  std::atomic<std::int64_t> events{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  // Each worker claims chunks of trial indices; trial i writes only slot i.
  auto work = [&](bool report) {
    try {
      for (;;) {
        const std::int64_t begin = next.fetch_add(kChunk);
        if (begin >= last) return;
        const std::int64_t end = std::min(begin + kChunk, last);
        for (std::int64_t i = begin; i < end; ++i) {
          const auto slot = static_cast<std::size_t>(i - first);
          Rng rng(options.seed, static_cast<std::uint64_t>(i));
          Rng slow_rng(options.seed ^ kFailSlowStream, static_cast<std::uint64_t>(i));
          Rng restart_rng(options.seed ^ kRestartStream, static_cast<std::uint64_t>(i));
          std::span<std::int64_t> counts(result.failures_by_class.data() + slot * classes, classes);
          const std::int64_t left = options.max_events - events.load();
          try {
            result.trials[slot] = simulate_trial(spec, run, sampler, rng, counts, left, &slow_rng, &restart_rng);
          } catch (const EventBudgetExceeded&) {
            throw_budget_passed(options.max_events);
          }
          // Fail-slow episodes are events of the same budget as failures (event_budget.h).
          const std::int64_t met = result.trials[slot].failures + result.trials[slot].episodes;
          if (events.fetch_add(met) + met > options.max_events) throw_budget_passed(options.max_events);
        }
        const std::int64_t now_done = done.fetch_add(end - begin) + (end - begin);
        if (report && options.progress) options.progress(now_done, count);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(last);  // stop the others early
    }
  };
  // No more threads than chunks. Trials are claimed dynamically and each draws from its own stream,
  // so if the system refuses a thread the ones already started (and this one) do all the work with
  // the same result; jthread joins them on every path out of this block.
  const std::int64_t chunks = count / kChunk + (count % kChunk != 0 ? 1 : 0);
  const int threads = static_cast<int>(std::min<std::int64_t>(options.threads, chunks));
  {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<std::size_t>(threads - 1));
    for (int t = 1; t < threads; ++t) {
      try {
        pool.emplace_back(work, false);
      } catch (const std::system_error&) {
        break;  // out of threads: run with those we have
      }
    }
    work(true);
  }
  if (error) std::rethrow_exception(error);
  if (options.progress) options.progress(count, count);
  result.summary = summarize_trials(result, run, options.seed);
  return result;
}

}  // namespace mofasim::fault
