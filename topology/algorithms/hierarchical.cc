// Hierarchical all-reduce, three serialized phases (reference-formulas §4.3), for a group with g
// members on each of N nodes:
//   1. intra-node reduce-scatter over NVLink:  (g−1)·α_nv + (g−1)/g·S / B_nv
//   2. inter-node all-reduce of each 1/g shard, one ring per local position, each over its rail:
//                                              2(N−1)·α_net + 2(N−1)/N·(S/g) / B_rail
//   3. intra-node all-gather, as phase 1.
// B_rail is a NIC's capacity divided by the members sharing it (and the spine port's at supernode
// boundaries).                                                                   MoFa(2)
#include <stdexcept>

#include "topology/internal/algorithms.h"

namespace mofasim::topology::topology_internal {
namespace {

void require_uniform(const GroupShape& s) {
  if (!s.uniform()) {
    throw std::invalid_argument("hierarchical all-reduce needs the same number of group members on every node (this group has " +
                                std::to_string(s.min_local) + " to " + std::to_string(s.max_local) + "); use ring or tree");
  }
}

double intra_seconds_per_byte(const Topology& t, const GroupShape& s) {
  const double g = s.max_local;
  return g > 1 ? (g - 1) / g / t.bandwidth(LinkClass::kIntraNode).bytes_per_second : 0.0;
}

}  // namespace

CollectiveCost hierarchical_cost(const Topology& t, const GroupShape& s, double bytes) {
  require_uniform(s);
  const double g = s.max_local;
  const double n = s.nodes;
  CollectiveCost c;
  c.latency_seconds = 2 * (g - 1) * s.intra_latency + 2 * (n - 1) * s.scaleout_latency;
  c.bandwidth_seconds = 2 * bytes * intra_seconds_per_byte(t, s);
  if (s.nodes > 1) {
    double per_byte = s.max_per_rail / t.nic_capacity();
    if (s.supernodes > 1) per_byte = std::max(per_byte, s.max_boundary_per_rail / t.spine_port_capacity());
    c.bandwidth_seconds += 2 * (n - 1) / n * (bytes / g) * per_byte;
  }
  return c;
}

void hierarchical_plan(const Topology& t, const GroupShape& s, std::span<const int> ring, CollectivePlan& out) {
  require_uniform(s);
  const double g = s.max_local;
  const double n = s.nodes;
  CommPhase intra{.latency_seconds = (g - 1) * s.intra_latency, .shares = {}};
  if (g > 1) {
    ShareBuilder b;
    for (int gpu : ring) {
      b.add(t.nvlink_tx(gpu), (g - 1) / g);
      b.add(t.nvlink_rx(gpu), (g - 1) / g);
    }
    intra.shares = b.finish();
  }
  out.phases.push_back(intra);
  if (s.nodes > 1) {
    ShareBuilder b;
    std::vector<int> local;
    const std::vector<RingNeighbours> edges = ring_boundaries(t, ring, local);
    const double shard = 2 * (n - 1) / n / g;
    for (std::size_t m = 0; m < ring.size(); ++m) {
      const int node = t.node_of(ring[m]);
      const int rail = t.rail_of(ring[m]);
      b.add(t.nic_tx(node, rail), shard);
      b.add(t.nic_rx(node, rail), shard);
      if (edges[m].exits_supernode) b.add(t.spine_up(node, rail), shard);
      if (edges[m].enters_supernode) b.add(t.spine_down(node, rail), shard);
    }
    out.phases.push_back({.latency_seconds = 2 * (n - 1) * s.scaleout_latency, .shares = b.finish()});
  }
  out.phases.push_back(intra);
}

}  // namespace mofasim::topology::topology_internal
