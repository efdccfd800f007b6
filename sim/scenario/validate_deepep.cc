// Where DeepEP can run (validate_deepep.h): the flex dispatcher group's size, then its placement.
#include "sim/scenario/validate_deepep.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/rank_order.h"

namespace mofasim::scenario {
namespace {

constexpr char kAllowed[] =
    "DeepEP needs it inside one node (at most 8 ranks) or on whole nodes, 8 ranks on each node at the same local GPUs "
    "(NUM_MAX_NVL_PEERS = 8 NVLink peers per RDMA rank)";

// "GPUs 0, 16, 32, ... on 4 nodes": the group as the message shows it, the first 8 members.
std::string describe(const std::vector<int>& members, int gpus_per_node) {
  std::string out = "GPUs ";
  for (std::size_t i = 0; i < members.size() && i < 8; ++i) out += (i == 0 ? "" : ", ") + std::to_string(members[i]);
  if (members.size() > 8) out += ", ...";
  int nodes = 0;
  int last = -1;
  for (int gpu : members) {  // ascending
    if (gpu / gpus_per_node != last) ++nodes;
    last = gpu / gpus_per_node;
  }
  return out + " on " + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes");
}

}  // namespace

bool deepep_can_run(const std::vector<int>& members, int gpus_per_node) {
  const auto node = [&](int gpu) { return gpu / gpus_per_node; };
  const std::size_t g = members.size();
  if (g == 0) return true;
  // Members ascend, so the first and last of a run bound its nodes.
  if (g <= kDeepEpNvlPeers) return node(members.front()) == node(members.back());
  if (g % kDeepEpNvlPeers != 0) return false;
  const std::size_t peers = kDeepEpNvlPeers;
  for (std::size_t first = 0; first < g; first += peers) {
    if (node(members[first]) != node(members[first + peers - 1])) return false;  // NVLink peers on two nodes
    if (first > 0 && node(members[first]) == node(members[first - 1])) return false;  // two RDMA ranks on one node
    for (std::size_t i = 0; i < peers; ++i) {  // RDMA pairs at the same local GPU on every node
      if (members[first + i] % gpus_per_node != members[i] % gpus_per_node) return false;
    }
  }
  return true;
}

std::vector<int> first_group_deepep_cannot_run(const topology::ParallelSizes& sizes, const topology::RankOrder& order,
                                               int gpus_per_node) {
  const int world = sizes.world();
  std::vector<bool> seen(static_cast<std::size_t>(world), false);
  for (int rank = 0; rank < world; ++rank) {
    if (seen[static_cast<std::size_t>(rank)]) continue;
    std::vector<int> members = topology::group_members_of(sizes, order, topology::GroupKind::kExpertTpEp, rank);
    for (int m : members) seen[static_cast<std::size_t>(m)] = true;
    if (!deepep_can_run(members, gpus_per_node)) return members;
  }
  return {};
}

void check_deepep_group(const proto::Scenario& s, const proto::Parallelism& x, const proto::MoeConfig& moe,
                        const FieldFail& fail) {
  if (moe.token_dispatcher_type() != proto::DISPATCHER_FLEX) return;
  const std::string p = "parallelism";
  const std::int64_t ep = x.ep(), etp = x.etp();
  const std::int64_t group = ep * etp;
  const std::string group_text = "ep*etp = " + num(ep) + "*" + num(etp) + " = " + num(group);
  if (group > kDeepEpNvlPeers && group % kDeepEpNvlPeers != 0) {
    fail(p + ".ep", "token_dispatcher_type flex (DeepEP) needs the dispatcher group " + group_text +
                        " to be at most 8 ranks (one node) or a multiple of 8 (whole nodes of 8 NVLink peers)");
    return;
  }
  const int gpus_per_node = s.has_topology() ? s.topology().gpus_per_node() : 0;
  const std::int64_t gpus = s.has_topology() ? s.topology().gpus() : 0;
  std::int64_t world = 1;  // tp*cp*dp*pp, stopped past gpus so out-of-range sizes cannot overflow
  for (const std::int64_t size : {std::int64_t{x.tp()}, std::int64_t{x.cp()}, std::int64_t{x.dp()}, std::int64_t{x.pp()}}) {
    world = size < 1 || world * size > gpus ? gpus + 1 : world * size;
  }
  // Only on a layout that covers the topology's whole nodes: otherwise that is reported.
  if (group <= 1 || gpus_per_node < 1 || world != gpus || (gpus > gpus_per_node && gpus % gpus_per_node != 0)) return;
  const topology::ParallelSizes sizes{.tp = x.tp(), .cp = x.cp(), .ep = x.ep(), .dp = x.dp(), .pp = x.pp(), .etp = x.etp()};
  std::vector<int> bad;
  topology::RankOrder order;
  try {
    order = topology::RankOrder::parse(x.rank_order());
    bad = first_group_deepep_cannot_run(sizes, order, gpus_per_node);
  } catch (const std::invalid_argument&) {
    return;  // a layout the rank order refuses: check_rank_order reported it under parallelism.rank_order
  }
  if (bad.empty()) return;
  const std::string where = describe(bad, gpus_per_node);
  // Which field decides: the order when Megatron's default order would place every group where
  // DeepEP runs; else the node size when it is not DeepEP's 8; else the group size itself.
  const topology::RankOrder megatron;
  if (first_group_deepep_cannot_run(sizes, megatron, gpus_per_node).empty()) {
    fail(p + ".rank_order", "'" + x.rank_order() + "' places the flex (DeepEP) dispatcher group " + group_text +
                                " ranks on " + where + " of topology.gpus_per_node = " + num(std::int64_t{gpus_per_node}) +
                                "; " + kAllowed + ", as Megatron's order tp-cp-ep-dp-pp places it");
  } else if (gpus_per_node != kDeepEpNvlPeers) {
    fail("topology.gpus_per_node", num(std::int64_t{gpus_per_node}) + " GPUs per node place the flex (DeepEP) dispatcher group " +
                                       group_text + " ranks on " + where + "; " + kAllowed);
  } else {
    fail(p + ".ep", "the flex (DeepEP) dispatcher group " + group_text + " ranks lies on " + where +
                        " of topology.gpus_per_node = 8; " + kAllowed + ": use an ep*etp that divides 8 or is a multiple of 8");
  }
}

}  // namespace mofasim::scenario
