// TaskGraph over Boost.Graph's compressed_sparse_row_graph; Boost stays in this file.
#include "schedules/task_graph.h"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <limits>
#include <utility>

namespace mofasim::schedules {

using CsrGraph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                                    boost::no_property, TaskId, std::uint32_t>;

struct TaskGraph::Impl {
  CsrGraph graph;
};

namespace {

// Adapts the caller's edge span to the (source, target) pairs Boost's constructor iterates.
struct EdgePairIterator {
  using iterator_category = std::forward_iterator_tag;
  using value_type = std::pair<TaskId, TaskId>;
  using difference_type = std::ptrdiff_t;
  using pointer = const value_type*;
  using reference = value_type;

  const TaskEdge* at = nullptr;
  value_type operator*() const { return {at->from, at->to}; }
  EdgePairIterator& operator++() {
    ++at;
    return *this;
  }
  EdgePairIterator operator++(int) {
    EdgePairIterator old = *this;
    ++at;
    return old;
  }
  friend bool operator==(EdgePairIterator a, EdgePairIterator b) { return a.at == b.at; }
  friend bool operator!=(EdgePairIterator a, EdgePairIterator b) { return a.at != b.at; }
};

}  // namespace

TaskGraph::TaskGraph(std::uint32_t num_tasks, std::span<const TaskEdge> edges) : num_edges_(edges.size()) {
  if (edges.size() >= std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("task graph: " + std::to_string(edges.size()) + " edges; allowed: < 2^32");
  }
  in_degree_.assign(num_tasks, 0);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const TaskEdge& e = edges[i];
    if (e.from >= num_tasks || e.to >= num_tasks) {
      throw std::invalid_argument("task graph: edge " + std::to_string(i) + " (" + std::to_string(e.from) + " -> " +
                                  std::to_string(e.to) + ") names a task outside [0, " + std::to_string(num_tasks) +
                                  ")");
    }
    ++in_degree_[e.to];
  }
  impl_ = std::make_unique<Impl>(Impl{CsrGraph(boost::edges_are_unsorted_multi_pass,
                                               EdgePairIterator{edges.data()},
                                               EdgePairIterator{edges.data() + edges.size()}, num_tasks)});
}

TaskGraph::~TaskGraph() = default;
TaskGraph::TaskGraph(TaskGraph&&) noexcept = default;
TaskGraph& TaskGraph::operator=(TaskGraph&&) noexcept = default;

std::span<const TaskId> TaskGraph::successors(TaskId task) const {
  // m_forward is Boost's CSR storage (public, documented as non-portable): rowstart offsets into
  // the column (target) array.
  const auto& csr = impl_->graph.m_forward;
  const std::uint32_t begin = csr.m_rowstart[task];
  const std::uint32_t end = csr.m_rowstart[task + 1];
  return {csr.m_column.data() + begin, end - begin};
}

std::vector<TaskId> TaskGraph::topological_order() const {
  const std::uint32_t n = num_tasks();
  std::vector<std::uint32_t> remaining(in_degree_.begin(), in_degree_.end());
  std::vector<TaskId> order;
  order.reserve(n);
  for (TaskId t = 0; t < n; ++t) {
    if (remaining[t] == 0) order.push_back(t);
  }
  // `order` doubles as the FIFO queue: tasks in [head, size) are ready but not yet expanded.
  for (std::size_t head = 0; head < order.size(); ++head) {
    for (TaskId next : successors(order[head])) {
      if (--remaining[next] == 0) order.push_back(next);
    }
  }
  if (order.size() == n) return order;

  // Every task left has a predecessor that is also left; walking back along one such
  // predecessor per task must revisit a task, and the revisited stretch is a cycle.
  constexpr TaskId kNone = std::numeric_limits<TaskId>::max();
  std::vector<TaskId> some_pred(n, kNone);
  for (TaskId u = 0; u < n; ++u) {
    if (remaining[u] == 0) continue;
    for (TaskId w : successors(u)) {
      if (remaining[w] != 0 && some_pred[w] == kNone) some_pred[w] = u;
    }
  }
  TaskId start = 0;
  while (remaining[start] == 0) ++start;
  std::vector<std::uint32_t> seen_at(n, kNone);
  std::vector<TaskId> walk;
  TaskId t = start;
  while (seen_at[t] == kNone) {
    seen_at[t] = static_cast<std::uint32_t>(walk.size());
    walk.push_back(t);
    t = some_pred[t];
  }
  std::vector<TaskId> cycle(walk.begin() + seen_at[t], walk.end());
  std::reverse(cycle.begin(), cycle.end());  // predecessor walk -> edge order
  // Start the cycle at its smallest id so the message does not depend on where the walk began.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  constexpr std::size_t kShown = 16;
  const std::size_t full_length = cycle.size();
  if (cycle.size() > kShown) cycle.resize(kShown);

  std::string message = "task graph has a cycle: ";
  for (TaskId c : cycle) message += std::to_string(c) + " -> ";
  message += full_length > kShown ? "..." : std::to_string(cycle.front());
  const std::size_t waiting = n - order.size();
  message += "; " + std::to_string(waiting) + " task(s) can never start";
  throw TaskGraphCycle(message, std::move(cycle), waiting);
}

}  // namespace mofasim::schedules
