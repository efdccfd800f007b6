// Runs the Monte Carlo trials over std::threads and aggregates them.
#include "sim/fault/monte_carlo.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <span>
#include <stdexcept>
#include <thread>

#include "sim/fault/failure_sampler.h"
#include "sim/fault/rng.h"

namespace mofasim::fault {
namespace {

constexpr std::int64_t kChunk = 256;  // trials claimed at a time; small enough for even load

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
  for (double& m : s.mean_failures_by_class) m /= dn;
  return s;
}

MonteCarloResult run_monte_carlo(const model::FaultSpec& spec, const model::RunSpec& run,
                                 const MonteCarloOptions& options) {
  model::validate(spec);
  model::validate(run);
  if (options.trials < 1) throw std::invalid_argument("monte_carlo.trials must be >= 1");
  if (options.threads < 1) throw std::invalid_argument("monte_carlo.threads must be >= 1");
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
          std::span<std::int64_t> counts(result.failures_by_class.data() + slot * classes, classes);
          result.trials[slot] = simulate_trial(spec, run, sampler, rng, counts);
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
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(options.threads - 1));
  for (int t = 1; t < options.threads; ++t) pool.emplace_back(work, false);
  work(true);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  if (options.progress) options.progress(count, count);
  result.summary = summarize_trials(result, run, options.seed);
  return result;
}

}  // namespace mofasim::fault
