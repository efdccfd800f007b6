// Timeline analysis of a replay: the exposed-time breakdown of one stage (step_result.h gives the
// attribution rule), the critical stage, and the critical path by category.
#pragma once

#include <array>
#include <vector>

#include "sim/executor/instance_times.h"
#include "sim/executor/replay.h"
#include "sim/executor/step_result.h"
#include "sim/executor/workload.h"

namespace mofasim::executor {

// One task instance as seen on a stage's replica-0 rank.
struct Interval {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  TaskId task = 0;
};

// Instances that occupy `stage`'s rank of replica 0: its own tasks, group tasks it is a member
// of, and PP transfers it sends or receives. In start order.
std::vector<Interval> stage_intervals(const InstanceTimes& times, int stage);

Breakdown stage_breakdown(const InstanceTimes& times, int stage);

// One task instance on the critical path; it starts when the step before it ends.
struct CriticalStep {
  TaskId task = 0;
  std::uint32_t inst = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

struct CriticalPath {
  std::array<double, kCategoryCount> seconds{};
  std::size_t length = 0;  // instances on the path
  std::vector<CriticalStep> steps{};  // the path in time order: first task first
};
// Walks back from the last instance to end, each time to the predecessor instance that ended
// last (the one that released it). The path has no gaps: an instance starts when that
// predecessor ends, so the per-category seconds add up to the step.
CriticalPath critical_path(const InstanceTimes& times);

}  // namespace mofasim::executor
