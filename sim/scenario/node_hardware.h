// The scenario's topology.node_hardware (heterogeneous GPUs) as perturb::NodeHardware entries, and
// the load-time check of their nodes against the topology, so a node outside the cluster is a
// located error like any other. The entries' hardware fields are checked by validate.cc with the
// hardware section's rules.
#pragma once

#include <vector>

#include "proto/scenario.pb.h"
#include "sim/perturb/node_hardware.h"
#include "sim/scenario/diagnostics.h"

namespace mofasim::scenario {

// Empty when topology.node_hardware is absent.
std::vector<perturb::NodeHardware> to_node_hardware(const proto::Scenario& scenario);

// Reports (at the field) what perturb::validate refuses; skipped when the topology's own shape is
// invalid (reported by the topology rules).
void check_node_hardware_nodes(const proto::Scenario& scenario, const SourceMap& sources, Diagnostics& diagnostics);

}  // namespace mofasim::scenario
