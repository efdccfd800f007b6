// Monte Carlo options shared by `mofasim ettr` and `mofasim sweep`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/cli/cli_common.h"
#include "sim/fault/monte_carlo.h"

namespace mofasim::cli {

struct EttrOptions {
  std::int64_t trials = 10000;
  std::uint64_t seed = 1;
  int threads = 0;  // 0 = all hardware threads
  bool quiet = false;
  std::optional<double> step_time;
};

void add_ettr_options(po::options_description& desc, EttrOptions& options);
// UsageError for trials < 1, threads < 0, step time <= 0 or not finite.
void check_ettr_options(const std::string& command, const EttrOptions& options);
// Threads resolved, progress printed on stderr unless quiet.
fault::MonteCarloOptions monte_carlo_options(const EttrOptions& options);

}  // namespace mofasim::cli
