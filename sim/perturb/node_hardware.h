// Heterogeneous GPUs in one job (issue 17): some nodes carry another GPU than the scenario's
// hardware section (e.g. H200 nodes beside H100 ones). Each distinct hardware is a class: class 0
// is the scenario's hardware, class i + 1 the i-th node_hardware entry. The step simulation prices
// the rank plan once per class (GEMM ceilings, attention curves, HBM all differ, so no single
// slowdown factor would do), runs each rank's compute at its own class's price, checks memory per
// GPU against its own capacity, and scales a node's NVLinks where its entry gives another bandwidth.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/spec.h"
#include "topology/topology_spec.h"

namespace mofasim::perturb {

struct NodeHardware {
  std::vector<int> nodes{};
  model::HardwareSpec hardware{};
  std::optional<int> gpus_per_node{};            // as written; must equal the topology's
  std::optional<double> intra_node_bandwidth{};  // B/s per GPU per direction; absent: topology.intra_node
};

// Throws std::invalid_argument "topology.node_hardware[i].field: message" when an entry has no
// nodes, a node outside the cluster or already given hardware, or another GPUs-per-node.
void validate(const std::vector<NodeHardware>& entries, const topology::TopologySpec& topology);

// Hardware class by GPU: 0 for the scenario's hardware, i + 1 for entry i. Empty when there are
// no entries (a homogeneous cluster).
std::vector<int> hardware_class_by_gpu(const std::vector<NodeHardware>& entries, const topology::TopologySpec& topology);

}  // namespace mofasim::perturb
