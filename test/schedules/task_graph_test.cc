// TaskGraph: CSR successors, in-degrees, deterministic topological order, cycle reports.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "schedules/task_graph.h"

namespace mofasim::schedules {
namespace {

std::vector<TaskId> to_vector(std::span<const TaskId> s) { return {s.begin(), s.end()}; }

// Diamond plus a shortcut: 0 -> 2, 1 -> 2, 2 -> 3, 0 -> 3, 0 -> 1.
// In-degrees: [0, 1, 2, 2]. Kahn with a FIFO seeded by id: 0 (frees 1; 2 and 3 still wait),
// 1 (frees 2), 2 (frees 3), 3.
TEST(TaskGraph, SuccessorsInDegreesAndOrder) {
  const std::vector<TaskEdge> edges = {{0, 2}, {1, 2}, {2, 3}, {0, 3}, {0, 1}};
  const TaskGraph g(4, edges);
  EXPECT_EQ(g.num_tasks(), 4u);
  EXPECT_EQ(g.num_edges(), 5u);
  EXPECT_EQ(to_vector(g.successors(0)), (std::vector<TaskId>{2, 3, 1}));  // input order kept
  EXPECT_EQ(to_vector(g.successors(3)), std::vector<TaskId>{});
  EXPECT_EQ(std::vector<std::uint32_t>(g.in_degrees().begin(), g.in_degrees().end()),
            (std::vector<std::uint32_t>{0, 1, 2, 2}));
  EXPECT_EQ(g.topological_order(), (std::vector<TaskId>{0, 1, 2, 3}));
}

// Two independent chains 0 -> 2 -> 4 and 1 -> 3: sources 0, 1 first (id order), then level by
// level: 2, 3, then 4.
TEST(TaskGraph, OrderIsBreadthFirstByIdWithinALevel) {
  const std::vector<TaskEdge> edges = {{0, 2}, {2, 4}, {1, 3}};
  EXPECT_EQ(TaskGraph(5, edges).topological_order(), (std::vector<TaskId>{0, 1, 2, 3, 4}));
}

// 0 -> 1 -> 2 -> 3 -> 1 and 3 -> 4: the cycle is 1 -> 2 -> 3 -> 1; tasks 1..4 never start.
TEST(TaskGraph, CycleErrorNamesTheTasksOnTheCycle) {
  const std::vector<TaskEdge> edges = {{0, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 4}};
  const TaskGraph g(5, edges);
  try {
    (void)g.topological_order();
    FAIL() << "expected TaskGraphCycle";
  } catch (const TaskGraphCycle& e) {
    EXPECT_STREQ(e.what(), "task graph has a cycle: 1 -> 2 -> 3 -> 1; 4 task(s) can never start");
    EXPECT_EQ(e.cycle(), (std::vector<TaskId>{1, 2, 3}));
    EXPECT_EQ(e.waiting_count(), 4u);
  }
}

TEST(TaskGraph, SelfLoopIsACycle) {
  const std::vector<TaskEdge> edges = {{0, 1}, {1, 1}};
  EXPECT_THROW((void)TaskGraph(2, edges).topological_order(), TaskGraphCycle);
}

TEST(TaskGraph, RejectsEdgeOutsideTheTaskRange) {
  const std::vector<TaskEdge> edges = {{0, 5}};
  EXPECT_THROW(TaskGraph(3, edges), std::invalid_argument);
}

// A random DAG (edges only from lower to higher id, fixed seed): every edge goes forward in the
// returned order, every task appears once, and in-degrees count the incoming edges.
TEST(TaskGraph, RandomDagOrderRespectsEveryEdge) {
  constexpr std::uint32_t kTasks = 20000;
  std::mt19937 rng(12345);
  std::vector<TaskEdge> edges;
  std::vector<std::uint32_t> expected_in(kTasks, 0);
  for (std::uint32_t i = 0; i + 1 < kTasks; ++i) {
    for (int k = 0; k < 3; ++k) {
      const TaskId to = i + 1 + rng() % std::min<std::uint32_t>(50, kTasks - 1 - i);
      edges.push_back({i, to});
      ++expected_in[to];
    }
  }
  // Shuffle so construction has to sort by source itself.
  std::shuffle(edges.begin(), edges.end(), rng);
  const TaskGraph g(kTasks, edges);
  const auto order = g.topological_order();
  ASSERT_EQ(order.size(), kTasks);
  std::vector<std::uint32_t> rank(kTasks, UINT32_MAX);
  for (std::uint32_t i = 0; i < kTasks; ++i) rank[order[i]] = i;
  for (TaskId t = 0; t < kTasks; ++t) {
    ASSERT_NE(rank[t], UINT32_MAX);
    EXPECT_EQ(g.in_degree(t), expected_in[t]);
    for (TaskId next : g.successors(t)) ASSERT_LT(rank[t], rank[next]);
  }
}

}  // namespace
}  // namespace mofasim::schedules
