// Monte Carlo options shared by `mofasim ettr` and `mofasim sweep`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/cli/cli_common.h"
#include "sim/fault/monte_carlo.h"
#include "sim/scenario/diagnostics.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {

struct EttrOptions {
  std::int64_t trials = 10000;
  std::uint64_t seed = 1;
  int threads = 0;  // 0 = all hardware threads
  bool quiet = false;
  std::optional<double> step_time;
  std::int64_t max_events = fault::kDefaultMaxEvents;
};

void add_ettr_options(po::options_description& desc, EttrOptions& options);
// UsageError for trials outside [1, fault::kMaxMonteCarloTrials], threads outside [0, fault::kMaxMonteCarloThreads], step time <= 0 or not finite.
void check_ettr_options(const std::string& command, const EttrOptions& options);
// Threads resolved, progress printed on stderr unless quiet.
fault::MonteCarloOptions monte_carlo_options(const EttrOptions& options);

// A Monte Carlo run over its event budget as bad input: the error located at the scenario's
// fault_tolerance.checkpoint section (the interval is what one usually changes).
scenario::ScenarioError located_budget_error(const scenario::LoadedScenario& loaded,
                                             const fault::EventBudgetExceeded& error);

}  // namespace mofasim::cli
