// InstanceTimes: start and end of any task instance of a replay, and the predecessor instances
// of an instance.
//
// The replay stores only end times. An instance starts the moment its last predecessor instance
// ends (the replay starts it from that completion, at the same nanosecond), or at 0 when it has
// no predecessor, so its start is the latest end among its predecessor instances.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/executor/replay.h"
#include "sim/executor/workload.h"

namespace mofasim::executor {

// Calls f(ui) for each instance ui of task `u` that instance `vi` of task `v` waits for (u -> v
// is an edge): the same instance when both share scope and stage (or are rank-scope), otherwise
// the instance of u holding each member replica of vi, in member order; an instance may repeat.
template <class F>
void for_each_member_pred_instance(const Workload& w, const InstanceMap& map, TaskId u, TaskId v, std::uint32_t vi,
                                   F&& f) {
  const Scope su = w.scope(u);
  const Scope sv = w.scope(v);
  if (su == sv && (su == Scope::kRank || w.stage(u) == w.stage(v))) {
    f(vi);
    return;
  }
  for (std::uint32_t g : map.members(sv, w.stage(v), vi)) f(map.inst_of(su, w.stage(u), static_cast<int>(g)));
}

class InstanceTimes {
 public:
  InstanceTimes(const Workload& w, const ReplayOutput& r);

  [[nodiscard]] const Workload& workload() const { return w_; }
  [[nodiscard]] const ReplayOutput& replay() const { return r_; }
  [[nodiscard]] std::int64_t end_ns(TaskId t, std::uint32_t inst) const { return r_.end_ns[r_.base[t] + inst]; }
  [[nodiscard]] std::int64_t start_ns(TaskId t, std::uint32_t inst) const;

  // Template tasks with an edge into `t`.
  [[nodiscard]] std::span<const TaskId> predecessors(TaskId t) const {
    return {preds_.data() + begin_[t], preds_.data() + begin_[t + 1]};
  }
  // Instances of predecessor task `u` that instance `inst` of `t` waits for, in member order
  // (an instance may appear more than once). Replaces the contents of `out`.
  void pred_instances(TaskId u, TaskId t, std::uint32_t inst, std::vector<std::uint32_t>& out) const;

 private:
  const Workload& w_;
  const ReplayOutput& r_;
  std::vector<std::uint32_t> begin_;
  std::vector<TaskId> preds_;
};

}  // namespace mofasim::executor
