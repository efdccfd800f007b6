// HSDP groups (Megatron's partial distributed optimizer, num_distributed_optimizer_instances = N;
// PyTorch FSDP's HYBRID_SHARD): megatron/core/parallel_state.py cuts each ascending dp-cp group
// into N consecutive "intra-partial" groups of S = dp·cp/N ranks, the shard groups the optimizer
// state (and with ZeRO-2/3 the gradients and parameters) is split over, and builds the expert-DP
// ones with create_hierarchical_groups([edp/N, N]): level 0 the same consecutive cut, level 1 the
// "inter-partial" replica groups of the ranks at one position in every shard group (stride S),
// which all-reduce the gradient shard across instances.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/units/check.h"
#include "topology/placement.h"

namespace mofasim::topology {
namespace {

GroupKind whole_kind(GroupKind k) {
  return k == GroupKind::kDpCpShard || k == GroupKind::kDpCpReplica ? GroupKind::kDpCp : GroupKind::kExpertDp;
}

bool is_shard(GroupKind k) { return k == GroupKind::kDpCpShard || k == GroupKind::kExpertDpShard; }

// Positions (in the ascending whole group of `size` members cut into `instances` shards) of the
// slice that holds position i.
std::vector<int> slice_positions(GroupKind k, int size, int instances, int i) {
  const int shard = size / instances;
  std::vector<int> out;
  if (is_shard(k)) {
    for (int j = 0; j < shard; ++j) out.push_back((i / shard) * shard + j);
  } else {
    for (int j = 0; j < instances; ++j) out.push_back(i % shard + j * shard);
  }
  return out;
}

}  // namespace

bool is_dp_slice(GroupKind k) {
  return k == GroupKind::kDpCpShard || k == GroupKind::kDpCpReplica || k == GroupKind::kExpertDpShard ||
         k == GroupKind::kExpertDpReplica;
}

void Placement::build_dp_slices(GroupKind whole, GroupKind shard, GroupKind replica) {
  const Kind& w = kind(whole);
  const int instances = sizes_.dist_opt_instances;
  const auto n = static_cast<std::size_t>(world_);
  for (const GroupKind k : {shard, replica}) {
    Kind& out = kinds_[static_cast<std::size_t>(k)];
    out.size = k == shard ? w.size / instances : instances;
    out.group_of.assign(n, -1);
    out.index.assign(n, 0);
    out.members.assign(n, 0);
    // Groups are numbered by their smallest member, ascending, as every other kind: walking the
    // ranks upwards meets each group first at that member.
    int groups = 0;
    for (int r = 0; r < world_; ++r) {
      if (out.group_of[static_cast<std::size_t>(r)] >= 0) continue;
      const auto whole_members = members(whole, w.group_of[static_cast<std::size_t>(r)]);
      const std::vector<int> pos = slice_positions(k, w.size, instances, w.index[static_cast<std::size_t>(r)]);
      for (std::size_t j = 0; j < pos.size(); ++j) {
        const int m = whole_members[static_cast<std::size_t>(pos[j])];
        out.group_of[static_cast<std::size_t>(m)] = groups;
        out.index[static_cast<std::size_t>(m)] = static_cast<int>(j);
        out.members[static_cast<std::size_t>(groups) * static_cast<std::size_t>(out.size) + j] = m;
      }
      ++groups;
    }
    MOFASIM_CHECK(groups * out.size == world_, "every slice group must be full");
  }
}

std::vector<int> dp_slice_members_of(const ParallelSizes& sizes, const RankOrder& order, GroupKind k, int rank) {
  MOFASIM_CHECK(is_dp_slice(k), "dp_slice_members_of takes an HSDP group kind");
  const std::vector<int> whole = group_members_of(sizes, order, whole_kind(k), rank);
  const int i = static_cast<int>(std::lower_bound(whole.begin(), whole.end(), rank) - whole.begin());
  std::vector<int> out;
  for (int p : slice_positions(k, static_cast<int>(whole.size()), sizes.dist_opt_instances, i)) {
    out.push_back(whole[static_cast<std::size_t>(p)]);
  }
  return out;
}

}  // namespace mofasim::topology
