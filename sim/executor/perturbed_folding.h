// Folding with perturbations: which replicas (PP groups) must be simulated besides replica 0 so
// that a folded replay of a perturbed cluster still equals the full one, or why it cannot be.
//
// Folded fidelity simulates a set S of replicas and lets every other replica g be represented by
// one simulated replica rep(g). The step stays exact when
//   (a) every GPU of g computes no slower than the GPU of rep(g) at the same stage, of the same
//       hardware class (a slow GPU is then represented by one equally slow, a healthy one by any);
//   (b) a GPU on a degraded link is simulated itself (its collectives take longer);
//   (c) for every group (each scope the workload uses, at every stage) the representatives of its
//       members all lie in one group, the group of each member's own representative.
// By (c) a simulated group instance waits on a simulated representative of every real member, and
// by induction over the DAG every unsimulated replica ends no later than its representative, so the
// simulated replicas and the step (the last end) are exact. The induction assumes a replica
// that computes faster ends no later; overlap interference breaks that slightly (a healthy replica
// represented by a slower replica 0 has its DP collectives overlap its compute at other times), so
// a fold by a strictly slower representative is close, not exact: docs/perturbations.md measures it.
//
// Two choices of representatives are tried, the smaller first:
//   - by symmetry: a slow GPU's replica is represented by the first replica of its stage-0 TP group
//     with the same per-stage slowdowns (a slow node under TP: all TP ranks alike, so one replica
//     per slow model copy plus replica 0 is simulated, not every rank);
//   - one each: every perturbed replica simulated itself, healthy ones represented by replica 0.
// If neither satisfies (c), the reason is returned and the step is replayed at full fidelity.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/executor/workload.h"
#include "sim/perturb/perturbation.h"
#include "topology/placement.h"

namespace mofasim::executor {

// "" and the ascending extra PP groups (without 0) when folding stays exact; otherwise the reason
// (shown as the result's fidelity note) and `extra` is left empty. `hardware_class` is by GPU
// (empty: one class); GPUs of different classes never represent each other.
std::string perturbed_folding(const Workload& w, const topology::Placement& placement,
                              const perturb::ResolvedPerturbations& perturbed, std::span<const int> hardware_class,
                              std::vector<int>& extra);

}  // namespace mofasim::executor
