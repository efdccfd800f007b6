// Folding with perturbations: which replicas (PP groups) must be simulated besides replica 0 so
// that a folded replay of a perturbed cluster still equals the full one, or why it cannot be.
//
// Folded fidelity assumes every unsimulated replica runs exactly like replica 0. A perturbed GPU
// (slow, or attached to a degraded link) breaks that for its replica, which is then simulated too.
// The others still run like replica 0 when every group the perturbed replica takes part in (every
// scope the workload uses, at every stage) also holds replica 0: each group instance is then the
// one replica 0 waits on, and any group without replica 0 has only healthy, replica-0-like members.
// Pure data parallelism (one DP group per stage) always folds; a slow GPU in another TP group does
// not, and the step is replayed at full fidelity instead.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/executor/workload.h"
#include "topology/placement.h"

namespace mofasim::executor {

// "" and the ascending extra PP groups (without 0) when folding stays exact; otherwise the reason
// (shown as the result's fidelity note) and `extra` is left empty.
std::string perturbed_folding(const Workload& w, const topology::Placement& placement,
                              std::span<const int> affected_gpus, std::vector<int>& extra);

}  // namespace mofasim::executor
