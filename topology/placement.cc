// Group construction for Placement: one pass over the ranks per group kind.
#include "topology/placement.h"

#include <stdexcept>
#include <string>

#include "sim/units/check.h"

namespace mofasim::topology {
namespace {

void check_size(const char* name, int v) {
  if (v < 1) throw std::invalid_argument(std::string("parallelism.") + name + ": must be >= 1, got " + std::to_string(v));
}

int axis_coord(int rank, int stride, int size) { return (rank / stride) % size; }

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
  }
  return "?";
}

Placement::Placement(const ParallelSizes& sizes, const RankOrder& order) : sizes_(sizes), order_(order) {
  check_size("tp", sizes.tp);
  check_size("cp", sizes.cp);
  check_size("ep", sizes.ep);
  check_size("dp", sizes.dp);
  check_size("pp", sizes.pp);
  if ((sizes.cp * sizes.dp) % sizes.ep != 0) {
    throw std::invalid_argument("parallelism.ep: must divide cp*dp = " + std::to_string(sizes.cp * sizes.dp) +
                                " (experts are carved out of the cp*dp ranks), got " + std::to_string(sizes.ep));
  }
  world_ = sizes.world();
  const int edp = sizes.cp * sizes.dp / sizes.ep;
  int dense_stride = 1;
  int expert_stride = 1;
  for (ParallelDim d : order.dims()) {
    int dense_size = 0;
    int expert_size = 0;
    switch (d) {
      case ParallelDim::kTp: dense_size = expert_size = sizes.tp; break;
      case ParallelDim::kPp: dense_size = expert_size = sizes.pp; break;
      case ParallelDim::kCp: dense_size = sizes.cp; break;
      case ParallelDim::kEp: expert_size = sizes.ep; break;
      case ParallelDim::kDp: dense_size = sizes.dp; expert_size = edp; break;
    }
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
  build(GroupKind::kExpertDp, expert_, {ParallelDim::kDp});
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

}  // namespace mofasim::topology
