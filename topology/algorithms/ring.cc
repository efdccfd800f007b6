// Ring collectives (reduce-scatter, all-gather, all-reduce = RS + AG, broadcast as a pipelined
// chain, and a single ring step) over the ring order of group_shape.h. Each ring edge carries
// E = vol·S bytes with vol = 2(P−1)/P (AR), (P−1)/P (RS, AG) or 1 (broadcast, ring step) — the
// nccl-tests busBW factors.
//
// Per link (per byte of E), one node:   every member sends and receives E over NVLink.
// Across N > 1 nodes (node X with g_X members): each member sends and receives (g_X−1)/g_X·E over
// NVLink; X's outgoing and incoming inter-node edges (E each) are split evenly over its members,
// each through its own rail's NIC (and spine port at a supernode boundary). With k NICs per node
// and one member per rail this gives reference-formulas §4.3:
//   busBW = min(k·B_nic, g/(g−1)·B_nv),   T = steps·α + E / busBW.            MoFa(2)
#include "sim/units/check.h"
#include "topology/internal/algorithms.h"
#include "topology/nccl_protocols.h"

namespace mofasim::topology::topology_internal {
namespace {

double ring_volume(CollectiveKind kind, int p) {
  return kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kRingStep ? 1.0 : bus_bandwidth_factor(kind, p);
}

// α steps: 2(P−1) for all-reduce, one for a single ring step, P−1 otherwise.
int ring_steps(CollectiveKind kind, int p) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return 2 * (p - 1);
    case CollectiveKind::kRingStep: return 1;
    default: return p - 1;
  }
}

}  // namespace

std::vector<RingNeighbours> ring_boundaries(const Topology& t, std::span<const int> ring,
                                            std::vector<int>& members_on_node) {
  // Distinct nodes in ring order, then per member its node's boundary flags.
  std::vector<int> nodes;
  std::vector<int> counts;
  for (int gpu : ring) {
    const int node = t.node_of(gpu);
    if (nodes.empty() || nodes.back() != node) {
      nodes.push_back(node);
      counts.push_back(0);
    }
    ++counts.back();
  }
  const std::size_t n = nodes.size();
  std::vector<RingNeighbours> per_node(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int sn = t.supernode_of_node(nodes[i]);
    per_node[i].exits_supernode = t.supernode_of_node(nodes[(i + 1) % n]) != sn;
    per_node[i].enters_supernode = t.supernode_of_node(nodes[(i + n - 1) % n]) != sn;
  }
  std::vector<RingNeighbours> out;
  out.reserve(ring.size());
  members_on_node.clear();
  std::size_t idx = 0;
  for (std::size_t m = 0; m < ring.size(); ++m) {
    if (m > 0 && t.node_of(ring[m]) != t.node_of(ring[m - 1])) ++idx;
    out.push_back(per_node[idx]);
    members_on_node.push_back(counts[idx]);
  }
  return out;
}

double ring_seconds_per_edge_byte(const Topology& t, const GroupShape& s) {
  const double nv = t.bandwidth(LinkClass::kIntraNode).bytes_per_second;
  if (s.nodes == 1) return 1.0 / nv;
  double worst = s.max_rail_fraction / t.nic_capacity();
  if (s.max_local > 1) worst = std::max(worst, (s.max_local - 1.0) / s.max_local / nv);
  if (s.supernodes > 1) worst = std::max(worst, s.max_boundary_rail_fraction / t.spine_port_capacity());
  return worst;
}

// MoFa(2) in closed form: latency per ring step plus bytes over the bottleneck bus bandwidth.
// Under CollectiveModel::kNccl the cheapest NCCL protocol replaces the α–β latency (nccl_protocols.h).
CollectiveCost ring_cost(const Topology& t, const GroupShape& s, CollectiveKind kind, double bytes) {
  const double per_edge = ring_seconds_per_edge_byte(t, s);
  const CollectiveCost alpha_beta{.latency_seconds = ring_steps(kind, s.size) * s.step_latency(),
                                  .bandwidth_seconds = ring_volume(kind, s.size) * bytes * per_edge};
  return with_protocol(ring_protocols(t.spec().collectives, kind, s, per_edge), alpha_beta);
}

// MoFa(2) as flows: the ring's per-link transfers for the simulator's network.
void ring_plan(const Topology& t, const GroupShape& s, std::span<const int> ring, CollectiveKind kind,
               CollectivePlan& out) {
  const double e = ring_volume(kind, s.size);
  ShareBuilder b;
  if (s.nodes == 1) {
    for (int gpu : ring) {
      b.add(t.nvlink_tx(gpu), e);
      b.add(t.nvlink_rx(gpu), e);
    }
  } else {
    std::vector<int> local;
    const std::vector<RingNeighbours> edges = ring_boundaries(t, ring, local);
    for (std::size_t m = 0; m < ring.size(); ++m) {
      const int gpu = ring[m];
      const double g = local[m];
      if (g > 1) {
        b.add(t.nvlink_tx(gpu), e * (g - 1) / g);
        b.add(t.nvlink_rx(gpu), e * (g - 1) / g);
      }
      const int node = t.node_of(gpu);
      const int rail = t.rail_of(gpu);
      b.add(t.nic_tx(node, rail), e / g);
      b.add(t.nic_rx(node, rail), e / g);
      if (edges[m].exits_supernode) b.add(t.spine_up(node, rail), e / g);
      if (edges[m].enters_supernode) b.add(t.spine_down(node, rail), e / g);
    }
  }
  out.phases.push_back({.latency_seconds = ring_steps(kind, s.size) * s.step_latency(), .shares = b.finish()});
  const double per_edge = ring_seconds_per_edge_byte(t, s);
  out.protocols = ring_protocols(t.spec().collectives, kind, s, per_edge);
  out.seconds_per_byte = e * per_edge;
}

}  // namespace mofasim::topology::topology_internal
