// Breakdown sweep over one stage's intervals and the critical-path walk.
#include "sim/executor/analyze.h"

#include <algorithm>

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

std::vector<Interval> stage_intervals(const Workload& w, const ReplayOutput& r, int stage) {
  std::vector<Interval> out;
  for (TaskId t = 0; t < w.size(); ++t) {
    const bool own = w.stage(t) == stage;
    const bool received = w.kind(t) == TaskKind::kP2p && w.peer_stage(t) == stage;
    if (!own && !received) continue;
    const std::uint32_t inst = r.map.inst_of(w.scope(t), w.stage(t), 0);
    const std::uint64_t gi = r.base[t] + inst;
    if (r.end_ns[gi] < 0) continue;
    out.push_back({.start_ns = r.start_ns[gi], .end_ns = r.end_ns[gi], .task = t});
  }
  std::sort(out.begin(), out.end(), [](const Interval& a, const Interval& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.task < b.task;
  });
  return out;
}

Breakdown stage_breakdown(const Workload& w, const ReplayOutput& r, int stage) {
  struct Edge {
    std::int64_t at;
    int delta;
    Category cat;
  };
  std::vector<Edge> edges;
  for (const Interval& iv : stage_intervals(w, r, stage)) {
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
  attribute(prev, r.step_ns);
  return b;
}

CriticalPath critical_path(const Workload& w, const ReplayOutput& r) {
  CriticalPath out;
  const std::uint32_t n = w.size();
  std::vector<std::uint32_t> begin(n + 1, 0);
  const auto from = w.edge_sources();
  const auto to = w.edge_targets();
  for (TaskId v : to) ++begin[v + 1];
  for (std::uint32_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
  std::vector<TaskId> preds(from.size());
  std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
  for (std::size_t e = 0; e < from.size(); ++e) preds[fill[to[e]]++] = from[e];

  // The instance that ends last (lowest id on ties).
  TaskId cur = kNone;
  std::uint32_t cur_inst = 0;
  std::int64_t best = -1;
  for (TaskId t = 0; t < n; ++t) {
    for (std::uint32_t i = 0; i < r.instances(t); ++i) {
      if (r.end_ns[r.base[t] + i] > best) {
        best = r.end_ns[r.base[t] + i];
        cur = t;
        cur_inst = i;
      }
    }
  }
  std::vector<std::uint32_t> scratch;
  while (cur != kNone) {
    const std::uint64_t gi = r.base[cur] + cur_inst;
    out.seconds[static_cast<std::size_t>(w.category(cur))] += static_cast<double>(r.end_ns[gi] - r.start_ns[gi]) * 1e-9;
    ++out.length;
    TaskId next = kNone;
    std::uint32_t next_inst = 0;
    std::int64_t latest = -1;
    for (std::uint32_t k = begin[cur]; k < begin[cur + 1]; ++k) {
      const TaskId u = preds[k];
      scratch.clear();
      if (w.scope(u) == w.scope(cur) && (w.scope(u) == Scope::kRank || w.stage(u) == w.stage(cur))) {
        scratch.push_back(cur_inst);
      } else {
        for (std::uint32_t g : r.map.members(w.scope(cur), w.stage(cur), cur_inst)) {
          scratch.push_back(r.map.inst_of(w.scope(u), w.stage(u), static_cast<int>(g)));
        }
      }
      for (std::uint32_t ui : scratch) {
        const std::int64_t e = r.end_ns[r.base[u] + ui];
        if (e > latest) {
          latest = e;
          next = u;
          next_inst = ui;
        }
      }
    }
    const std::int64_t gap = r.start_ns[gi] - (next == kNone ? 0 : latest);
    if (gap > 0) out.wait_seconds += static_cast<double>(gap) * 1e-9;
    cur = next;
    cur_inst = next_inst;
  }
  return out;
}

}  // namespace mofasim::executor
