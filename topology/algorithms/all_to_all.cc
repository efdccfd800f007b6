// Pairwise all-to-all (reference-formulas §4.1): each of the P members sends S/P bytes to every
// other member (S = a member's whole send buffer, its own chunk included), in P−1 steps.
// A member on node X (g_X members, supernode holding m members) sends (g_X−1)·S/P over NVLink,
// (P−g_X)·S/P through its rail's NIC, and (P−m)·S/P through its rail's spine port; receives alike.
//   T = (P−1)·α + S/P · max((g−1)/B_nv, c·(P−g)/C_nic, c·(P−m)/C_spine),
// c = members sharing the busiest rail. On one node: (P−1)/P·S / B_nv, the nccl-tests factor.
//
// The two hops of a node-deduplicating all-to-all (DeepEP) split that traffic by link class:
//   scale-out: only the NIC and spine terms, (N−1) scale-out α steps (N = nodes of the group);
//   scale-up:  S·(g−1)/g per member over NVLink (g = most members on one node), (g−1) NVLink α
//              steps: the forward of everything that arrived for the node to its g GPUs.
#include "topology/internal/algorithms.h"

namespace mofasim::topology::topology_internal {

CollectiveCost all_to_all_cost(const Topology& t, const GroupShape& s, CollectiveKind kind, double bytes) {
  const double p = s.size;
  if (kind == CollectiveKind::kAllToAllScaleUp) {
    const double g = s.max_local;
    if (g <= 1) return {};
    return {.latency_seconds = (g - 1) * s.intra_latency,
            .bandwidth_seconds = bytes * (g - 1) / g / t.bandwidth(LinkClass::kIntraNode).bytes_per_second};
  }
  const bool out_only = kind == CollectiveKind::kAllToAllScaleOut;
  double per_byte = 0;  // seconds per byte of S/P on the busiest link
  if (s.max_local > 1 && !out_only) per_byte = (s.max_local - 1) / t.bandwidth(LinkClass::kIntraNode).bytes_per_second;
  if (s.nodes > 1) per_byte = std::max(per_byte, s.a2a_nic_max / t.nic_capacity());
  if (s.supernodes > 1) per_byte = std::max(per_byte, s.a2a_spine_max / t.spine_port_capacity());
  const double latency = out_only ? (s.nodes - 1) * s.scaleout_latency : (p - 1) * s.step_latency();
  return {.latency_seconds = latency, .bandwidth_seconds = bytes / p * per_byte};
}

void all_to_all_plan(const Topology& t, const GroupShape& s, std::span<const int> ring, CollectiveKind kind,
                     CollectivePlan& out) {
  const double p = s.size;
  const bool up_only = kind == CollectiveKind::kAllToAllScaleUp;
  const bool out_only = kind == CollectiveKind::kAllToAllScaleOut;
  // Members per node and per supernode, for each member.
  std::vector<int> on_node(ring.size());
  std::vector<int> on_supernode(ring.size());
  for (std::size_t i = 0, j = 0; i < ring.size(); i = j) {
    for (j = i; j < ring.size() && t.node_of(ring[j]) == t.node_of(ring[i]); ++j) {}
    for (std::size_t m = i; m < j; ++m) on_node[m] = static_cast<int>(j - i);
  }
  for (std::size_t i = 0, j = 0; i < ring.size(); i = j) {
    for (j = i; j < ring.size() && t.supernode_of(ring[j]) == t.supernode_of(ring[i]); ++j) {}
    for (std::size_t m = i; m < j; ++m) on_supernode[m] = static_cast<int>(j - i);
  }
  ShareBuilder b;
  for (std::size_t m = 0; m < ring.size(); ++m) {
    const int gpu = ring[m];
    const double intra = out_only ? 0.0
                         : up_only ? (on_node[m] - 1) / static_cast<double>(on_node[m])
                                   : (on_node[m] - 1) / p;
    const double off_node = up_only ? 0.0 : (p - on_node[m]) / p;
    const double off_supernode = up_only ? 0.0 : (p - on_supernode[m]) / p;
    if (intra > 0) {
      b.add(t.nvlink_tx(gpu), intra);
      b.add(t.nvlink_rx(gpu), intra);
    }
    const int node = t.node_of(gpu);
    const int rail = t.rail_of(gpu);
    if (off_node > 0) {
      b.add(t.nic_tx(node, rail), off_node);
      b.add(t.nic_rx(node, rail), off_node);
    }
    if (off_supernode > 0) {
      b.add(t.spine_up(node, rail), off_supernode);
      b.add(t.spine_down(node, rail), off_supernode);
    }
  }
  const double latency = up_only    ? (s.max_local - 1) * s.intra_latency
                         : out_only ? (s.nodes - 1) * s.scaleout_latency
                                    : (p - 1) * s.step_latency();
  out.phases.push_back({.latency_seconds = latency, .shares = b.finish()});
}

}  // namespace mofasim::topology::topology_internal
