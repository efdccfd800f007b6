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
// A broadcast is a pipelined chain, so it also pays the fill of broadcast_fill below.
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

// NCCL's ring broadcast forwards the message chunk by chunk along the ring: the last member
// receives the first chunk only after it has crossed all P − 1 hops, each hop at one channel's
// share of its bandwidth. Channels: one per NIC the group uses on a node (NCCL builds its
// inter-node rings one per NIC), so a node-to-node hop moves a chunk at one NIC's rate (a spine
// port's between supernodes) and an NVLink hop at the NVLink bus rate over k channels. NCCL's own
// latency model (nccl_protocols.cc) has no such term, and a broadcast over hundreds of ranks
// measures far slower than it predicts.
// The chunk, 128 KiB per channel, is fitted: on the 16 open-set rows of InternEvo's ZeRO-1 over
// the whole DP group (O-ILM-01..08 and 17..24, 8 to 1,024 A100s, one broadcast per owner rank;
// docs/validation-measured.md), the grid 64 / 96 / 128 / 192 / 256 / 512 KiB gives simulated
// MAPE 4.55 / 3.73 / 3.12 / 3.21 / 4.26 / 8.35 %. It is a quarter of NCCL's Simple step
// (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8) and NCCL's floor when it shrinks chunks (enqueue.cc).
PipelineFill broadcast_fill(const Topology& t, const GroupShape& s) {
  constexpr double kChunkBytes = 128.0 * 1024;
  // The NICs the group's members use on a node (members over the most on one rail), at most the
  // node's: the same count whether the group is seen on the whole cluster or on rank 0's compact copy.
  const int per_rail = std::max(1, s.max_per_rail);
  const double channels = std::max(1, std::min(t.nics_per_node(), (s.max_local + per_rail - 1) / per_rail));
  const double nv = t.bandwidth(LinkClass::kIntraNode).bytes_per_second;
  const double nvlink_hops = s.size - std::max(1, s.nodes);
  // Node-to-node hops: those leaving a supernode go through its spine port, the rest through a NIC
  // (the scale-up link inside an NVL72-class domain).
  const double boundary_hops = std::max(0, s.supernodes - 1);
  const double network_hops = std::max(0, s.nodes - 1) - boundary_hops;
  // Per byte of the first chunk of one channel, summed over the hops.
  double per_chunk_byte = nvlink_hops * channels / nv;
  if (network_hops > 0) per_chunk_byte += network_hops / t.nic_capacity();
  if (boundary_hops > 0) per_chunk_byte += boundary_hops / t.spine_port_capacity();
  // min(S / k, chunk) per channel, i.e. min(S, k · chunk) / k.
  return {.cap_bytes = channels * kChunkBytes, .seconds_per_byte = per_chunk_byte / channels};
}

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
  CollectiveCost out = with_protocol(ring_protocols(t.spec().collectives, kind, s, per_edge), alpha_beta);
  if (kind == CollectiveKind::kBroadcast) out.latency_seconds += broadcast_fill(t, s).seconds(bytes);
  return out;
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
  if (kind == CollectiveKind::kBroadcast) out.fill = broadcast_fill(t, s);
}

}  // namespace mofasim::topology::topology_internal
