// Validation and resolution of per-node hardware.
#include "sim/perturb/node_hardware.h"

#include <algorithm>
#include <stdexcept>

namespace mofasim::perturb {
namespace {

std::string entry_path(std::size_t i) { return "topology.node_hardware[" + std::to_string(i) + "]"; }

}  // namespace

void validate(const std::vector<NodeHardware>& entries, const topology::TopologySpec& t) {
  const int nodes = std::max(1, t.nodes());
  std::vector<int> owner(static_cast<std::size_t>(nodes), -1);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const NodeHardware& e = entries[i];
    const std::string p = entry_path(i);
    if (e.nodes.empty()) throw std::invalid_argument(p + ".nodes: missing (the nodes that carry this hardware)");
    for (std::size_t k = 0; k < e.nodes.size(); ++k) {
      const int n = e.nodes[k];
      const std::string at = p + ".nodes[" + std::to_string(k) + "]";
      if (n < 0 || n >= nodes) {
        throw std::invalid_argument(at + ": node " + std::to_string(n) + " is outside the cluster (0.." +
                                    std::to_string(nodes - 1) + ")");
      }
      const int before = owner[static_cast<std::size_t>(n)];
      if (before >= 0) {
        throw std::invalid_argument(at + ": node " + std::to_string(n) + " already has hardware from " +
                                    (before == static_cast<int>(i) ? "this entry" : entry_path(static_cast<std::size_t>(before))));
      }
      owner[static_cast<std::size_t>(n)] = static_cast<int>(i);
    }
    if (e.gpus_per_node && *e.gpus_per_node != t.gpus_per_node) {
      throw std::invalid_argument(p + ".gpus_per_node: " + std::to_string(*e.gpus_per_node) +
                                  " GPUs per node, but topology.gpus_per_node is " + std::to_string(t.gpus_per_node) +
                                  "; nodes of different sizes would split TP groups and rails differently, which "
                                  "the placement cannot express");
    }
  }
}

std::vector<int> hardware_class_by_gpu(const std::vector<NodeHardware>& entries, const topology::TopologySpec& t) {
  if (entries.empty()) return {};
  std::vector<int> klass(static_cast<std::size_t>(t.gpus), 0);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    for (int n : entries[i].nodes) {
      for (int g = 0; g < t.gpus_per_node && n * t.gpus_per_node + g < t.gpus; ++g) {
        klass[static_cast<std::size_t>(n * t.gpus_per_node + g)] = static_cast<int>(i) + 1;
      }
    }
  }
  return klass;
}

}  // namespace mofasim::perturb
