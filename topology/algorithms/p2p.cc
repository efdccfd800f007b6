// Point-to-point send/recv of S bytes from src to dst: one step, T = α_class + S / B_path, where
// the path is src's NVLink out and dst's NVLink in (same node), or src's NIC out and dst's NIC in
// on their rails, plus the two spine ports when they sit in different supernodes.  MoFa(2)
#include "topology/internal/algorithms.h"

namespace mofasim::topology::topology_internal {

CollectiveCost p2p_cost(const Topology& t, int src, int dst, double bytes) {
  const LinkClass c = t.link_class(src, dst);
  double capacity = 0;
  switch (c) {
    case LinkClass::kLocal: return {};
    case LinkClass::kIntraNode: capacity = t.bandwidth(LinkClass::kIntraNode).bytes_per_second; break;
    case LinkClass::kInterNode: capacity = t.nic_capacity(); break;
    case LinkClass::kInterSupernode: capacity = std::min(t.nic_capacity(), t.spine_port_capacity()); break;
  }
  return {.latency_seconds = t.latency(c), .bandwidth_seconds = bytes / capacity};
}

void p2p_plan(const Topology& t, int src, int dst, CollectivePlan& out) {
  const LinkClass c = t.link_class(src, dst);
  ShareBuilder b;
  if (c == LinkClass::kIntraNode) {
    b.add(t.nvlink_tx(src), 1);
    b.add(t.nvlink_rx(dst), 1);
  } else if (c != LinkClass::kLocal) {
    const int sn = t.node_of(src);
    const int dn = t.node_of(dst);
    b.add(t.nic_tx(sn, t.rail_of(src)), 1);
    b.add(t.nic_rx(dn, t.rail_of(dst)), 1);
    if (c == LinkClass::kInterSupernode) {
      b.add(t.spine_up(sn, t.rail_of(src)), 1);
      b.add(t.spine_down(dn, t.rail_of(dst)), 1);
    }
  }
  out.phases.push_back({.latency_seconds = t.latency(c), .shares = b.finish()});
}

}  // namespace mofasim::topology::topology_internal
