// TaskGraph: a compact, immutable DAG over dense task ids 0 .. n−1, for step graphs with millions
// of tasks. Stored as compressed sparse rows (Boost.Graph's compressed_sparse_row_graph, kept out
// of this header): successors(t) is a contiguous span, in_degrees() one array, so an executor can
// copy the in-degrees once and count them down without touching the graph again.
// Memory: 4 bytes per edge + 8 bytes per task. Successors of a task keep the order their edges
// had in the input list.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace mofasim::schedules {

using TaskId = std::uint32_t;

struct TaskEdge {
  TaskId from = 0;
  TaskId to = 0;
};

// Thrown by topological_order() when the graph has a cycle. cycle() holds the ids of (up to 16)
// tasks on one cycle, in edge order; waiting_count() is how many tasks could never start.
class TaskGraphCycle : public std::runtime_error {
 public:
  TaskGraphCycle(const std::string& message, std::vector<TaskId> cycle, std::size_t waiting_count)
      : std::runtime_error(message), cycle_(std::move(cycle)), waiting_count_(waiting_count) {}
  [[nodiscard]] const std::vector<TaskId>& cycle() const { return cycle_; }
  [[nodiscard]] std::size_t waiting_count() const { return waiting_count_; }

 private:
  std::vector<TaskId> cycle_;
  std::size_t waiting_count_;
};

class TaskGraph {
 public:
  // Throws std::invalid_argument if an edge names a task >= num_tasks, or the graph has 2^32 or
  // more edges. Duplicate edges are kept (each counts towards the in-degree); self-loops are
  // cycles.
  TaskGraph(std::uint32_t num_tasks, std::span<const TaskEdge> edges);
  ~TaskGraph();
  TaskGraph(TaskGraph&&) noexcept;
  TaskGraph& operator=(TaskGraph&&) noexcept;
  TaskGraph(const TaskGraph&) = delete;
  TaskGraph& operator=(const TaskGraph&) = delete;

  [[nodiscard]] std::uint32_t num_tasks() const { return static_cast<std::uint32_t>(in_degree_.size()); }
  [[nodiscard]] std::size_t num_edges() const { return num_edges_; }
  // O(1). The span stays valid for the graph's lifetime.
  [[nodiscard]] std::span<const TaskId> successors(TaskId task) const;
  [[nodiscard]] std::uint32_t in_degree(TaskId task) const { return in_degree_[task]; }
  [[nodiscard]] std::span<const std::uint32_t> in_degrees() const { return in_degree_; }

  // Kahn's order with a FIFO ready queue seeded in ascending id order (deterministic).
  // O(n + e). Throws TaskGraphCycle naming tasks on a cycle when the graph is not a DAG.
  [[nodiscard]] std::vector<TaskId> topological_order() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::uint32_t> in_degree_;
  std::size_t num_edges_ = 0;
};

}  // namespace mofasim::schedules
