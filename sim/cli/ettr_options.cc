#include "sim/cli/ettr_options.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <thread>

namespace mofasim::cli {

void add_ettr_options(po::options_description& desc, EttrOptions& options) {
  desc.add_options()("trials", po::value<std::int64_t>(&options.trials)->default_value(options.trials),
                     "Monte Carlo trials")("seed", po::value<std::uint64_t>(&options.seed)->default_value(options.seed),
                                           "random seed (results are identical for any thread count)")(
      "threads", po::value<int>(&options.threads)->default_value(options.threads), "worker threads; 0 = all cores")(
      "quiet,q", po::bool_switch(&options.quiet), "no progress on stderr")(
      "max-events", po::value<std::int64_t>(&options.max_events)->default_value(options.max_events),
      "failure events over all Monte Carlo trials at most; a run expected to need more is refused up front")(
      "step-time", po::value<double>()->notifier([&options](double v) { options.step_time = v; }),
      "step time in seconds (e.g. measured on real hardware); replaces the simulated one");
}

void check_ettr_options(const std::string& command, const EttrOptions& options) {
  if (options.trials < 1 || options.trials > fault::kMaxMonteCarloTrials) {
    throw UsageError("mofasim " + command + ": --trials: must be in [1, " + std::to_string(fault::kMaxMonteCarloTrials) +
                     "], got " + std::to_string(options.trials));
  }
  if (options.threads < 0 || options.threads > fault::kMaxMonteCarloThreads) {
    throw UsageError("mofasim " + command + ": --threads: must be in [0, " + std::to_string(fault::kMaxMonteCarloThreads) +
                     "] (0 = all cores), got " + std::to_string(options.threads));
  }
  if (options.max_events < 1 || options.max_events > fault::kMaxMaxEvents) {
    throw UsageError("mofasim " + command + ": --max-events: must be in [1, " + std::to_string(fault::kMaxMaxEvents) +
                     "], got " + std::to_string(options.max_events));
  }
  if (options.step_time && !(std::isfinite(*options.step_time) && *options.step_time > 0)) {
    throw UsageError("mofasim " + command + ": --step-time must be a positive number of seconds");
  }
}

fault::MonteCarloOptions monte_carlo_options(const EttrOptions& options) {
  fault::MonteCarloOptions mc{.trials = options.trials,
                              .seed = options.seed,
                              .threads = options.threads,
                              .max_events = options.max_events,
                              .progress = {}};
  if (mc.threads == 0) {
    mc.threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u,
                                             static_cast<unsigned>(fault::kMaxMonteCarloThreads)));
  }
  if (!options.quiet) {
    mc.progress = [](std::int64_t done, std::int64_t total) {
      std::cerr << "\rmonte carlo: " << done << "/" << total << (done == total ? "\n" : "") << std::flush;
    };
  }
  return mc;
}

scenario::ScenarioError located_budget_error(const scenario::LoadedScenario& loaded,
                                             const fault::EventBudgetExceeded& error) {
  const scenario::SourceLocation at = loaded.sources.find("fault_tolerance.checkpoint.interval_steps");
  return scenario::ScenarioError(
      {scenario::format_location(at) + ": fault_tolerance.checkpoint.interval_steps: " + error.what()});
}

}  // namespace mofasim::cli
