// InstanceMap tables: replicas from the PP groups, instances from the placement's groups.
#include "sim/executor/instance_map.h"

#include <stdexcept>
#include <string>

#include "sim/units/check.h"

namespace mofasim::executor {

topology::GroupKind InstanceMap::group_kind(Scope scope, const topology::Placement& placement) {
  const bool hsdp = placement.sizes().dist_opt_instances > 1;
  switch (scope) {
    case Scope::kTp: return topology::GroupKind::kTp;
    case Scope::kCp: return topology::GroupKind::kCp;
    case Scope::kEp: return topology::GroupKind::kEp;
    case Scope::kDp: return hsdp ? topology::GroupKind::kDpCpShard : topology::GroupKind::kDpCp;
    case Scope::kExpertDp: return hsdp ? topology::GroupKind::kExpertDpShard : topology::GroupKind::kExpertDp;
    case Scope::kDpReplica: return topology::GroupKind::kDpCpReplica;
    case Scope::kExpertDpReplica: return topology::GroupKind::kExpertDpReplica;
    case Scope::kExpertTp: return topology::GroupKind::kExpertTp;
    case Scope::kExpertTpEp: return topology::GroupKind::kExpertTpEp;
    case Scope::kRank:
    case Scope::kCount: break;
  }
  MOFASIM_UNREACHABLE("rank scope has no group kind");
}

InstanceMap::InstanceMap(const topology::Placement& placement, int stages, Fidelity fidelity,
                         std::span<const int> extra)
    : placement_(&placement), fidelity_(fidelity), stages_(stages) {
  if (placement.sizes().pp != stages) {
    throw std::invalid_argument("instance map: placement has pp = " + std::to_string(placement.sizes().pp) +
                                " but the workload has " + std::to_string(stages) + " stages");
  }
  const bool folded = fidelity == Fidelity::kFolded;
  replicas_ = folded ? 1 + static_cast<int>(extra.size()) : placement.group_count(topology::GroupKind::kPp);
  ranks_.resize(static_cast<std::size_t>(replicas_) * stages_);
  for (int g = 0; g < replicas_; ++g) {
    const int pp_group = folded && g > 0 ? extra[static_cast<std::size_t>(g - 1)] : g;
    if (folded && g > 0) {
      const int previous = g == 1 ? 0 : extra[static_cast<std::size_t>(g - 2)];
      MOFASIM_CHECK(pp_group < placement.group_count(topology::GroupKind::kPp) && pp_group > previous,
                    "extra replicas must be ascending PP groups other than 0");
    }
    const auto members = placement.members(topology::GroupKind::kPp, pp_group);
    MOFASIM_CHECK(static_cast<int>(members.size()) == stages, "PP group size differs from stages");
    for (int s = 0; s < stages; ++s) ranks_[static_cast<std::size_t>(g) * stages_ + s] = members[static_cast<std::size_t>(s)];
  }
  tables_.resize(static_cast<std::size_t>(stages) * kScopeCount);
  for (int s = 0; s < stages; ++s) {
    for (int sc = 0; sc < kScopeCount; ++sc) {
      const auto scope = static_cast<Scope>(sc);
      Table& t = tables_[static_cast<std::size_t>(s) * kScopeCount + sc];
      t.inst_of.resize(static_cast<std::size_t>(replicas_));
      if (scope == Scope::kRank) {
        t.count = static_cast<std::uint32_t>(replicas_);
        t.begin.resize(t.count + 1);
        t.members.resize(t.count);
        for (std::uint32_t g = 0; g < t.count; ++g) {
          t.inst_of[g] = g;
          t.begin[g] = g;
          t.members[g] = g;
        }
        t.begin[t.count] = t.count;
        t.group.assign(t.count, -1);
        continue;
      }
      const topology::GroupKind kind = group_kind(scope, placement);
      std::vector<std::int64_t> local(static_cast<std::size_t>(placement.group_count(kind)), -1);
      std::vector<std::uint32_t> count;
      for (int g = 0; g < replicas_; ++g) {
        const int grp = placement.group_of(kind, rank(s, g));
        auto& l = local[static_cast<std::size_t>(grp)];
        if (l < 0) {
          l = static_cast<std::int64_t>(t.group.size());
          t.group.push_back(grp);
          count.push_back(0);
        }
        t.inst_of[static_cast<std::size_t>(g)] = static_cast<std::uint32_t>(l);
        ++count[static_cast<std::size_t>(l)];
      }
      t.count = static_cast<std::uint32_t>(t.group.size());
      t.begin.assign(t.count + 1, 0);
      for (std::uint32_t i = 0; i < t.count; ++i) t.begin[i + 1] = t.begin[i] + count[i];
      t.members.resize(static_cast<std::size_t>(replicas_));
      std::vector<std::uint32_t> fill(t.begin.begin(), t.begin.end() - 1);
      for (int g = 0; g < replicas_; ++g) {
        t.members[fill[t.inst_of[static_cast<std::size_t>(g)]]++] = static_cast<std::uint32_t>(g);
      }
    }
  }
}

std::span<const int> InstanceMap::group_ranks(Scope scope, int stage, std::uint32_t inst) const {
  return placement_->members(group_kind(scope, *placement_), table(scope, stage).group[inst]);
}

}  // namespace mofasim::executor
