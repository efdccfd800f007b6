// InstanceTimes: predecessor CSR of the template DAG and derived start times.
#include "sim/executor/instance_times.h"

#include <algorithm>

namespace mofasim::executor {

InstanceTimes::InstanceTimes(const Workload& w, const ReplayOutput& r) : w_(w), r_(r) {
  const std::uint32_t n = w.size();
  begin_.assign(n + 1, 0);
  const auto from = w.edge_sources();
  const auto to = w.edge_targets();
  for (TaskId v : to) ++begin_[v + 1];
  for (std::uint32_t i = 0; i < n; ++i) begin_[i + 1] += begin_[i];
  preds_.resize(from.size());
  std::vector<std::uint32_t> fill(begin_.begin(), begin_.end() - 1);
  for (std::size_t e = 0; e < from.size(); ++e) preds_[fill[to[e]]++] = from[e];
}

void InstanceTimes::pred_instances(TaskId u, TaskId t, std::uint32_t inst, std::vector<std::uint32_t>& out) const {
  out.clear();
  for_each_member_pred_instance(w_, r_.map, u, t, inst, [&](std::uint32_t ui) { out.push_back(ui); });
}

std::int64_t InstanceTimes::start_ns(TaskId t, std::uint32_t inst) const {
  std::int64_t start = 0;
  for (TaskId u : predecessors(t)) {
    for_each_member_pred_instance(w_, r_.map, u, t, inst,
                                  [&](std::uint32_t ui) { start = std::max(start, end_ns(u, ui)); });
  }
  return start;
}

}  // namespace mofasim::executor
