#include "sim/cli/ettr_options.h"

#include <cmath>
#include <iostream>
#include <thread>

#include "sim/progress/progress_reporter.h"

namespace mofasim::cli {

void add_ettr_options(po::options_description& desc, EttrOptions& options) {
  desc.add_options()("trials", po::value<std::int64_t>(&options.trials)->default_value(options.trials),
                     "Monte Carlo trials")("seed", po::value<std::uint64_t>(&options.seed)->default_value(options.seed),
                                           "random seed (results are identical for any thread count)")(
      "threads", po::value<int>(&options.threads)->default_value(options.threads), "worker threads; 0 = all cores")(
      "quiet,q", po::bool_switch(&options.quiet), "no progress line on stderr (it is shown only on a terminal)")(
      "step-time", po::value<double>()->notifier([&options](double v) { options.step_time = v; }),
      "step time in seconds (e.g. measured on real hardware); replaces the simulated one");
}

void check_ettr_options(const std::string& command, const EttrOptions& options) {
  if (options.trials < 1) throw UsageError("mofasim " + command + ": --trials must be >= 1");
  if (options.threads < 0) throw UsageError("mofasim " + command + ": --threads must be >= 0");
  if (options.step_time && !(std::isfinite(*options.step_time) && *options.step_time > 0)) {
    throw UsageError("mofasim " + command + ": --step-time must be a positive number of seconds");
  }
}

fault::MonteCarloOptions monte_carlo_options(const EttrOptions& options) {
  fault::MonteCarloOptions mc{.trials = options.trials, .seed = options.seed, .threads = options.threads, .progress = {}};
  if (mc.threads == 0) mc.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  mc.progress = progress::stderr_callback("monte carlo", "trials", options.quiet);
  return mc;
}

}  // namespace mofasim::cli
