// fault_tolerance.fail_slow bound to a scenario: the episode process (units from topology, rate,
// duration, policy) and the slow steps priced by the step simulation, one case per pipeline stage
// (the position class) plus, for cordon, the step with one DP replica fewer.
//
// The slow part is placed in pipeline replica 0 at stage s: every replica is alike, and with the
// perturbation in replica 0 the folded replay stays exact (sim/executor/perturbed_folding.h), so
// each case costs one folded simulation. scope gpu slows the stage's first GPU, node every GPU of
// its node (or, where the node is one TP group, its first GPU: see price_fail_slow), link that
// GPU's NIC (bandwidth / slowdown).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/fault_spec.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {

// The episode process of fault_tolerance.fail_slow, with slow_step_factor = {slowdown} until
// price_fail_slow replaces it (enough to validate; no command runs trials on it unpriced).
// Throws std::invalid_argument naming the field ("fault_tolerance.fail_slow.slowdown: ...").
model::FailSlowSpec to_fail_slow_spec(const scenario::LoadedScenario& loaded);

struct FailSlowPricing {
  std::string scope;                   // gpu, node, link
  double slowdown = 1;
  double healthy_step_s = 0;
  std::vector<double> slow_step_s{};   // by pipeline stage
  double cordon_step_s = 0;            // cordon only
  std::string cordon_source{};         // how cordon_step_s was found
  std::string note{};                  // how the slow part was placed, when not literally
};

// Simulates the cases and sets spec.slow_step_factor (and cordon_step_factor); nothing when the
// scenario has no fail_slow section or its rate is 0.
FailSlowPricing price_fail_slow(const scenario::LoadedScenario& loaded, model::FailSlowSpec& spec);

// The episode process and the priced cases, as lines for ettr's header and as JSON.
std::string render_fail_slow_cases(const FailSlowPricing& pricing, const model::FailSlowSpec& spec);
nlohmann::json fail_slow_json(const FailSlowPricing& pricing, const model::FailSlowSpec& spec);

}  // namespace mofasim::cli
