// Speed of the schedule evaluator and of TaskGraph construction / topological order.
#include <benchmark/benchmark.h>

#include <vector>

#include "schedules/evaluate.h"
#include "schedules/factory.h"
#include "schedules/task_graph.h"

namespace mofasim::schedules {
namespace {

void BM_EvaluateInterleaved(benchmark::State& state) {
  const PipelineShape shape{.stages = 16, .microbatches = static_cast<int>(state.range(0)), .chunks = 4};
  const Schedule s = build_schedule(ScheduleKind::kInterleaved1F1B, shape);
  const auto costs = CostTable::uniform(16, 4, {.forward = Duration{100}, .input_grad = Duration{100},
                                                .weight_grad = Duration{100}});
  for (auto _ : state) benchmark::DoNotOptimize(evaluate(s, costs).makespan);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(s.total_ops()));
}
BENCHMARK(BM_EvaluateInterleaved)->Arg(64)->Arg(512);

// A layered DAG shaped like a step graph: n tasks, each with 3 successors a little ahead.
std::vector<TaskEdge> layered_edges(std::uint32_t n) {
  std::vector<TaskEdge> edges;
  edges.reserve(3 * std::size_t{n});
  for (std::uint32_t i = 0; i + 64 < n; ++i) {
    for (std::uint32_t k : {1u, 7u, 64u}) edges.push_back({i, i + k});
  }
  return edges;
}

void BM_TaskGraphBuild(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const auto edges = layered_edges(n);
  for (auto _ : state) benchmark::DoNotOptimize(TaskGraph(n, edges).num_edges());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(edges.size()));
}
BENCHMARK(BM_TaskGraphBuild)->Arg(1 << 20);

void BM_TaskGraphTopologicalOrder(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const TaskGraph g(n, layered_edges(n));
  for (auto _ : state) benchmark::DoNotOptimize(g.topological_order().size());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(g.num_edges()));
}
BENCHMARK(BM_TaskGraphTopologicalOrder)->Arg(1 << 20);

}  // namespace
}  // namespace mofasim::schedules

BENCHMARK_MAIN();
