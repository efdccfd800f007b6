// Rank placement: for parallel sizes (tp, cp, ep, dp, pp) and a rank order, every TP, CP, DP,
// PP, EP, DP×CP, expert-TP, expert-TP×EP and expert-DP group with its member ranks. Rank r runs on GPU r (GPUs are numbered
// node-major, see topology.h), so the rank order alone decides which groups share a node.
//
// Convention (Megatron-LM's RankGenerator):
//  * world = tp·cp·dp·pp. The dense layout numbers ranks by the order with ep dropped:
//    rank = Σ coord_d · stride_d, stride of a dimension = product of the sizes listed before it.
//    With "tp-cp-ep-dp-pp": rank = tp_i + tp·(cp_i + cp·(dp_i + dp·pp_i)).
//  * Expert layout (MoE parallel folding, Megatron's expert RankGenerator): the same order with cp
//    dropped, tp replaced by etp (expert tensor parallel) and dp by edp = world/(pp·ep·etp), so
//    the expert dims etp·ep·edp fold over the dense tp·cp·dp block and EP may span TP, CP and DP.
//    With etp = tp (the default) and cp, ep, dp adjacent in the order, ep is carved out of cp·dp:
//    with ep before dp an EP group is ep consecutive positions of the cp·dp block; with ep after
//    dp it is strided by edp. Any other order is taken as Megatron takes it, under its checks
//    (check_order_for_sizes), e.g. Meta's "tp-cp-ep-pp-dp".
//  * HSDP: the dp·cp and expert-DP groups cut into dist_opt_instances shard groups, with replica
//    groups across them (placement_dp_slices.cc).
//  * Members of a group are listed in ascending rank order; groups of a kind are numbered by their
//    smallest rank, ascending.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "topology/rank_order.h"

namespace mofasim::topology {

struct ParallelSizes {
  int tp = 1;
  int cp = 1;
  int ep = 1;  // ep·etp must divide tp·cp·dp
  int dp = 1;
  int pp = 1;
  int etp = 0;  // expert tensor parallel; 0 = tp (Megatron's default, no folding)
  // Megatron's num_distributed_optimizer_instances (HSDP): the dp·cp group and the expert-DP group
  // are each cut into this many shard groups of consecutive members (ZeRO within a shard group,
  // replicated across them); must divide cp·dp and cp·dp/ep. See placement_dp_slices.cc.
  int dist_opt_instances = 1;
  [[nodiscard]] int world() const { return tp * cp * dp * pp; }
  [[nodiscard]] int expert_tp() const { return etp > 0 ? etp : tp; }
  // Expert data parallel: world / (pp·ep·etp), the group an expert's gradients reduce over.
  [[nodiscard]] int expert_dp() const { return tp * cp * dp / (ep * expert_tp()); }
  // No expert parallelism and no expert TP of its own: the experts' gradients reduce with the
  // dense ones over dp·cp, whatever the order (Meta's tp-cp-ep-pp-dp included).
  [[nodiscard]] bool experts_use_dense_dp() const { return ep == 1 && expert_tp() == tp; }
};

enum class GroupKind : std::uint8_t {
  kTp,        // tensor parallel
  kCp,        // context parallel
  kDp,        // data parallel (dense layout, fixed cp)
  kPp,        // pipeline stages
  kEp,        // expert parallel (expert layout)
  kDpCp,      // dp × cp: dense gradient reduction when cp > 1
  kExpertDp,  // expert data parallel (edp): expert gradient reduction
  // HSDP (ParallelSizes::dist_opt_instances = N), Megatron's partial distributed optimizer: the
  // ascending dp·cp (expert-DP) group cut into N consecutive shard groups ("intra-partial"), and
  // the replica groups of the members at the same position in each ("inter-partial"). With N = 1
  // a shard group is the whole group and a replica group one rank.
  kDpCpShard,
  kDpCpReplica,
  kExpertDpShard,
  kExpertDpReplica,
  // Expert layout: expert tensor parallel (etp ranks: the experts' TP collectives) and the ETP×EP
  // group (Megatron's tp_ep group, which the allgather dispatcher gathers over).
  kExpertTp,
  kExpertTpEp,
};

inline constexpr int kGroupKindCount = 13;
// The shard / replica kinds above, cut from kDpCp or kExpertDp.
bool is_dp_slice(GroupKind k);
std::string_view group_kind_name(GroupKind k);

class Placement {
 public:
  // Throws std::invalid_argument when a size is < 1, ep·etp does not divide tp·cp·dp or the order
  // is one Megatron refuses for these sizes (check_order_for_sizes: with a folded expert layout,
  // its pipeline groups must be the dense one's).
  Placement(const ParallelSizes& sizes, const RankOrder& order);

  [[nodiscard]] const ParallelSizes& sizes() const { return sizes_; }
  [[nodiscard]] const RankOrder& order() const { return order_; }
  [[nodiscard]] int world_size() const { return world_; }
  [[nodiscard]] int gpu_of(int rank) const { return rank; }

  [[nodiscard]] int group_size(GroupKind k) const { return kind(k).size; }
  [[nodiscard]] int group_count(GroupKind k) const { return world_ / kind(k).size; }
  // Which group of kind k holds rank, and rank's position in it. O(1).
  [[nodiscard]] int group_of(GroupKind k, int rank) const { return kind(k).group_of[check(rank)]; }
  [[nodiscard]] int index_in_group(GroupKind k, int rank) const { return kind(k).index[check(rank)]; }
  // Member ranks of one group, ascending. O(1), a view into the placement.
  [[nodiscard]] std::span<const int> members(GroupKind k, int group) const;
  [[nodiscard]] std::span<const int> members_of(GroupKind k, int rank) const { return members(k, group_of(k, rank)); }

  // A rank's coordinate along one dimension (ep from the expert layout, the others dense).
  [[nodiscard]] int coordinate(ParallelDim d, int rank) const;

 private:
  struct Kind {
    int size = 1;
    std::vector<int> group_of;  // by rank
    std::vector<int> index;     // by rank
    std::vector<int> members;   // group-major
  };
  struct Axis {
    ParallelDim dim;
    int size;
    int stride;
  };
  using Layout = std::vector<Axis>;

  const Kind& kind(GroupKind k) const { return kinds_[static_cast<std::size_t>(k)]; }
  std::size_t check(int rank) const;
  void build(GroupKind k, const Layout& layout, std::initializer_list<ParallelDim> varying);
  // The HSDP shard and replica groups of `whole` (placement_dp_slices.cc).
  void build_dp_slices(GroupKind whole, GroupKind shard, GroupKind replica);

  ParallelSizes sizes_;
  RankOrder order_;
  int world_ = 0;
  Layout dense_;
  Layout expert_;
  std::array<Kind, kGroupKindCount> kinds_;
};

// Nodes of `gpus_per_node` GPUs (numbered node-major) that rank 0's group of kind k touches: the
// nodes one EP group spans, for the DeepEP dispatch's node copies (model/moe_dispatch.h).
int nodes_spanned(const ParallelSizes& sizes, const RankOrder& order, GroupKind k, int gpus_per_node);

// The members of the group of kind k that holds `rank`, ascending: what
// Placement(sizes, order).members_of(k, rank) returns, computed in O(group size · log) from the
// rank's coordinates without building every group (the analytic model needs rank 0's groups only).
// Throws std::invalid_argument like Placement's constructor, and for a rank outside the world.
std::vector<int> group_members_of(const ParallelSizes& sizes, const RankOrder& order, GroupKind k, int rank);

// group_members_of for the HSDP kinds (is_dp_slice(k)): the slice of rank's kDpCp / kExpertDp group.
std::vector<int> dp_slice_members_of(const ParallelSizes& sizes, const RankOrder& order, GroupKind k, int rank);

// Megatron's checks on a rank order with these sizes (parallel_state.initialize_model_parallel):
// a dimension the order leaves out must have size 1 in the dense and the expert layout; with
// pp > 1 and the order not ending in pp, the expert-DP size cp·dp/ep must equal dp, and the
// dense and expert layouts must give the same PP groups. Throws std::invalid_argument naming
// parallelism.rank_order.
void check_order_for_sizes(const ParallelSizes& sizes, const RankOrder& order);

}  // namespace mofasim::topology
