// Topology: a validated cluster. GPU g sits on node g / gpus_per_node (local index g % gpus_per_node)
// and node n on supernode n / nodes_per_supernode. Answers, in O(1) and without allocation, which
// link class joins two GPUs, the effective bandwidth and latency of each class, and the dense list
// of physical link resources (LinkResource) with their capacities:
//
//   per GPU:        NVLink tx, NVLink rx                    capacity B_nv = intra.bw · μ_b
//   per node, rail: NIC tx, NIC rx                          capacity (g/k) · inter.bw · γ · μ_b
//   per node, rail: spine up, spine down (> 1 supernode)    capacity (g/k) · super.bw · γ · μ_b / oversub
//
// (g = GPUs per node, k = NICs per node; GPU with local index i uses rail i·k/g.) The per-class
// bandwidth() is the per-GPU figure (the NIC and spine capacities divided by g/k).
#pragma once

#include <array>
#include <span>
#include <vector>

#include "sim/units/check.h"
#include "topology/link_class.h"
#include "topology/link_resource.h"
#include "topology/topology_spec.h"

namespace mofasim::topology {

class Topology {
 public:
  // Validates the spec (std::invalid_argument on bad input) and builds the link list.
  explicit Topology(const TopologySpec& spec);

  [[nodiscard]] const TopologySpec& spec() const { return spec_; }
  [[nodiscard]] int gpus() const { return spec_.gpus; }
  [[nodiscard]] int gpus_per_node() const { return spec_.gpus_per_node; }
  [[nodiscard]] int nodes() const { return nodes_; }
  [[nodiscard]] int nodes_per_supernode() const { return nodes_per_supernode_; }
  [[nodiscard]] int supernodes() const { return nodes_ / nodes_per_supernode_; }
  [[nodiscard]] int nics_per_node() const { return nics_; }

  [[nodiscard]] int node_of(int gpu) const { return check_gpu(gpu) / spec_.gpus_per_node; }
  [[nodiscard]] int local_index(int gpu) const { return check_gpu(gpu) % spec_.gpus_per_node; }
  [[nodiscard]] int supernode_of_node(int node) const { return node / nodes_per_supernode_; }
  [[nodiscard]] int supernode_of(int gpu) const { return supernode_of_node(node_of(gpu)); }
  [[nodiscard]] int rail_of(int gpu) const { return local_index(gpu) / gpus_per_nic_; }

  // The level a transfer from GPU a to GPU b crosses (kLocal when a == b).
  [[nodiscard]] LinkClass link_class(int a, int b) const;

  // Effective per-GPU, per-direction bandwidth of a class after γ (MoFa(3)), μ_b (MoFa(18)) and
  // oversubscription; and its per-step latency α. kLocal has infinite bandwidth and zero latency.
  [[nodiscard]] Bandwidth bandwidth(LinkClass c) const { return class_bandwidth_[static_cast<int>(c)]; }
  [[nodiscard]] double latency(LinkClass c) const { return class_latency_[static_cast<int>(c)]; }

  // Physical link resources, dense ids 0..links().size()-1.
  [[nodiscard]] std::span<const LinkResource> links() const { return links_; }
  [[nodiscard]] const LinkResource& link(LinkId id) const { return links_[index_of(id)]; }
  [[nodiscard]] LinkId nvlink_tx(int gpu) const { return LinkId(check_gpu(gpu)); }
  [[nodiscard]] LinkId nvlink_rx(int gpu) const { return LinkId(spec_.gpus + check_gpu(gpu)); }
  [[nodiscard]] LinkId nic_tx(int node, int rail) const { return LinkId(nic_base_ + rail_slot(node, rail)); }
  [[nodiscard]] LinkId nic_rx(int node, int rail) const { return LinkId(nic_base_ + rails_ + rail_slot(node, rail)); }
  // Spine ports exist only when the cluster has more than one supernode.
  [[nodiscard]] bool has_spine() const { return supernodes() > 1; }
  [[nodiscard]] LinkId spine_up(int node, int rail) const;
  [[nodiscard]] LinkId spine_down(int node, int rail) const;

  // Capacities of one NIC and one rail's spine port (bytes/s).
  [[nodiscard]] double nic_capacity() const { return nic_capacity_; }
  [[nodiscard]] double spine_port_capacity() const { return spine_port_capacity_; }

 private:
  int check_gpu(int gpu) const {
    MOFASIM_DCHECK(gpu >= 0 && gpu < spec_.gpus, "GPU id out of range");
    return gpu;
  }
  std::uint32_t rail_slot(int node, int rail) const {
    MOFASIM_DCHECK(node >= 0 && node < nodes_ && rail >= 0 && rail < nics_, "node or rail out of range");
    return static_cast<std::uint32_t>(node * nics_ + rail);
  }

  TopologySpec spec_;
  int nodes_ = 0;
  int nodes_per_supernode_ = 0;
  int nics_ = 0;
  int gpus_per_nic_ = 1;
  std::uint32_t rails_ = 0;  // nodes · nics
  std::uint32_t nic_base_ = 0;
  std::uint32_t spine_base_ = 0;
  double nic_capacity_ = 0;
  double spine_port_capacity_ = 0;
  std::array<Bandwidth, kLinkClassCount> class_bandwidth_{};
  std::array<double, kLinkClassCount> class_latency_{};
  std::vector<LinkResource> links_;
};

}  // namespace mofasim::topology
