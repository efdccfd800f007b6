// Topology construction: effective bandwidths per class and the dense link-resource list.
#include "topology/topology.h"

#include <algorithm>
#include <limits>

namespace mofasim::topology {

Topology::Topology(const TopologySpec& spec) : spec_(spec) {
  spec_.validate();
  nodes_ = spec_.nodes();
  nodes_per_supernode_ = spec_.nodes_per_supernode == 0 ? nodes_ : spec_.nodes_per_supernode;
  nics_ = spec_.nics();
  gpus_per_nic_ = spec_.gpus_per_node / nics_;
  rails_ = static_cast<std::uint32_t>(nodes_ * nics_);

  const double mu = spec_.bandwidth_scale;     // MoFa(18): B' = μ_b · B
  const double gamma = spec_.bandwidth_decay;  // MoFa(3): B_large = γ · B_small
  const double nv = spec_.intra_node.bandwidth * mu;
  const double inter = spec_.inter_node.bandwidth * gamma * mu;
  const double super = spec_.supernode_link().bandwidth * gamma * mu / spec_.oversubscription;
  nic_capacity_ = inter * gpus_per_nic_;
  spine_port_capacity_ = super * gpus_per_nic_;

  class_bandwidth_ = {Bandwidth{std::numeric_limits<double>::infinity()}, Bandwidth{nv}, Bandwidth{inter},
                      Bandwidth{std::min(inter, super)}};  // a cross-supernode flow also crosses its NICs
  class_latency_ = {0.0, spec_.intra_node.latency, spec_.inter_node.latency, spec_.supernode_link().latency};

  links_.reserve(2 * static_cast<std::size_t>(spec_.gpus) + 4 * static_cast<std::size_t>(rails_));
  for (int g = 0; g < spec_.gpus; ++g) links_.push_back({.kind = LinkKind::kNvlinkTx, .owner = g, .capacity = {nv}});
  for (int g = 0; g < spec_.gpus; ++g) links_.push_back({.kind = LinkKind::kNvlinkRx, .owner = g, .capacity = {nv}});
  nic_base_ = static_cast<std::uint32_t>(links_.size());
  for (LinkKind kind : {LinkKind::kNicTx, LinkKind::kNicRx}) {
    for (int n = 0; n < nodes_; ++n) {
      for (int r = 0; r < nics_; ++r) links_.push_back({.kind = kind, .owner = n, .rail = r, .capacity = {nic_capacity_}});
    }
  }
  spine_base_ = static_cast<std::uint32_t>(links_.size());
  if (has_spine()) {
    for (LinkKind kind : {LinkKind::kSpineUp, LinkKind::kSpineDown}) {
      for (int n = 0; n < nodes_; ++n) {
        for (int r = 0; r < nics_; ++r) {
          links_.push_back({.kind = kind, .owner = n, .rail = r, .capacity = {spine_port_capacity_}});
        }
      }
    }
  }
}

LinkClass Topology::link_class(int a, int b) const {
  if (a == b) return LinkClass::kLocal;
  const int na = node_of(a);
  const int nb = node_of(b);
  if (na == nb) return LinkClass::kIntraNode;
  return supernode_of_node(na) == supernode_of_node(nb) ? LinkClass::kInterNode : LinkClass::kInterSupernode;
}

LinkId Topology::spine_up(int node, int rail) const {
  MOFASIM_CHECK(has_spine(), "spine ports exist only with more than one supernode");
  return LinkId(spine_base_ + rail_slot(node, rail));
}

LinkId Topology::spine_down(int node, int rail) const {
  MOFASIM_CHECK(has_spine(), "spine ports exist only with more than one supernode");
  return LinkId(spine_base_ + rails_ + rail_slot(node, rail));
}

}  // namespace mofasim::topology
