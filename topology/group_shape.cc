// Computes GroupShape in one pass over the ring-ordered members.
#include "topology/group_shape.h"

#include <algorithm>
#include <vector>

#include "sim/units/check.h"

namespace mofasim::topology {

GroupShape make_group_shape(const Topology& topology, std::span<const int> ring) {
  MOFASIM_CHECK(!ring.empty(), "a group has at least one member");
  MOFASIM_CHECK(std::is_sorted(ring.begin(), ring.end()) &&
                    std::adjacent_find(ring.begin(), ring.end()) == ring.end(),
                "ring order is ascending distinct GPU ids");
  GroupShape s;
  s.size = static_cast<int>(ring.size());
  const int k = topology.nics_per_node();

  // Per node (in ring order): members and the most members on one rail; per supernode: members.
  // The ring is ascending, so a node's GPUs are contiguous: one rail counter, reset per node.
  struct NodeInfo {
    int node;
    int supernode;
    int members;
    int busiest_rail;
  };
  std::vector<NodeInfo> nodes;
  std::vector<int> supernode_members;  // parallel to distinct supernodes, in ring order
  std::vector<int> per_rail(static_cast<std::size_t>(k), 0);
  for (int gpu : ring) {
    const int node = topology.node_of(gpu);
    if (nodes.empty() || nodes.back().node != node) {
      const int sn = topology.supernode_of_node(node);
      if (nodes.empty() || nodes.back().supernode != sn) supernode_members.push_back(0);
      nodes.push_back({node, sn, 0, 0});
      std::fill(per_rail.begin(), per_rail.end(), 0);
    }
    NodeInfo& n = nodes.back();
    ++n.members;
    n.busiest_rail = std::max(n.busiest_rail, ++per_rail[static_cast<std::size_t>(topology.rail_of(gpu))]);
    ++supernode_members.back();
  }
  s.nodes = static_cast<int>(nodes.size());
  s.supernodes = static_cast<int>(supernode_members.size());
  s.min_local = s.size;
  std::size_t sn_index = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeInfo& n = nodes[i];
    if (i > 0 && n.supernode != nodes[i - 1].supernode) ++sn_index;
    s.min_local = std::min(s.min_local, n.members);
    s.max_local = std::max(s.max_local, n.members);
    const double fraction = static_cast<double>(n.busiest_rail) / n.members;
    s.max_rail_fraction = std::max(s.max_rail_fraction, fraction);
    s.max_per_rail = std::max(s.max_per_rail, n.busiest_rail);
    const NodeInfo& next = nodes[(i + 1) % nodes.size()];
    const NodeInfo& prev = nodes[(i + nodes.size() - 1) % nodes.size()];
    const bool boundary = s.supernodes > 1 && (next.supernode != n.supernode || prev.supernode != n.supernode);
    if (boundary) {
      s.max_boundary_rail_fraction = std::max(s.max_boundary_rail_fraction, fraction);
      s.max_boundary_per_rail = std::max(s.max_boundary_per_rail, n.busiest_rail);
    }
    const double outside_node = s.size - n.members;
    const double outside_supernode = s.size - supernode_members[sn_index];
    s.a2a_nic_max = std::max(s.a2a_nic_max, n.busiest_rail * outside_node);
    s.a2a_spine_max = std::max(s.a2a_spine_max, n.busiest_rail * outside_supernode);
  }
  if (s.supernodes > 1) {
    s.bottleneck = LinkClass::kInterSupernode;
  } else if (s.nodes > 1) {
    s.bottleneck = LinkClass::kInterNode;
  } else if (s.size > 1) {
    s.bottleneck = LinkClass::kIntraNode;
  }
  if (s.max_local > 1) s.intra_latency = topology.latency(LinkClass::kIntraNode);
  if (s.nodes > s.supernodes) s.scaleout_latency = topology.latency(LinkClass::kInterNode);
  if (s.supernodes > 1) s.scaleout_latency = std::max(s.scaleout_latency, topology.latency(LinkClass::kInterSupernode));
  return s;
}

LinkClass bottleneck_class(const Topology& topology, std::span<const int> gpus) {
  LinkClass worst = LinkClass::kLocal;
  if (gpus.empty()) return worst;
  // Against the first member is enough: classes are nested (same node ⊂ same supernode).
  const int first = gpus.front();
  for (int g : gpus) worst = std::max(worst, topology.link_class(first, g));
  return worst;
}

}  // namespace mofasim::topology
