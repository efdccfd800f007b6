// Trace writers: Chrome JSON and the format dispatch.
#include "sim/executor/trace.h"

#include <fstream>
#include <stdexcept>

#include "sim/executor/critical_flows.h"
#include "sim/executor/perfetto_trace.h"
#include "sim/executor/trace_labels.h"

namespace mofasim::executor {

nlohmann::json chrome_trace(const Workload& w, const ReplayOutput& r, const TraceFilter& filter,
                            const CriticalPath* critical) {
  nlohmann::json events = nlohmann::json::array();
  const InstanceTimes times(w, r);
  const std::vector<int> stages = traced_stages(filter, stage_ranks(r.map, w.stages()));
  const CriticalFlows flows(w, r, critical != nullptr ? *critical : CriticalPath{}, filter, stages);
  for (int s : stages) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", s}, {"tid", 0},
                      {"args", {{"name", "stage " + std::to_string(s) + " (rank " + std::to_string(r.map.rank(s, 0)) + ")"}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", s}, {"tid", 0}, {"args", {{"sort_index", s}}}});
    for (int st = 0; st < kStreamCount; ++st) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", s}, {"tid", st},
                        {"args", {{"name", std::string(stream_name(static_cast<Stream>(st)))}}}});
    }
    for (const Interval& iv : stage_intervals(times, s)) {
      const TaskId t = iv.task;
      if (!filter.keeps_span(w, t, iv.start_ns, iv.end_ns)) continue;
      nlohmann::json args = {{"op", w.op_name(w.op(t))},
                             {"phase", std::string(phase_name(w.phase(t)))},
                             {"category", std::string(category_name(w.category(t)))},
                             {"chunk", w.chunk(t)},
                             {"work", w.work(t)}};
      if (w.microbatch(t) != kNone) args["microbatch"] = w.microbatch(t);
      if (w.layer(t) != kNone) args["layer"] = w.layer(t);
      if (w.kind(t) == TaskKind::kP2p) args["to_stage"] = w.peer_stage(t);
      events.push_back({{"ph", "X"},
                        {"name", span_name(w, t)},
                        {"cat", std::string(category_name(w.category(t)))},
                        {"cname", std::string(chrome_colour(w, t))},
                        {"pid", s},
                        {"tid", static_cast<int>(w.stream(t))},
                        {"ts", static_cast<double>(iv.start_ns) * 1e-3},
                        {"dur", static_cast<double>(iv.end_ns - iv.start_ns) * 1e-3},
                        {"args", args}});
      if (w.stage(t) != s) continue;  // the path runs through the sender's copy of a PP transfer
      const auto [flow_out, flow_in] = flows.of(t);
      const double ts = static_cast<double>(iv.start_ns) * 1e-3;
      const int tid = static_cast<int>(w.stream(t));
      if (flow_in != 0) {
        events.push_back({{"ph", "f"}, {"bp", "e"}, {"id", flow_in}, {"name", "critical path"},
                          {"cat", "critical_path"}, {"pid", s}, {"tid", tid}, {"ts", ts}});
      }
      if (flow_out != 0) {
        events.push_back({{"ph", "s"}, {"id", flow_out}, {"name", "critical path"}, {"cat", "critical_path"},
                          {"pid", s}, {"tid", tid}, {"ts", ts}});
      }
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(const std::string& path, const Workload& w, const ReplayOutput& r, const TraceFilter& filter,
                        const CriticalPath* critical) {
  const nlohmann::json trace = chrome_trace(w, r, filter, critical);
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot open trace file " + path + " for writing");
  f << trace.dump();
  if (!f) throw std::runtime_error("failed writing trace file " + path);
}

void write_trace(const std::string& path, const Workload& w, const ReplayOutput& r, const CriticalPath& path_tasks,
                 const TraceFilter& filter) {
  if (path.ends_with(".json")) {
    write_chrome_trace(path, w, r, filter, &path_tasks);
    return;
  }
  // Validate the filter before the file is created, so a bad filter leaves no empty file behind.
  (void)traced_stages(filter, stage_ranks(r.map, w.stages()));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot open trace file " + path + " for writing");
  try {
    write_perfetto_trace(f, w, r, path_tasks, filter);
  } catch (const std::runtime_error&) {
    throw std::runtime_error("failed writing trace file " + path);
  }
}

}  // namespace mofasim::executor
