// Chrome trace writer.
#include "sim/executor/trace.h"

#include <fstream>
#include <stdexcept>

#include "sim/executor/analyze.h"

namespace mofasim::executor {
namespace {

std::string event_name(const Workload& w, TaskId t) {
  std::string s(phase_name(w.phase(t)));
  if (w.microbatch(t) != kNone) s += " mb " + std::to_string(w.microbatch(t));
  if (w.layer(t) != kNone) s += " L" + std::to_string(w.layer(t));
  s += ' ';
  s += w.op_name(w.op(t));
  return s;
}

}  // namespace

nlohmann::json chrome_trace(const Workload& w, const ReplayOutput& r) {
  nlohmann::json events = nlohmann::json::array();
  const InstanceTimes times(w, r);
  for (int s = 0; s < w.stages(); ++s) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", s}, {"tid", 0},
                      {"args", {{"name", "stage " + std::to_string(s) + " (rank " + std::to_string(r.map.rank(s, 0)) + ")"}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", s}, {"tid", 0}, {"args", {{"sort_index", s}}}});
    for (int st = 0; st < kStreamCount; ++st) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", s}, {"tid", st},
                        {"args", {{"name", std::string(stream_name(static_cast<Stream>(st)))}}}});
    }
    for (const Interval& iv : stage_intervals(times, s)) {
      const TaskId t = iv.task;
      nlohmann::json args = {{"op", w.op_name(w.op(t))},
                             {"phase", std::string(phase_name(w.phase(t)))},
                             {"category", std::string(category_name(w.category(t)))},
                             {"chunk", w.chunk(t)},
                             {"work", w.work(t)}};
      if (w.microbatch(t) != kNone) args["microbatch"] = w.microbatch(t);
      if (w.layer(t) != kNone) args["layer"] = w.layer(t);
      if (w.kind(t) == TaskKind::kP2p) args["to_stage"] = w.peer_stage(t);
      events.push_back({{"ph", "X"},
                        {"name", event_name(w, t)},
                        {"cat", std::string(category_name(w.category(t)))},
                        {"pid", s},
                        {"tid", static_cast<int>(w.stream(t))},
                        {"ts", static_cast<double>(iv.start_ns) * 1e-3},
                        {"dur", static_cast<double>(iv.end_ns - iv.start_ns) * 1e-3},
                        {"args", args}});
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(const std::string& path, const Workload& w, const ReplayOutput& r) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot open trace file " + path + " for writing");
  f << chrome_trace(w, r).dump();
  if (!f) throw std::runtime_error("failed writing trace file " + path);
}

}  // namespace mofasim::executor
