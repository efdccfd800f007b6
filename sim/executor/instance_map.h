// InstanceMap: how a template task of the one-replica Workload maps onto simulated ranks, without
// materialising per-rank copies. A replica is one pipeline (PP group g: one rank per stage);
// full fidelity simulates every replica, folded fidelity only replica 0 (the ranks of PP group 0),
// whose groups are costed as the real groups they belong to, plus any `extra` PP groups a
// perturbation makes different (simulated replica index i > 0 is PP group extra[i - 1]).
//
// For a task of scope S on stage s, instance i of replica g is inst_of(S, s, g): rank-scope tasks
// have one instance per replica; group-scope tasks one per group of that kind that meets the
// simulated replicas at stage s, shared by its member replicas. All tables are O(scopes · stages
// · replicas) integers, built once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/executor/task.h"
#include "topology/placement.h"

namespace mofasim::executor {

enum class Fidelity : std::uint8_t { kFull, kFolded };

class InstanceMap {
 public:
  InstanceMap(const topology::Placement& placement, int stages, Fidelity fidelity, std::span<const int> extra = {});

  [[nodiscard]] Fidelity fidelity() const { return fidelity_; }
  [[nodiscard]] int replicas() const { return replicas_; }
  [[nodiscard]] int stages() const { return stages_; }
  // The rank (== GPU id) of `stage` in replica g.
  [[nodiscard]] int rank(int stage, int replica) const {
    return ranks_[static_cast<std::size_t>(replica) * stages_ + stage];
  }
  // Dense slot of a simulated rank: stage * replicas + replica.
  [[nodiscard]] std::uint32_t slot(int stage, int replica) const {
    return static_cast<std::uint32_t>(stage * replicas_ + replica);
  }
  [[nodiscard]] std::uint32_t slots() const { return static_cast<std::uint32_t>(stages_ * replicas_); }

  [[nodiscard]] std::uint32_t instances(Scope scope, int stage) const { return table(scope, stage).count; }
  [[nodiscard]] std::uint32_t inst_of(Scope scope, int stage, int replica) const {
    return table(scope, stage).inst_of[static_cast<std::size_t>(replica)];
  }
  // Replicas sharing instance `inst` (ascending).
  [[nodiscard]] std::span<const std::uint32_t> members(Scope scope, int stage, std::uint32_t inst) const {
    const Table& t = table(scope, stage);
    return {t.members.data() + t.begin[inst], t.members.data() + t.begin[inst + 1]};
  }
  // The placement group (of the kind for `scope`) behind an instance; all its ranks, simulated or not.
  [[nodiscard]] std::span<const int> group_ranks(Scope scope, int stage, std::uint32_t inst) const;
  // The placement group kind of a scope: the DP scopes are the HSDP shard groups when the
  // placement has dist_opt_instances > 1, the whole DP groups otherwise.
  [[nodiscard]] static topology::GroupKind group_kind(Scope scope, const topology::Placement& placement);

 private:
  struct Table {
    std::uint32_t count = 0;
    std::vector<std::uint32_t> inst_of;  // by replica
    std::vector<std::uint32_t> begin;    // CSR over members
    std::vector<std::uint32_t> members;
    std::vector<int> group;              // placement group id by instance
  };
  [[nodiscard]] const Table& table(Scope scope, int stage) const {
    return tables_[static_cast<std::size_t>(stage) * kScopeCount + static_cast<int>(scope)];
  }

  const topology::Placement* placement_;
  Fidelity fidelity_;
  int stages_;
  int replicas_;
  std::vector<int> ranks_;
  std::vector<Table> tables_;
};

}  // namespace mofasim::executor
