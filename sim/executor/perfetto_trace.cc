// Perfetto step trace: tracks per stage, slices per track in time order, memory counters, flows.
#include "sim/executor/perfetto_trace.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "sim/executor/critical_flows.h"
#include "sim/executor/instance_times.h"
#include "sim/executor/perfetto_links.h"
#include "sim/executor/perfetto_writer.h"
#include "sim/executor/trace_labels.h"

namespace mofasim::executor {
namespace {

void write_memory_counter(PerfettoWriter& out, std::uint64_t track, const Workload& w,
                          const std::vector<Interval>& intervals, int stage, const TraceFilter& filter) {
  struct Change {
    std::int64_t at;
    double delta;
  };
  std::vector<Change> changes;
  for (const Interval& iv : intervals) {
    if (w.stage(iv.task) != stage) continue;
    if (w.alloc_bytes(iv.task) > 0) changes.push_back({iv.start_ns, w.alloc_bytes(iv.task)});
    if (w.free_bytes(iv.task) > 0) changes.push_back({iv.end_ns, -w.free_bytes(iv.task)});
  }
  // Frees before allocations at one instant: the replay frees when a task ends, then starts the
  // tasks that end released.
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return a.at != b.at ? a.at < b.at : a.delta < b.delta;
  });
  double live = 0;
  bool opened = false;
  for (std::size_t i = 0; i < changes.size();) {
    const std::int64_t at = changes[i].at;
    if (!opened && at > filter.from_ns) {
      out.counter(track, filter.from_ns, live);  // the value the window starts with
      opened = true;
    }
    if (at >= filter.to_ns) break;
    while (i < changes.size() && changes[i].at == at) live += changes[i++].delta;
    if (at >= filter.from_ns) {
      out.counter(track, at, live);
      opened = true;
    }
  }
  if (!opened) out.counter(track, filter.from_ns, live);
}

}  // namespace

void write_perfetto_trace(std::ostream& os, const Workload& w, const ReplayOutput& r, const CriticalPath& path,
                          const TraceFilter& filter) {
  const std::vector<int> stages = traced_stages(filter, stage_ranks(r.map, w.stages()));
  const CriticalFlows flows(w, r, path, filter, stages);
  const InstanceTimes times(w, r);
  PerfettoWriter out(os);
  std::array<PerfettoWriter::Arg, 4> args{};
  args[0] = {.name = "task", .is_uint = true};
  args[1] = {.name = "chunk", .is_uint = true};
  args[2] = {.name = "work"};
  args[3] = {.name = "layer", .is_uint = true};
  std::string span_label;
  for (int s : stages) {
    const int rank = r.map.rank(s, 0);
    const int pid = rank + 1;  // pid 0 is reserved in Perfetto
    const std::uint64_t process =
        out.process_track(pid, "stage " + std::to_string(s) + " (rank " + std::to_string(rank) + ")");
    const std::vector<Interval> intervals = stage_intervals(times, s);

    // Track index: own streams 0 .. kStreamCount-1, then one pp_recv track per sending stage.
    std::vector<int> senders;
    for (const Interval& iv : intervals) {
      if (w.stage(iv.task) != s) senders.push_back(w.stage(iv.task));
    }
    std::sort(senders.begin(), senders.end());
    senders.erase(std::unique(senders.begin(), senders.end()), senders.end());
    auto track_of = [&](TaskId t) -> std::size_t {
      if (w.stage(t) == s) return static_cast<std::size_t>(w.stream(t));
      return static_cast<std::size_t>(kStreamCount) +
             static_cast<std::size_t>(std::lower_bound(senders.begin(), senders.end(), w.stage(t)) - senders.begin());
    };
    std::vector<std::vector<const Interval*>> by_track(static_cast<std::size_t>(kStreamCount) + senders.size());
    for (const Interval& iv : intervals) {
      if (filter.keeps_span(w, iv.task, iv.start_ns, iv.end_ns)) by_track[track_of(iv.task)].push_back(&iv);
    }
    for (std::size_t k = 0; k < by_track.size(); ++k) {
      if (by_track[k].empty()) continue;
      const bool own = k < static_cast<std::size_t>(kStreamCount);
      const std::string name = own ? std::string(stream_name(static_cast<Stream>(k)))
                                   : "pp_recv from stage " + std::to_string(senders[k - kStreamCount]);
      const std::uint64_t track =
          out.thread_track(process, pid, static_cast<std::int64_t>(pid) * 100 + static_cast<std::int64_t>(k) + 1, name);
      for (const Interval* iv : by_track[k]) {
        const TaskId t = iv->task;
        const auto [flow_out, flow_in] = own ? flows.of(t) : std::pair<std::uint64_t, std::uint64_t>{0, 0};
        args[0].uint_value = t;
        args[1].uint_value = static_cast<std::uint64_t>(w.chunk(t));
        args[2].double_value = w.work(t);
        args[3].uint_value = w.layer(t);
        const std::size_t arg_count = w.layer(t) != kNone ? 4 : 3;
        span_name_into(span_label, w, t, /*with_layer=*/false);
        out.begin(track, iv->start_ns, span_label, category_name(w.category(t)), std::span(args).first(arg_count), flow_out,
                  flow_in);
        out.end(track, iv->end_ns);
      }
    }
    write_memory_counter(out, out.byte_counter_track(process, "live activation bytes"), w, intervals, s, filter);
  }
  write_link_counters(out, r.link_loads, filter);
  out.finish();
}

}  // namespace mofasim::executor
