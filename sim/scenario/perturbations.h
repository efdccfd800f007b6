// The scenario's perturbations section (stragglers, degraded links) as a perturb::PerturbationSpec,
// and its validation against the scenario's topology as part of loading, so a rank outside the
// cluster is a located error like any other.
#pragma once

#include "proto/scenario.pb.h"
#include "sim/perturb/perturbation.h"
#include "sim/scenario/diagnostics.h"

namespace mofasim::scenario {

// Empty when the section is absent. Throws std::invalid_argument naming the field when a required
// value (slowdown, level, bandwidth_fraction) is missing.
perturb::PerturbationSpec to_perturbation_spec(const proto::Scenario& scenario);

// Reports (at the field) what to_perturbation_spec or PerturbationSpec::validate refuse; skipped
// when the topology's own shape is invalid (reported by the topology rules).
void check_perturbations(const proto::Scenario& scenario, const SourceMap& sources, Diagnostics& diagnostics);

}  // namespace mofasim::scenario
