// Conversion and load-time validation of topology.node_hardware.
#include "sim/scenario/node_hardware.h"

#include <stdexcept>
#include <string>

#include "sim/scenario/to_spec.h"

namespace mofasim::scenario {

std::vector<perturb::NodeHardware> to_node_hardware(const proto::Scenario& scenario) {
  std::vector<perturb::NodeHardware> out;
  for (const proto::NodeHardware& e : scenario.topology().node_hardware()) {
    perturb::NodeHardware n{.nodes = {e.nodes().begin(), e.nodes().end()}, .hardware = to_hardware_spec(e.hardware())};
    if (e.has_gpus_per_node()) n.gpus_per_node = e.gpus_per_node();
    if (e.has_intra_node() && e.intra_node().has_bandwidth()) n.intra_node_bandwidth = e.intra_node().bandwidth();
    out.push_back(std::move(n));
  }
  return out;
}

void check_node_hardware_nodes(const proto::Scenario& scenario, const SourceMap& sources, Diagnostics& diagnostics) {
  const proto::Topology& t = scenario.topology();
  if (t.node_hardware_size() == 0) return;
  const int gpus = t.gpus();
  const int per_node = t.gpus_per_node();
  if (gpus < 1 || per_node < 1 || (gpus > per_node && gpus % per_node != 0)) return;
  const topology::TopologySpec shape{.gpus = gpus, .gpus_per_node = per_node};
  try {
    perturb::validate(to_node_hardware(scenario), shape);
  } catch (const std::invalid_argument& e) {
    diagnostics.error_at_path(sources, e.what());
  }
}

}  // namespace mofasim::scenario
