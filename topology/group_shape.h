// GroupShape: the few aggregates of a group's placement on the cluster that the closed-form
// collective costs need (members per node, rail sharing, supernode boundaries, bottleneck class).
// Computed once per group in O(size); every closed form is then O(1).
//
// Ring order: members sorted by GPU id, so a ring visits each node's members together and nodes
// (and supernodes) in ascending order, wrapping from the last node back to the first. NCCL rotates
// which member leaves and enters a node across its channels; we model that as each member of a node
// carrying an equal share of the node's inter-node edge, through its own rail.
#pragma once

#include <span>

#include "topology/link_class.h"
#include "topology/topology.h"

namespace mofasim::topology {

struct GroupShape {
  int size = 0;        // P, members
  int nodes = 0;       // N, nodes holding at least one member
  int supernodes = 0;  // supernodes holding at least one member
  int min_local = 0;   // fewest members on one of those nodes
  int max_local = 0;   // most members on one node
  // Ring across nodes: max over nodes X of (members of X on X's busiest rail) / (members on X);
  // the same taken only over nodes that leave or enter a supernode along the ring.
  double max_rail_fraction = 0;
  double max_boundary_rail_fraction = 0;
  // Most members sharing one (node, rail); the same over supernode-boundary nodes.
  int max_per_rail = 0;
  int max_boundary_per_rail = 0;
  // All-to-all: max over (node, rail) of members on it × (P − members on that node), and of
  // members on it × (P − members in that node's supernode).
  double a2a_nic_max = 0;
  double a2a_spine_max = 0;
  LinkClass bottleneck = LinkClass::kLocal;  // slowest class any two members need
  double intra_latency = 0;     // α of NVLink steps (0 when no node holds two members)
  double scaleout_latency = 0;  // max α of the node-to-node edges of the ring (0 when one node)

  [[nodiscard]] bool uniform() const { return min_local == max_local; }
  [[nodiscard]] double step_latency() const { return intra_latency > scaleout_latency ? intra_latency : scaleout_latency; }
};

// ring_order: distinct GPU ids sorted ascending (checked).
GroupShape make_group_shape(const Topology& topology, std::span<const int> ring_order);

// The slowest link class any two of these GPUs need (any order, may repeat).
LinkClass bottleneck_class(const Topology& topology, std::span<const int> gpus);

}  // namespace mofasim::topology
