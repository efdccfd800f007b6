// Rank 0's groups and the α–β price of a collective on them (see rank_plan_groups.h).
#include "model/rank_plan_groups.h"

#include <algorithm>

#include "sim/units/check.h"

namespace mofasim::model {

using topology::CollectiveKind;

CommCost comm_cost(const topology::CommGroup& group, CollectiveKind kind, double bytes) {
  const topology::CollectiveCost c = group.cost(kind, topology::default_algorithm(kind), Bytes{bytes});
  return {c.latency_seconds, c.bandwidth_seconds};
}

CommCost CommCostCache::operator()(const topology::CommGroup& group, CollectiveKind kind, double bytes) {
  if (const Entry* hit = entries_.find([&](const Entry& e) { return e.group == &group && e.kind == kind && e.bytes == bytes; })) {
    return hit->cost;
  }
  const CommCost c = comm_cost(group, kind, bytes);
  entries_.insert({.group = &group, .kind = kind, .bytes = bytes, .cost = c});
  return c;
}

CommCost slowest_hop(const topology::Topology& topo, std::span<const int> members, bool ring,
                                    double bytes) {
  CommCost worst;
  std::array<bool, topology::kLinkClassCount> priced{};
  const int n = static_cast<int>(members.size());
  const int hops = ring ? n : n - 1;
  for (int i = 0; i < hops && n > 1; ++i) {
    const std::array<int, 2> pair{members[static_cast<std::size_t>(i)],
                                  members[static_cast<std::size_t>((i + 1) % n)]};
    bool& seen = priced[static_cast<std::size_t>(topo.link_class(pair[0], pair[1]))];
    if (seen) continue;
    seen = true;
    const topology::CommGroup g(topo, pair);
    const CommCost c = comm_cost(g, CollectiveKind::kSendRecv, bytes);
    if (c.latency + c.bandwidth > worst.latency + worst.bandwidth) worst = c;
  }
  return worst;
}

topology::TopologySpec CompactGroup::compact_spec(const topology::TopologySpec& spec, std::span<const int> gpus,
                                                std::vector<int>& compact) {
  const int per_node = spec.gpus_per_node;
  const int per_nic = per_node / spec.nics();
  const int per_supernode = spec.nodes_per_supernode == 0 ? spec.nodes() : spec.nodes_per_supernode;
  // Each GPU's supernode, node in it, rail on the node and place on the rail, renumbered densely
  // in ascending order; then the compact id on a cluster of supernodes × widest nodes, each of
  // `rails` rails × per_nic GPUs. Two walks of the same order (the first finds widest and rails,
  // the second writes the ids), so nothing is stored between them.
  struct Slot {
    int supernode;
    int node;
    int rail;
    int place;
  };
  auto walk = [&](auto&& visit) {
    Slot at{.supernode = -1, .node = 0, .rail = 0, .place = 0};
    int prev_node = -1;
    int prev_supernode = -1;
    int prev_rail = -1;
    // The ids ascend, so a GPU's node (and supernode) is usually the last one or the next: divide
    // only on a jump (rank 0's DP group at TP 8 is one GPU on each of dp consecutive nodes).
    int node = -1;
    int node_first = 0;  // GPU ids [node_first, node_first + per_node) are on `node`
    int supernode = -1;
    int supernode_end = 0;  // nodes below it are on `supernode` or before
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const int gpu = gpus[i];
      if (node < 0 || gpu >= node_first + per_node) {
        node = node >= 0 && gpu < node_first + 2 * per_node ? node + 1 : gpu / per_node;
        node_first = node * per_node;
        if (node >= supernode_end) {
          supernode = node / per_supernode;
          supernode_end = (supernode + 1) * per_supernode;
        }
      }
      const int rail = per_nic == 1 ? gpu - node_first : (gpu - node_first) / per_nic;
      if (supernode != prev_supernode) {
        at = {.supernode = at.supernode + 1, .node = 0, .rail = 0, .place = 0};
      } else if (node != prev_node) {
        at = {.supernode = at.supernode, .node = at.node + 1, .rail = 0, .place = 0};
      } else if (rail != prev_rail) {
        at = {.supernode = at.supernode, .node = at.node, .rail = at.rail + 1, .place = 0};
      } else {
        ++at.place;
      }
      visit(i, at);
      prev_node = node;
      prev_supernode = supernode;
      prev_rail = rail;
    }
  };
  int widest = 1;  // most nodes in one supernode
  int rails = 1;   // most rails used on one node
  int supernodes = 0;
  for (std::size_t i = 1; i < gpus.size(); ++i) {
    MOFASIM_CHECK(gpus[i] > gpus[i - 1], "group GPUs are ascending and distinct");
  }
  walk([&](std::size_t, const Slot& x) {
    widest = std::max(widest, x.node + 1);
    rails = std::max(rails, x.rail + 1);
    supernodes = x.supernode + 1;
  });
  walk([&](std::size_t i, const Slot& x) {
    compact[i] = ((x.supernode * widest + x.node) * rails + x.rail) * per_nic + x.place;
  });
  topology::TopologySpec out = spec;
  out.gpus_per_node = rails * per_nic;
  out.nics_per_node = rails;
  out.gpus = supernodes * widest * out.gpus_per_node;
  out.nodes_per_supernode = supernodes > 1 ? widest : 0;
  return out;
}

RankZeroGroups::Entry& RankZeroGroups::entry(std::vector<int> members) {
  for (int i = 0; i < used_; ++i) {
    if (entries_[static_cast<std::size_t>(i)]->members == members) return *entries_[static_cast<std::size_t>(i)];
  }
  MOFASIM_CHECK(used_ < static_cast<int>(entries_.size()), "more distinct groups than group kinds");
  return entries_[static_cast<std::size_t>(used_++)].emplace(*spec_, std::move(members));
}

void price_block(PlanBlock& block, const LayerGroups& g, int etp, CommCostCache& cost) {
  auto on = [](const topology::CommGroup* group) -> const topology::CommGroup& {
    MOFASIM_CHECK(group != nullptr, "a layer collective on a group of one");
    return *group;
  };
  const auto comms = block.ops.comms();
  // One price per comm op on the group it runs on; `bytes` lets the DeepEP pairing below reprice a
  // hop's last chunk on the same group.
  const auto price = [&](const CommOp& c, double bytes) -> CommCost {
    const CollectiveKind kind = c.collective;
    switch (c.group) {
      case LayerGroup::kTp: return cost(on(g.tp), kind, bytes);
      case LayerGroup::kEtp:
        MOFASIM_CHECK(c.group_size == etp, "expert-TP collective with a group size other than etp");
        return cost(on(g.etp), kind, bytes);
      case LayerGroup::kEp: return cost(on(g.ep), kind, bytes);
      case LayerGroup::kEtpEp: return cost(on(g.etp_ep), kind, bytes);
      case LayerGroup::kCp:
        // P2P: one ring step (every member sends its KV block to its successor at once): the same
        // collective kind, and so the same α and link loads, as the replay's CP step. The
        // all-gather and all-to-all CP types are ordinary collectives on the CP group.
        return cost(on(g.cp), kind == CollectiveKind::kSendRecv ? CollectiveKind::kRingStep : kind, bytes);
      case LayerGroup::kPp: MOFASIM_UNREACHABLE("a layer carries no pipeline send/recv");
    }
    MOFASIM_UNREACHABLE("unknown layer group");
  };
  for (std::size_t j = 0; j < comms.size(); ++j) block.comm[j] = price(comms[j], comms[j].bytes);
  // DeepEP's two hops run at once in n chunks (moe_deepep.h): max(T1, T2) + min(T1, T2)/n. The
  // longer hop keeps its price; the shorter is priced for its last chunk only, the rest hidden.
  // The second hop names the first (CommOp::pipelined_with).
  for (std::size_t j = 0; j < comms.size(); ++j) {
    if (comms[j].pipelined_with < 0) continue;
    const auto first = static_cast<std::size_t>(comms[j].pipelined_with);
    const double n = comms[j].pipeline_chunks;
    const std::size_t shorter = comm_seconds(block.comm[j], 1) < comm_seconds(block.comm[first], 1) ? j : first;
    block.comm_hidden[shorter] = 1 - 1 / n;
    block.comm[shorter] = price(comms[shorter], comms[shorter].bytes / n);  // on the hop's own group (EP, or ETP x EP under flex with etp > 1)
  }
}

}  // namespace mofasim::model
