// TopologySpec: the sealed, validated description of a cluster's GPUs and network, in SI units
// (bytes/s, seconds). sim/scenario/ fills it from the Scenario; tests build it with designated
// initializers. validate() is the single place that decides what a legal cluster is.
#pragma once

#include <optional>

namespace mofasim::topology {

// One level of the network. bandwidth is the effective bus bandwidth one GPU gets in one
// direction at this level (what nccl-tests reports as busBW), before the decay γ, the scale μ_b
// and oversubscription are applied.
struct LinkSpec {
  double bandwidth = 0;  // bytes/s per GPU per direction
  double latency = 0;    // seconds per algorithm step that crosses this level (α)
};

struct TopologySpec {
  int gpus = 0;
  int gpus_per_node = 8;
  int nodes_per_supernode = 0;  // 0 = one supernode holds the whole cluster
  LinkSpec intra_node{};        // NVLink-class; needed when gpus_per_node > 1
  LinkSpec inter_node{};        // scale-out inside a supernode; needed when there are > 1 nodes
  std::optional<LinkSpec> inter_supernode{};// unset = same as inter_node
  std::optional<int> nics_per_node{};       // unset = gpus_per_node (rail-optimised)
  double oversubscription = 1.0;  // >= 1; divides the inter-supernode bandwidth
  double bandwidth_decay = 1.0;   // γ ∈ (0,1], MoFa(3); scales both scale-out levels
  double bandwidth_scale = 1.0;   // μ_b > 0, MoFa(18); scales every level

  // Throws std::invalid_argument naming the first bad field and its allowed range.
  void validate() const;

  [[nodiscard]] int nodes() const { return gpus_per_node > 0 ? gpus / gpus_per_node : 0; }
  [[nodiscard]] int nics() const { return nics_per_node.value_or(gpus_per_node); }
  [[nodiscard]] const LinkSpec& supernode_link() const { return inter_supernode ? *inter_supernode : inter_node; }
};

}  // namespace mofasim::topology
