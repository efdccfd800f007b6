// CommGroup: one communicator (the GPUs of a TP/CP/EP/DP/PP group, or any list) placed on a
// Topology, with its shape computed once. This is what an executor calls:
//
//   const Placement placement(sizes, order);
//   const CommGroup tp(topology, placement.members_of(GroupKind::kTp, rank));   // once per group
//   double t = tp.cost(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, Bytes{s}).seconds();
//   CollectivePlan plan = tp.plan(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing);  // once
//   ... link l carries s * share.bytes_per_byte bytes ...
//
// cost() is O(1) and allocates nothing; plan() is O(size) and allocates, so build plans once per
// (group, kind, algorithm) and scale by the byte count. The Topology must outlive the CommGroup.
#pragma once

#include <span>
#include <vector>

#include "sim/units/quantities.h"
#include "topology/collective.h"
#include "topology/group_shape.h"
#include "topology/topology.h"

namespace mofasim::topology {

class CommGroup {
 public:
  // gpus: distinct GPU ids of the topology, member 0 first (broadcast root, send/recv source).
  // Throws std::invalid_argument on an empty list, an id out of range or a repeated id.
  CommGroup(const Topology& topology, std::span<const int> gpus);

  [[nodiscard]] int size() const { return static_cast<int>(gpus_.size()); }
  [[nodiscard]] std::span<const int> gpus() const { return gpus_; }          // as given
  [[nodiscard]] std::span<const int> ring_order() const { return ring_; }    // ascending GPU ids
  [[nodiscard]] const GroupShape& shape() const { return shape_; }
  [[nodiscard]] LinkClass bottleneck() const { return shape_.bottleneck; }

  // Closed-form α–β cost of the collective running alone on an idle network. Throws
  // std::invalid_argument for an unsupported (kind, algorithm), negative bytes, send/recv on a
  // group that is not two GPUs, or hierarchical on a group with unequal members per node.
  [[nodiscard]] CollectiveCost cost(CollectiveKind kind, CollectiveAlgorithm algorithm, Bytes bytes) const;
  [[nodiscard]] double seconds(CollectiveKind kind, CollectiveAlgorithm algorithm, Bytes bytes) const {
    return cost(kind, algorithm, bytes).seconds();
  }
  // nccl-tests bus bandwidth this collective attains, ignoring latency: factor·S / bandwidth term.
  // Infinite for a group of one.
  [[nodiscard]] Bandwidth bus_bandwidth(CollectiveKind kind, CollectiveAlgorithm algorithm) const;

  // Link decomposition, consistent with cost(): alone at full capacity it takes cost().seconds().
  [[nodiscard]] CollectivePlan plan(CollectiveKind kind, CollectiveAlgorithm algorithm) const;

 private:
  void check(CollectiveKind kind, CollectiveAlgorithm algorithm) const;

  const Topology* topology_;
  std::vector<int> gpus_;
  std::vector<int> ring_;
  GroupShape shape_;
};

}  // namespace mofasim::topology
