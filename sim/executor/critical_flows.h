// CriticalFlows: the critical path (analyze.h) as flow ids for a trace. Only the instances a
// trace shows take part: the replica-0 instance of a task, on a traced stage, kept by the
// filter; each links to the next such instance, so in full fidelity a hop through another
// replica becomes one longer arrow.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/executor/analyze.h"
#include "sim/executor/replay.h"
#include "sim/executor/trace_filter.h"
#include "sim/executor/workload.h"

namespace mofasim::executor {

// Flow ids of the critical path's shown instances: the k-th shown instance (k = 0, 1, ...) ends
// flow k and starts flow k + 1, so ids are 1 .. shown - 1.
class CriticalFlows {
 public:
  CriticalFlows(const Workload& w, const ReplayOutput& r, const CriticalPath& path, const TraceFilter& filter,
                const std::vector<int>& stages)
      : index_(w.size(), kNone) {
    std::vector<bool> traced(static_cast<std::size_t>(w.stages()), false);
    for (int s : stages) traced[static_cast<std::size_t>(s)] = true;
    for (const CriticalStep& step : path.steps) {
      const TaskId t = step.task;
      if (!traced[static_cast<std::size_t>(w.stage(t))]) continue;
      if (step.inst != r.map.inst_of(w.scope(t), w.stage(t), 0)) continue;  // another replica's
      if (!filter.keeps_span(w, t, step.start_ns, step.end_ns)) continue;
      index_[t] = shown_++;
    }
  }
  // {flow_out, flow_in} of task t's replica-0 span on its own stage ({0, 0}: not on the path).
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> of(TaskId t) const {
    const std::uint32_t k = index_[t];
    if (k == kNone) return {0, 0};
    return {k + 1 < shown_ ? k + 1 : 0, k > 0 ? k : 0};
  }

 private:
  std::vector<std::uint32_t> index_;  // by task: position among shown critical instances
  std::uint32_t shown_ = 0;
};

}  // namespace mofasim::executor
