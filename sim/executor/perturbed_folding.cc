#include "sim/executor/perturbed_folding.h"

#include <algorithm>
#include <array>

#include "sim/executor/instance_map.h"

namespace mofasim::executor {
namespace {

using topology::GroupKind;

// What folding needs to know of the replicas (PP groups): the rank at each stage, and per rank its
// compute factor, hardware class and whether it sits on a degraded link.
class Replicas {
 public:
  Replicas(const topology::Placement& placement, int stages, const perturb::ResolvedPerturbations& p,
           std::span<const int> hardware_class)
      : placement_(placement), stages_(stages), count_(placement.group_count(GroupKind::kPp)), p_(p),
        class_(hardware_class) {
    pinned_.assign(static_cast<std::size_t>(count_), 0);
    differs_.assign(static_cast<std::size_t>(count_), 0);
    for (const auto* set : {&p.nvlink_gpus, &p.scaleout_gpus}) {
      for (int gpu : *set) pinned_[static_cast<std::size_t>(pp(gpu))] = 1;
    }
    for (int gpu : p.affected_gpus) differs_[static_cast<std::size_t>(pp(gpu))] = 1;
    for (int g = 0; g < count_; ++g) {
      for (int s = 0; s < stages_ && !differs_[static_cast<std::size_t>(g)]; ++s) {
        if (klass(rank(g, s)) != klass(rank(0, s))) differs_[static_cast<std::size_t>(g)] = 1;
      }
    }
  }
  [[nodiscard]] int count() const { return count_; }
  [[nodiscard]] int rank(int g, int s) const { return placement_.members(GroupKind::kPp, g)[static_cast<std::size_t>(s)]; }
  [[nodiscard]] int pp(int gpu) const { return placement_.group_of(GroupKind::kPp, gpu); }
  [[nodiscard]] bool pinned(int g) const { return pinned_[static_cast<std::size_t>(g)] != 0; }
  // Perturbed or on other hardware than replica 0: replica 0 may not represent it as it is.
  [[nodiscard]] bool differs(int g) const { return differs_[static_cast<std::size_t>(g)] != 0; }
  // (a): every stage of g computes no slower than the same stage of r, on the same hardware class.
  [[nodiscard]] bool represented_by(int g, int r) const {
    for (int s = 0; s < stages_; ++s) {
      const int a = rank(g, s);
      const int b = rank(r, s);
      if (klass(a) != klass(b) || p_.compute(a) > p_.compute(b)) return false;
    }
    return true;
  }
  [[nodiscard]] bool same(int g, int r) const { return represented_by(g, r) && represented_by(r, g); }

 private:
  [[nodiscard]] int klass(int gpu) const { return class_.empty() ? 0 : class_[static_cast<std::size_t>(gpu)]; }
  const topology::Placement& placement_;
  int stages_;
  int count_;
  const perturb::ResolvedPerturbations& p_;
  std::span<const int> class_;
  std::vector<char> pinned_;
  std::vector<char> differs_;
};

// Representatives: replica 0 where it dominates, else (by_symmetry) the first replica of the
// stage-0 TP group that is the same, else the replica itself.
std::vector<int> representatives(const Replicas& r, const topology::Placement& placement, bool by_symmetry) {
  std::vector<int> rep(static_cast<std::size_t>(r.count()));
  for (int g = 0; g < r.count(); ++g) {
    int chosen = g;
    if (g != 0 && !r.pinned(g) && (!r.differs(g) || r.represented_by(g, 0))) {
      chosen = 0;
    } else if (by_symmetry && !r.pinned(g)) {
      for (int peer : placement.members_of(GroupKind::kTp, r.rank(g, 0))) {
        const int h = r.pp(peer);
        if (h < chosen && !r.pinned(h) && r.same(g, h)) chosen = h;  // the first alike replica
      }
    }
    rep[static_cast<std::size_t>(g)] = chosen;
  }
  // A representative represents itself (a chain g -> h -> 0 cannot arise: h is the first alike).
  for (int g = 0; g < r.count(); ++g) {
    const int h = rep[static_cast<std::size_t>(g)];
    if (rep[static_cast<std::size_t>(h)] != h) rep[static_cast<std::size_t>(g)] = g;
  }
  return rep;
}

// Condition (c); "" or why not.
std::string check_groups(const Workload& w, const Replicas& r, const topology::Placement& placement,
                         const std::vector<int>& rep) {
  std::vector<std::array<bool, kScopeCount>> used(static_cast<std::size_t>(w.stages()));
  for (TaskId t = 0; t < w.size(); ++t) used[static_cast<std::size_t>(w.stage(t))][static_cast<int>(w.scope(t))] = true;
  for (int s = 0; s < w.stages(); ++s) {
    for (int sc = 0; sc < kScopeCount; ++sc) {
      const auto scope = static_cast<Scope>(sc);
      if (scope == Scope::kRank || !used[static_cast<std::size_t>(s)][sc]) continue;
      const GroupKind kind = InstanceMap::group_kind(scope, placement);
      for (int grp = 0; grp < placement.group_count(kind); ++grp) {
        const auto members = placement.members(kind, grp);
        int target = -1;
        for (int rank : members) {
          const int represented = rep[static_cast<std::size_t>(r.pp(rank))];
          const int there = placement.group_of(kind, r.rank(represented, s));
          if (target < 0) target = there;
          if (there != target) {
            return "folded refused: the " + std::string(topology::group_kind_name(kind)) + " group of rank " +
                   std::to_string(rank) + " (stage " + std::to_string(s) +
                   ") mixes perturbed and healthy replicas that no simulated group holds alike, so they would differ from replica 0";
          }
        }
      }
    }
  }
  return "";
}

}  // namespace

std::string perturbed_folding(const Workload& w, const topology::Placement& placement,
                              const perturb::ResolvedPerturbations& perturbed, std::span<const int> hardware_class,
                              std::vector<int>& extra) {
  extra.clear();
  const Replicas r(placement, w.stages(), perturbed, hardware_class);
  bool any = false;
  for (int g = 1; g < r.count() && !any; ++g) any = r.differs(g) || r.pinned(g);
  if (!any) return "";
  std::string why;
  for (bool by_symmetry : {true, false}) {
    const std::vector<int> rep = representatives(r, placement, by_symmetry);
    why = check_groups(w, r, placement, rep);
    if (!why.empty()) continue;
    for (int g = 1; g < r.count(); ++g) {
      if (rep[static_cast<std::size_t>(g)] == g) extra.push_back(g);
    }
    return "";
  }
  return why;
}

}  // namespace mofasim::executor
