// Breakdown sweep over one stage's intervals and the critical-path walk.
#include "sim/executor/analyze.h"

#include <algorithm>

#include "sim/executor/instance_times.h"
#include "sim/units/check.h"

namespace mofasim::executor {
namespace {

// Attribution priority (step_result.h): lower index wins.
constexpr std::array<Category, kCategoryCount> kPriority = {
    Category::kCompute, Category::kRecompute, Category::kOptimizer, Category::kTp, Category::kCp,
    Category::kEp,      Category::kPp,        Category::kDp,        Category::kOffload};

double& slot_of(Breakdown& b, Category c) {
  switch (c) {
    case Category::kCompute: return b.compute;
    case Category::kRecompute: return b.recompute;
    case Category::kOptimizer: return b.optimizer;
    case Category::kTp: return b.tp;
    case Category::kCp: return b.cp;
    case Category::kEp: return b.ep;
    case Category::kPp: return b.pp_comm;
    case Category::kDp: return b.dp;
    case Category::kOffload: return b.offload;
    case Category::kCount: break;
  }
  MOFASIM_UNREACHABLE("bad category");
}

}  // namespace

std::vector<Interval> stage_intervals(const InstanceTimes& times, int stage) {
  const Workload& w = times.workload();
  const ReplayOutput& r = times.replay();
  std::vector<Interval> out;
  for (TaskId t = 0; t < w.size(); ++t) {
    const bool own = w.stage(t) == stage;
    const bool received = w.kind(t) == TaskKind::kP2p && w.peer_stage(t) == stage;
    if (!own && !received) continue;
    const std::uint32_t inst = r.map.inst_of(w.scope(t), w.stage(t), 0);
    out.push_back({.start_ns = times.start_ns(t, inst), .end_ns = times.end_ns(t, inst), .task = t});
  }
  std::sort(out.begin(), out.end(), [](const Interval& a, const Interval& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.task < b.task;
  });
  return out;
}

Breakdown stage_breakdown(const InstanceTimes& times, int stage) {
  const Workload& w = times.workload();
  struct Edge {
    std::int64_t at;
    int delta;
    Category cat;
  };
  std::vector<Edge> edges;
  for (const Interval& iv : stage_intervals(times, stage)) {
    if (iv.end_ns <= iv.start_ns) continue;
    edges.push_back({iv.start_ns, +1, w.category(iv.task)});
    edges.push_back({iv.end_ns, -1, w.category(iv.task)});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
  Breakdown b;
  std::array<int, kCategoryCount> active{};
  std::int64_t prev = 0;
  std::size_t i = 0;
  auto attribute = [&](std::int64_t from, std::int64_t to) {
    if (to <= from) return;
    const double secs = static_cast<double>(to - from) * 1e-9;
    for (Category c : kPriority) {
      if (active[static_cast<std::size_t>(c)] > 0) {
        slot_of(b, c) += secs;
        return;
      }
    }
    b.pp_bubble += secs;
  };
  while (i < edges.size()) {
    const std::int64_t at = edges[i].at;
    attribute(prev, at);
    while (i < edges.size() && edges[i].at == at) {
      active[static_cast<std::size_t>(edges[i].cat)] += edges[i].delta;
      ++i;
    }
    prev = at;
  }
  attribute(prev, times.replay().step_ns);
  return b;
}

CriticalPath critical_path(const InstanceTimes& times) {
  CriticalPath out;
  const Workload& w = times.workload();
  const ReplayOutput& r = times.replay();
  const std::uint32_t n = w.size();

  // The instance that ends last (lowest id on ties).
  TaskId cur = kNone;
  std::uint32_t cur_inst = 0;
  std::int64_t best = -1;
  for (TaskId t = 0; t < n; ++t) {
    for (std::uint32_t i = 0; i < r.instances(t); ++i) {
      if (times.end_ns(t, i) > best) {
        best = times.end_ns(t, i);
        cur = t;
        cur_inst = i;
      }
    }
  }
  std::vector<std::uint32_t> scratch;
  while (cur != kNone) {
    TaskId next = kNone;
    std::uint32_t next_inst = 0;
    std::int64_t latest = -1;
    for (const TaskId u : times.predecessors(cur)) {
      times.pred_instances(u, cur, cur_inst, scratch);
      for (std::uint32_t ui : scratch) {
        const std::int64_t e = times.end_ns(u, ui);
        if (e > latest) {
          latest = e;
          next = u;
          next_inst = ui;
        }
      }
    }
    // An instance starts when its last predecessor ends (InstanceTimes), so the path has no gap
    // between a task and its releasing predecessor; only the first task can start after 0.
    const std::int64_t start = next == kNone ? 0 : latest;
    out.seconds[static_cast<std::size_t>(w.category(cur))] +=
        static_cast<double>(times.end_ns(cur, cur_inst) - start) * 1e-9;
    ++out.length;
    out.steps.push_back({.task = cur, .inst = cur_inst, .start_ns = start, .end_ns = times.end_ns(cur, cur_inst)});
    cur = next;
    cur_inst = next_inst;
  }
  std::reverse(out.steps.begin(), out.steps.end());
  return out;
}

}  // namespace mofasim::executor
