// Both step models on a scenario written inline: the analysis tests that hold the analytic model
// and the simulated replay to each other build YAML text and compare the two sides.
#pragma once

#include <string>

#include "sim/analysis/compare.h"
#include "sim/executor/instance_map.h"
#include "sim/scenario/loader.h"

namespace mofasim::test {

// validate_scenario (default compare options) on scenario YAML `text`, which error messages call
// `name`, with the replay at `fidelity`.
inline analysis::ValidationReport validate_text(const std::string& text, const std::string& name,
                                                executor::Fidelity fidelity = executor::Fidelity::kFolded) {
  analysis::ValidateOptions options;
  options.fidelity = fidelity;
  return analysis::validate_scenario(scenario::load_scenario_from_string(text, name), options);
}

}  // namespace mofasim::test
