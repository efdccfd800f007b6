#include "sim/executor/perturbed_folding.h"

#include <algorithm>
#include <array>

#include "sim/executor/instance_map.h"

namespace mofasim::executor {

std::string perturbed_folding(const Workload& w, const topology::Placement& placement,
                              std::span<const int> affected_gpus, std::vector<int>& extra) {
  extra.clear();
  std::vector<int> groups;
  for (int gpu : affected_gpus) {
    const int g = placement.group_of(topology::GroupKind::kPp, gpu);
    if (g != 0) groups.push_back(g);
  }
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  if (groups.empty()) return "";
  // Group scopes the workload uses, per stage.
  std::vector<std::array<bool, kScopeCount>> used(static_cast<std::size_t>(w.stages()));
  for (TaskId t = 0; t < w.size(); ++t) used[static_cast<std::size_t>(w.stage(t))][static_cast<int>(w.scope(t))] = true;
  const auto replica0 = placement.members(topology::GroupKind::kPp, 0);
  for (int g : groups) {
    const auto ranks = placement.members(topology::GroupKind::kPp, g);
    for (int s = 0; s < w.stages(); ++s) {
      for (int sc = 0; sc < kScopeCount; ++sc) {
        const auto scope = static_cast<Scope>(sc);
        if (scope == Scope::kRank || !used[static_cast<std::size_t>(s)][sc]) continue;
        const topology::GroupKind kind = InstanceMap::group_kind(scope, placement);
        const int rank = ranks[static_cast<std::size_t>(s)];
        if (placement.group_of(kind, rank) != placement.group_of(kind, replica0[static_cast<std::size_t>(s)])) {
          return "folded refused: perturbed rank " + std::to_string(rank) + " shares a " +
                 std::string(topology::group_kind_name(kind)) +
                 " group with ranks replica 0 does not meet, so they would differ from replica 0";
        }
      }
    }
  }
  extra = std::move(groups);
  return "";
}

}  // namespace mofasim::executor
