// Internal: one closed form and one link decomposition per collective algorithm, each in its own
// file under topology/algorithms/. CommGroup dispatches to them; nothing else should call them.
// All take the group's members in ring order (ascending GPU ids) and its GroupShape, and assume
// size >= 2 (CommGroup handles groups of one).
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "topology/collective.h"
#include "topology/group_shape.h"
#include "topology/topology.h"

namespace mofasim::topology::topology_internal {

// Collects (link, bytes per byte) contributions and merges them into one share per link,
// ascending link id (deterministic regardless of insertion order).
class ShareBuilder {
 public:
  void add(LinkId link, double bytes_per_byte) { raw_.push_back({link, bytes_per_byte}); }
  [[nodiscard]] std::vector<LinkShare> finish() {
    std::sort(raw_.begin(), raw_.end(), [](const LinkShare& a, const LinkShare& b) {
      return index_of(a.link) < index_of(b.link) ||
             (a.link == b.link && a.bytes_per_byte < b.bytes_per_byte);
    });
    std::vector<LinkShare> out;
    for (const LinkShare& s : raw_) {
      if (!out.empty() && out.back().link == s.link) {
        out.back().bytes_per_byte += s.bytes_per_byte;
      } else {
        out.push_back(s);
      }
    }
    raw_.clear();
    return out;
  }

 private:
  std::vector<LinkShare> raw_;
};

// Ring: all-reduce, reduce-scatter, all-gather, broadcast (chain along the ring, each edge S).
CollectiveCost ring_cost(const Topology& t, const GroupShape& s, CollectiveKind kind, double bytes);
void ring_plan(const Topology& t, const GroupShape& s, std::span<const int> ring, CollectiveKind kind,
               CollectivePlan& out);
// A chained broadcast's pipeline fill over this group (see ring.cc).
PipelineFill broadcast_fill(const Topology& t, const GroupShape& s);
// Seconds per byte crossing each ring edge (1 / ring bus bandwidth).
double ring_seconds_per_edge_byte(const Topology& t, const GroupShape& s);

// Tree all-reduce.
CollectiveCost tree_cost(const Topology& t, const GroupShape& s, double bytes);
void tree_plan(const Topology& t, const GroupShape& s, std::span<const int> ring, CollectivePlan& out);

// Hierarchical all-reduce (needs the same number of members on every node).
CollectiveCost hierarchical_cost(const Topology& t, const GroupShape& s, double bytes);
void hierarchical_plan(const Topology& t, const GroupShape& s, std::span<const int> ring, CollectivePlan& out);

// Pairwise all-to-all.
// kind: kAllToAll, or one hop of it (kAllToAllScaleOut / kAllToAllScaleUp).
CollectiveCost all_to_all_cost(const Topology& t, const GroupShape& s, CollectiveKind kind, double bytes);
void all_to_all_plan(const Topology& t, const GroupShape& s, std::span<const int> ring, CollectiveKind kind,
                     CollectivePlan& out);

// Send/recv from src to dst.
CollectiveCost p2p_cost(const Topology& t, int src, int dst, double bytes);
void p2p_plan(const Topology& t, int src, int dst, CollectivePlan& out);

// Where a member's node sits on the ring over nodes, for its spine_up / spine_down shares.
struct RingNeighbours {
  bool exits_supernode = false;   // the next node on the ring is in another supernode
  bool enters_supernode = false;  // the previous node on the ring is in another supernode
};
// For each member of ring (by index), whether its node sits at a supernode boundary of the ring
// over nodes; also returns members per node (by index) in `members_on_node`.
std::vector<RingNeighbours> ring_boundaries(const Topology& t, std::span<const int> ring,
                                            std::vector<int>& members_on_node);

}  // namespace mofasim::topology::topology_internal
