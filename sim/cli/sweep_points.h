// The points of `mofasim sweep`: every value's scenario loaded, its step time resolved and its
// Monte Carlo event budget checked, and only then fail-slow's slow steps priced. Pricing simulates
// one step per pipeline stage at every point, so an over-budget sweep (or a bad value) must fail
// before any of it; the event budget needs only the episode rate (sim/fault/event_budget.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/fault_spec.h"
#include "sim/cli/ettr_options.h"
#include "sim/cli/sweep_range.h"
#include "sim/fault/ettr_sweep.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {

struct SweepPoints {
  std::vector<fault::EttrStudyInputs> inputs{};  // one per range value
  std::optional<scenario::LoadedScenario> first{};  // locates a budget error met during the trials
};

// Sets the fail-slow spec's slow steps for a loaded point (price_fail_slow, or a test's stand-in).
using FailSlowPricer = std::function<void(const scenario::LoadedScenario&, model::FailSlowSpec&)>;

// Loads the points (`sets` then the swept override), checks each one's event budget for
// ettr.trials (located ScenarioError, the text of fault::check_event_budget), then prices
// fail-slow at each point with `price`.
SweepPoints load_sweep_points(const std::string& path, const std::vector<std::string>& sets, const SweepRange& range,
                              const EttrOptions& ettr, const FailSlowPricer& price);

// The pricer of the command: price_fail_slow (sim/scenario/scenario_specs_fail_slow.h).
FailSlowPricer simulated_fail_slow_pricer();

}  // namespace mofasim::cli
