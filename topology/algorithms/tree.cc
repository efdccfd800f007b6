// Tree all-reduce (NCCL's double binary tree). To first order it moves the same bytes per NIC and
// per NVLink port as the ring (reference-formulas §4.1), so its link loads and bandwidth term are
// the ring all-reduce's; only the latency differs: 2·⌈log2 P⌉ steps (reduce up, broadcast down)
// instead of 2(P−1).
// NOTE: the tree's real per-node traffic (≈ 2S vs the ring's 2(P−1)/P·S) and its pipelining depth
// are not modelled; the difference matters only for small P.
#include <bit>

#include "topology/internal/algorithms.h"
#include "topology/nccl_protocols.h"

namespace mofasim::topology::topology_internal {
namespace {

int tree_steps(int p) { return 2 * std::bit_width(static_cast<unsigned>(p - 1)); }  // 2·⌈log2 p⌉

}  // namespace

CollectiveCost tree_cost(const Topology& t, const GroupShape& s, double bytes) {
  const double per_edge = ring_seconds_per_edge_byte(t, s);
  const CollectiveCost alpha_beta{.latency_seconds = tree_steps(s.size) * s.step_latency(),
                                  .bandwidth_seconds = bus_bandwidth_factor(CollectiveKind::kAllReduce, s.size) *
                                                       bytes * per_edge};
  return with_protocol(tree_protocols(t.spec().collectives, s, per_edge), alpha_beta);
}

void tree_plan(const Topology& t, const GroupShape& s, std::span<const int> ring, CollectivePlan& out) {
  ring_plan(t, s, ring, CollectiveKind::kAllReduce, out);
  out.phases.back().latency_seconds = tree_steps(s.size) * s.step_latency();
  out.protocols = tree_protocols(t.spec().collectives, s, ring_seconds_per_edge_byte(t, s));
}

}  // namespace mofasim::topology::topology_internal
