// Group construction for Placement: one pass over the ranks per group kind.
#include "topology/placement.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/units/check.h"

namespace mofasim::topology {
namespace {

void check_size(const char* name, int v) {
  if (v < 1) throw std::invalid_argument(std::string("parallelism.") + name + ": must be >= 1, got " + std::to_string(v));
}

int axis_coord(int rank, int stride, int size) { return (rank / stride) % size; }

void check_sizes(const ParallelSizes& sizes) {
  check_size("tp", sizes.tp);
  check_size("cp", sizes.cp);
  check_size("ep", sizes.ep);
  check_size("dp", sizes.dp);
  check_size("pp", sizes.pp);
  if (sizes.etp != 0) check_size("etp", sizes.etp);
  const int folded = sizes.tp * sizes.cp * sizes.dp;
  if (folded % (sizes.ep * sizes.expert_tp()) != 0) {
    throw std::invalid_argument("parallelism.ep: ep*etp = " + std::to_string(sizes.ep * sizes.expert_tp()) +
                                " must divide tp*cp*dp = " + std::to_string(folded) +
                                " (the expert layout folds over the tp*cp*dp ranks)");
  }
  const int n = sizes.dist_opt_instances;
  const int edp = sizes.expert_dp();
  if (n < 1 || (sizes.cp * sizes.dp) % n != 0 || edp % n != 0) {
    throw std::invalid_argument("optimizations.optimizer.num_distributed_optimizer_instances: must divide dp*cp = " +
                                std::to_string(sizes.cp * sizes.dp) + " and the expert-DP size " + std::to_string(edp) +
                                ", got " + std::to_string(n));
  }
}

// Size of dimension d in the dense or the expert layout; 0 when the layout leaves it out (ep in
// the dense layout, cp in the expert one). The expert layout's dp is edp = cp·dp/ep.
int axis_size(const ParallelSizes& sizes, ParallelDim d, bool expert) {
  switch (d) {
    case ParallelDim::kTp: return expert ? sizes.expert_tp() : sizes.tp;
    case ParallelDim::kPp: return sizes.pp;
    case ParallelDim::kCp: return expert ? 0 : sizes.cp;
    case ParallelDim::kEp: return expert ? sizes.ep : 0;
    case ParallelDim::kDp: return expert ? sizes.expert_dp() : sizes.dp;
  }
  MOFASIM_UNREACHABLE("unknown ParallelDim");
}

// The layout a group kind lives in and the dimensions its members differ in.
struct KindAxes {
  bool expert = false;
  std::array<ParallelDim, 2> varying{};
  int count = 1;
};

KindAxes kind_axes(GroupKind k) {
  switch (k) {
    case GroupKind::kTp: return {.expert = false, .varying = {ParallelDim::kTp}, .count = 1};
    case GroupKind::kCp: return {.expert = false, .varying = {ParallelDim::kCp}, .count = 1};
    case GroupKind::kDp: return {.expert = false, .varying = {ParallelDim::kDp}, .count = 1};
    case GroupKind::kPp: return {.expert = false, .varying = {ParallelDim::kPp}, .count = 1};
    case GroupKind::kDpCp: return {.expert = false, .varying = {ParallelDim::kCp, ParallelDim::kDp}, .count = 2};
    case GroupKind::kEp: return {.expert = true, .varying = {ParallelDim::kEp}, .count = 1};
    case GroupKind::kExpertDp: return {.expert = true, .varying = {ParallelDim::kDp}, .count = 1};
    case GroupKind::kExpertTp: return {.expert = true, .varying = {ParallelDim::kTp}, .count = 1};
    case GroupKind::kExpertTpEp: return {.expert = true, .varying = {ParallelDim::kTp, ParallelDim::kEp}, .count = 2};
    case GroupKind::kDpCpShard:
    case GroupKind::kDpCpReplica:
    case GroupKind::kExpertDpShard:
    case GroupKind::kExpertDpReplica: break;  // slices of the kinds above (placement_dp_slices.cc)
  }
  MOFASIM_UNREACHABLE("not a layout group kind");
}

}  // namespace

std::string_view group_kind_name(GroupKind k) {
  switch (k) {
    case GroupKind::kTp: return "tp";
    case GroupKind::kCp: return "cp";
    case GroupKind::kDp: return "dp";
    case GroupKind::kPp: return "pp";
    case GroupKind::kEp: return "ep";
    case GroupKind::kDpCp: return "dp_cp";
    case GroupKind::kExpertDp: return "expert_dp";
    case GroupKind::kDpCpShard: return "dp_cp_shard";
    case GroupKind::kDpCpReplica: return "dp_cp_replica";
    case GroupKind::kExpertDpShard: return "expert_dp_shard";
    case GroupKind::kExpertDpReplica: return "expert_dp_replica";
    case GroupKind::kExpertTp: return "expert_tp";
    case GroupKind::kExpertTpEp: return "expert_tp_ep";
  }
  return "?";
}

Placement::Placement(const ParallelSizes& sizes, const RankOrder& order) : sizes_(sizes), order_(order) {
  check_sizes(sizes);
  check_order_for_sizes(sizes, order);
  world_ = sizes.world();
  int dense_stride = 1;
  int expert_stride = 1;
  for (ParallelDim d : order.dims()) {
    const int dense_size = axis_size(sizes, d, /*expert=*/false);
    const int expert_size = axis_size(sizes, d, /*expert=*/true);
    if (dense_size > 0) {
      dense_.push_back({d, dense_size, dense_stride});
      dense_stride *= dense_size;
    }
    if (expert_size > 0) {
      expert_.push_back({d, expert_size, expert_stride});
      expert_stride *= expert_size;
    }
  }
  MOFASIM_CHECK(dense_stride == world_ && expert_stride == world_, "layouts must cover the world");
  build(GroupKind::kTp, dense_, {ParallelDim::kTp});
  build(GroupKind::kCp, dense_, {ParallelDim::kCp});
  build(GroupKind::kDp, dense_, {ParallelDim::kDp});
  build(GroupKind::kPp, dense_, {ParallelDim::kPp});
  build(GroupKind::kDpCp, dense_, {ParallelDim::kCp, ParallelDim::kDp});
  build(GroupKind::kEp, expert_, {ParallelDim::kEp});
  build(GroupKind::kExpertTp, expert_, {ParallelDim::kTp});
  build(GroupKind::kExpertTpEp, expert_, {ParallelDim::kTp, ParallelDim::kEp});
  if (sizes.experts_use_dense_dp()) {
    // Without expert parallelism the experts' gradients are reduced with the dense ones, over the
    // dp·cp group, whatever the order (with cp, ep, dp adjacent the expert layout gives the same
    // groups; with Meta's tp-cp-ep-pp-dp it would not).
    build(GroupKind::kExpertDp, dense_, {ParallelDim::kCp, ParallelDim::kDp});
  } else {
    build(GroupKind::kExpertDp, expert_, {ParallelDim::kDp});
  }
  build_dp_slices(GroupKind::kDpCp, GroupKind::kDpCpShard, GroupKind::kDpCpReplica);
  build_dp_slices(GroupKind::kExpertDp, GroupKind::kExpertDpShard, GroupKind::kExpertDpReplica);
}

void Placement::build(GroupKind k, const Layout& layout, std::initializer_list<ParallelDim> varying) {
  Kind& out = kinds_[static_cast<std::size_t>(k)];
  out.size = 1;
  for (const Axis& a : layout) {
    for (ParallelDim v : varying) {
      if (a.dim == v) out.size *= a.size;
    }
  }
  const auto n = static_cast<std::size_t>(world_);
  out.group_of.assign(n, -1);
  out.index.assign(n, 0);
  out.members.assign(n, 0);
  std::vector<int> group_of_base(n, -1);  // smallest member rank -> group id
  std::vector<int> filled(n / static_cast<std::size_t>(out.size), 0);
  int groups = 0;
  for (int r = 0; r < world_; ++r) {
    int base = r;
    for (const Axis& a : layout) {
      for (ParallelDim v : varying) {
        if (a.dim == v) base -= axis_coord(r, a.stride, a.size) * a.stride;
      }
    }
    int& g = group_of_base[static_cast<std::size_t>(base)];
    if (g < 0) g = groups++;
    const auto slot = static_cast<std::size_t>(g);
    out.group_of[static_cast<std::size_t>(r)] = g;
    out.index[static_cast<std::size_t>(r)] = filled[slot];
    out.members[slot * static_cast<std::size_t>(out.size) + static_cast<std::size_t>(filled[slot])] = r;
    ++filled[slot];
  }
  MOFASIM_CHECK(groups * out.size == world_, "every group must be full");
}

std::size_t Placement::check(int rank) const {
  if (rank < 0 || rank >= world_) {
    throw std::invalid_argument("rank " + std::to_string(rank) + " is outside the world [0, " + std::to_string(world_) + ")");
  }
  return static_cast<std::size_t>(rank);
}

std::span<const int> Placement::members(GroupKind k, int group) const {
  const Kind& kd = kind(k);
  if (group < 0 || group >= world_ / kd.size) {
    throw std::invalid_argument(std::string(group_kind_name(k)) + " group " + std::to_string(group) +
                                " does not exist (there are " + std::to_string(world_ / kd.size) + ")");
  }
  return std::span<const int>(kd.members).subspan(static_cast<std::size_t>(group * kd.size),
                                                  static_cast<std::size_t>(kd.size));
}

int Placement::coordinate(ParallelDim d, int rank) const {
  check(rank);
  const Layout& layout = d == ParallelDim::kEp ? expert_ : dense_;
  for (const Axis& a : layout) {
    if (a.dim == d) return axis_coord(rank, a.stride, a.size);
  }
  MOFASIM_UNREACHABLE("every dimension is in its layout");
}

int nodes_spanned(const ParallelSizes& sizes, const RankOrder& order, GroupKind k, int gpus_per_node) {
  int nodes = 0;
  int last = -1;
  for (int g : group_members_of(sizes, order, k, 0)) {  // ascending
    const int node = g / std::max(gpus_per_node, 1);
    if (node != last) ++nodes;
    last = node;
  }
  return nodes;
}

std::vector<int> group_members_of(const ParallelSizes& sizes, const RankOrder& order, GroupKind k, int rank) {
  if (is_dp_slice(k)) return dp_slice_members_of(sizes, order, k, rank);
  if (k == GroupKind::kExpertDp && sizes.experts_use_dense_dp()) k = GroupKind::kDpCp;  // as the Placement builds it
  check_sizes(sizes);
  check_order_for_sizes(sizes, order);
  const int world = sizes.world();
  if (rank < 0 || rank >= world) {
    throw std::invalid_argument("rank " + std::to_string(rank) + " is outside the world [0, " + std::to_string(world) + ")");
  }
  const KindAxes kind = kind_axes(k);
  // The varying axes' sizes and strides; the rank's own coordinates along them are cleared to
  // give the group's smallest member.
  std::array<int, 2> size{1, 1};
  std::array<int, 2> stride{0, 0};
  int base = rank;
  int stride_so_far = 1;
  for (ParallelDim d : order.dims()) {
    const int n = axis_size(sizes, d, kind.expert);
    if (n == 0) continue;
    for (int v = 0; v < kind.count; ++v) {
      if (kind.varying[static_cast<std::size_t>(v)] != d) continue;
      size[static_cast<std::size_t>(v)] = n;
      stride[static_cast<std::size_t>(v)] = stride_so_far;
      base -= axis_coord(rank, stride_so_far, n) * stride_so_far;
    }
    stride_so_far *= n;
  }
  MOFASIM_CHECK(stride_so_far == world, "the layout must cover the world");
  std::vector<int> members;
  members.reserve(static_cast<std::size_t>(size[0] * size[1]));
  for (int j = 0; j < size[1]; ++j) {
    for (int i = 0; i < size[0]; ++i) members.push_back(base + i * stride[0] + j * stride[1]);
  }
  if (!std::is_sorted(members.begin(), members.end())) std::sort(members.begin(), members.end());
  return members;
}

}  // namespace mofasim::topology
