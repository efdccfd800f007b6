// Rank 0's communicator groups on a cluster holding just their GPUs, and the α–β price of a
// collective on them: the part of the priced per-rank plan (model/rank_plan.h) that needs the
// topology. All groups of a kind have the same shape on the uniform clusters TopologySpec
// describes, so rank 0's group stands for every group of its kind.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <vector>

#include "model/rank_plan.h"
#include "sim/units/bounded_cache.h"
#include "topology/collective.h"
#include "topology/comm_group.h"
#include "topology/placement.h"
#include "topology/rank_order.h"
#include "topology/topology.h"
#include "topology/topology_spec.h"

namespace mofasim::model {

// The α–β cost of `kind` over `group` for S = bytes, with the topology's default algorithm.
CommCost comm_cost(const topology::CommGroup& group, topology::CollectiveKind kind, double bytes);

// comm_cost with the last few answers remembered: the ranks of a pipeline laid out alike ask for
// the same reduction on the same group with the same bytes, and a layer's all-gather and
// reduce-scatter often share a payload. comm_cost is a pure function of its arguments, so a
// remembered answer is the one it would give again, bit for bit.
class CommCostCache {
 public:
  CommCost operator()(const topology::CommGroup& group, topology::CollectiveKind kind, double bytes);

 private:
  struct Entry {
    const topology::CommGroup* group = nullptr;
    topology::CollectiveKind kind{};
    double bytes = 0;
    CommCost cost;
  };
  BoundedCache<Entry, 16, Eviction::kOldestInserted> entries_;
};

// The slowest of the send/recv hops between consecutive members of `members` (wrapping around
// when `ring`), for S = bytes. A hop's cost depends only on the link class it crosses, so only the
// first hop of each class is priced (the same hop the full scan would keep).
CommCost slowest_hop(const topology::Topology& topo, std::span<const int> members, bool ring, double bytes);

// One of rank 0's groups on a cluster holding just its GPUs, laid out like the full one: the same
// spec but for its size, GPUs of one node on one node, nodes of one supernode in one supernode,
// GPUs of one rail (one NIC) on one rail, and GPU ids in the same order; supernodes, nodes, rails
// and the GPUs of a rail are renumbered densely. A group's shape, the α–β cost of its collectives
// and the link class of each hop between two members depend on nothing else (the bandwidths,
// latencies and NIC and spine capacities come from the spec and the GPUs per NIC, both kept), so
// they are the full cluster's, without building the full cluster's link list (two entries per GPU
// and four per NIC).
class CompactGroup {
 public:
  // gpus: ascending distinct GPU ids of the full cluster `spec` (already validated).
  CompactGroup(const topology::TopologySpec& spec, std::span<const int> gpus)
      : gpus_(gpus.size()), topology_(compact_spec(spec, gpus, gpus_)) {}
  CompactGroup(const CompactGroup&) = delete;
  CompactGroup& operator=(const CompactGroup&) = delete;

  [[nodiscard]] const topology::Topology& topology() const { return topology_; }
  [[nodiscard]] std::span<const int> gpus() const { return gpus_; }  // compact ids, in the order given

 private:
  static topology::TopologySpec compact_spec(const topology::TopologySpec& spec, std::span<const int> gpus,
                                             std::vector<int>& compact);

  std::vector<int> gpus_;
  topology::Topology topology_;
};

// The groups rank 0 belongs to, each distinct member list placed once: groups of one (all {0}),
// an expert-TP group equal to the TP one, or the expert-DP group equal to the dense one share theirs. Entries never move, so the
// references handed out stay valid.
class RankZeroGroups {
 public:
  RankZeroGroups(const topology::TopologySpec& spec, const topology::ParallelSizes& sizes,
                 const topology::RankOrder& order)
      : spec_(&spec), sizes_(sizes), order_(order) {}

  [[nodiscard]] const topology::ParallelSizes& sizes() const { return sizes_; }
  [[nodiscard]] std::vector<int> members(topology::GroupKind kind) const {
    return topology::group_members_of(sizes_, order_, kind, 0);
  }
  // The group's GPUs on its compact cluster.
  const CompactGroup& compact(std::vector<int> members) { return entry(std::move(members)).group; }
  // A communicator over the whole group.
  const topology::CommGroup& communicator(std::vector<int> members) {
    Entry& e = entry(std::move(members));
    if (!e.comm) e.comm.emplace(e.group.topology(), e.group.gpus());
    return *e.comm;
  }

 private:
  struct Entry {
    Entry(const topology::TopologySpec& spec, std::vector<int> m) : members(std::move(m)), group(spec, members) {}
    std::vector<int> members;
    CompactGroup group;
    std::optional<topology::CommGroup> comm;
  };
  Entry& entry(std::vector<int> members);

  const topology::TopologySpec* spec_;
  topology::ParallelSizes sizes_;
  topology::RankOrder order_;
  std::array<std::optional<Entry>, topology::kGroupKindCount> entries_{};
  int used_ = 0;
};

// The layer groups a block's collectives run on; null for a group of one (no collective runs on
// it: add_comm_op lists none).
struct LayerGroups {
  const topology::CommGroup* tp = nullptr;
  const topology::CommGroup* ep = nullptr;
  const topology::CommGroup* etp = nullptr;
  const topology::CommGroup* etp_ep = nullptr;
  const topology::CommGroup* cp = nullptr;
};

// Prices every collective of `block.ops` on its group (a CP collective as one ring step).
void price_block(PlanBlock& block, const LayerGroups& g, int etp, CommCostCache& cost);

}  // namespace mofasim::model
