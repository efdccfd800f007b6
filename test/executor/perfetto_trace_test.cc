// The Perfetto trace (simulate --trace FILE.pftrace) read back with the vendored protos: one
// process per stage with thread tracks per stream, balanced non-overlapping slices, resolvable
// interned names, the same spans as the Chrome JSON, memory counters peaking at the tracked
// activation, the critical path as a chain of flows and as a gap-free list, and the filters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/executor/simulate_step.h"
#include "sim/executor/trace_filter.h"
#include "test/executor/perfetto_trace_decode.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

using testing::decode_pftrace;
using testing::DecodedTrace;

// 4 stages x TP 2 (ranks tp-major: stage s's replica-0 rank is 2s), 8 micro-batches, 1F1B.
SimulationInput four_stage_input() {
  SimulationInput in;
  in.model = testing::tiny_model();
  in.hardware = testing::tiny_gpu();
  in.parallel = {.tp = 2, .pp = 4, .dp = 1, .micro_batch = 1, .global_batch = 8, .sequence_parallel = true,
                 .schedule = model::ScheduleKind::k1F1B};
  in.topology = {.gpus = 8, .gpus_per_node = 4, .intra_node = {.bandwidth = 200e9, .latency = 2e-6},
                 .inter_node = {.bandwidth = 25e9, .latency = 5e-6}};
  return in;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("mofasim_" + std::to_string(::getpid()) + "_" + name)).string();
}

struct Traced {
  StepResult result;
  DecodedTrace trace;
};

// Without link counters: these tests count the stages' tracks; perfetto_links_test.cc has the links.
Traced simulate_traced(const SimulationInput& in, TraceFilter filter, const std::string& name) {
  const std::string path = temp_path(name);
  filter.link_kinds = 0;
  Traced t;
  t.result = simulate_step(in, {.trace_path = path, .trace_filter = &filter, .critical_path_tasks = true});
  t.trace = decode_pftrace(path);
  std::remove(path.c_str());
  return t;
}

// pid of every slice's process.
std::set<int> slice_pids(const DecodedTrace& tr) {
  std::set<int> pids;
  for (const auto& s : tr.slices) pids.insert(tr.tracks.at(tr.process_of(s.track)).pid);
  return pids;
}

TEST(ExecutorPerfettoTrace, HasAProcessPerStageAThreadPerStreamAndBalancedSlices) {
  const Traced t = simulate_traced(four_stage_input(), {}, "structure.pftrace");
  const DecodedTrace& tr = t.trace;
  ASSERT_TRUE(tr.faults.empty()) << tr.faults.front();
  EXPECT_TRUE(tr.cleared_first);
  ASSERT_GT(tr.slices.size(), 200u);
  std::map<int, std::string> processes;
  std::set<std::pair<std::uint64_t, std::string>> threads;
  int counters = 0;
  for (const auto& [uuid, track] : tr.tracks) {
    if (track.is_process) processes[track.pid] = track.name;
    if (!track.is_process && !track.is_counter) {
      EXPECT_TRUE(tr.tracks.at(track.parent).is_process);
      EXPECT_EQ(track.pid, tr.tracks.at(track.parent).pid);
      EXPECT_TRUE(threads.emplace(track.parent, track.name).second) << "two tracks named " << track.name;
    }
    if (track.is_counter) {
      ++counters;
      EXPECT_EQ(track.name, "live activation bytes");
      EXPECT_EQ(track.unit, perfetto::CounterDescriptor::UNIT_SIZE_BYTES);
    }
  }
  // pid = replica-0 rank + 1, rank = 2 * stage (TP 2 first in the rank order).
  EXPECT_EQ(processes, (std::map<int, std::string>{{1, "stage 0 (rank 0)"},
                                                     {3, "stage 1 (rank 2)"},
                                                     {5, "stage 2 (rank 4)"},
                                                     {7, "stage 3 (rank 6)"}}));
  EXPECT_EQ(counters, 4);
  std::set<std::string> thread_names;
  for (const auto& th : threads) thread_names.insert(th.second);
  for (const char* n : {"compute", "tp_comm", "pp_comm", "pp_recv from stage 0", "pp_recv from stage 3"}) {
    EXPECT_TRUE(thread_names.contains(n)) << n;
  }
  // Every slice closed, on a thread track, with a category, inside the step.
  const auto step_ns = static_cast<std::int64_t>(std::llround(t.result.step_time_s * 1e9));
  for (const auto& s : tr.slices) {
    EXPECT_FALSE(tr.tracks.at(s.track).is_process || tr.tracks.at(s.track).is_counter);
    EXPECT_FALSE(s.category.empty());
    EXPECT_GE(s.begin_ns, 0);
    EXPECT_LE(s.end_ns, step_ns);
  }
}

TEST(ExecutorPerfettoTrace, ShowsTheChromeTracesSpansWithPhaseNamesAndLayerArguments) {
  const SimulationInput in = four_stage_input();
  const Traced t = simulate_traced(in, {}, "same.pftrace");
  const std::string json_path = temp_path("same.json");
  (void)simulate_step(in, {.trace_path = json_path});
  std::ifstream f(json_path);
  const nlohmann::json j = nlohmann::json::parse(f);
  std::remove(json_path.c_str());
  // (stage, start ns, end ns, name without the layer) of every span, from both files.
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::string>;
  std::multiset<Key> chrome;
  std::multiset<std::uint64_t> flow_starts, flow_ends;
  std::map<std::string, std::set<std::string>> colours_by_phase;
  const std::regex layer(" L[0-9]+");
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "s") flow_starts.insert(e["id"].get<std::uint64_t>());
    if (e["ph"] == "f") flow_ends.insert(e["id"].get<std::uint64_t>());
    if (e["ph"] != "X") continue;
    const auto start = std::llround(e["ts"].get<double>() * 1e3);
    const auto end = start + std::llround(e["dur"].get<double>() * 1e3);
    chrome.emplace(e["pid"].get<int>(), start, end, std::regex_replace(e["name"].get<std::string>(), layer, ""));
    if (e["cat"] == "compute") colours_by_phase[e["args"]["phase"]].insert(e["cname"].get<std::string>());
  }
  std::multiset<Key> perfetto;
  std::set<std::string> phases;
  for (const auto& s : t.trace.slices) {
    const int stage = (t.trace.tracks.at(t.trace.process_of(s.track)).pid - 1) / 2;
    perfetto.emplace(stage, s.begin_ns, s.end_ns, s.name);
    phases.insert(s.name.substr(0, s.name.find(' ')));
    if (s.category == "compute" && s.name.find("attention") != std::string::npos) {
      EXPECT_TRUE(s.args.contains("layer"));
    }
    EXPECT_TRUE(s.args.contains("task") && s.args.contains("work"));
  }
  // The Chrome trace draws the same critical-path flows: ids 1 .. n-1, each started and ended once.
  std::multiset<std::uint64_t> ids;
  for (std::uint64_t id = 1; id < t.result.critical_path_tasks.size(); ++id) ids.insert(id);
  EXPECT_EQ(flow_starts, ids);
  EXPECT_EQ(flow_ends, ids);
  EXPECT_EQ(perfetto.size(), chrome.size());
  EXPECT_TRUE(perfetto == chrome);
  EXPECT_TRUE(phases.contains("F") && phases.contains("B") && phases.contains("step")) << phases.size();
  // Forward and backward compute get one, different, Chrome colour each.
  ASSERT_EQ(colours_by_phase["F"].size(), 1u);
  ASSERT_EQ(colours_by_phase["B"].size(), 1u);
  EXPECT_NE(*colours_by_phase["F"].begin(), *colours_by_phase["B"].begin());
}

TEST(ExecutorPerfettoTrace, MemoryCountersPeakAtTheTrackedActivation) {
  const Traced t = simulate_traced(four_stage_input(), {}, "memory.pftrace");
  for (const auto& [uuid, samples] : t.trace.counters) {
    const int stage = (t.trace.tracks.at(t.trace.process_of(uuid)).pid - 1) / 2;
    double peak = 0;
    std::int64_t prev = -1;
    for (const auto& [ts, v] : samples) {
      EXPECT_GT(ts, prev);  // one sample per instant, in time order
      prev = ts;
      peak = std::max(peak, v);
    }
    const double tracked = t.result.memory[static_cast<std::size_t>(stage)].peak_activation_bytes;
    EXPECT_GT(tracked, 0);
    EXPECT_NEAR(peak, tracked, tracked * 1e-12) << "stage " << stage;
    EXPECT_NEAR(samples.back().second, 0, tracked * 1e-9);  // everything freed by the step's end
  }
  EXPECT_EQ(t.trace.counters.size(), 4u);
}

TEST(ExecutorPerfettoTrace, CriticalPathIsAGapFreeListAndAChainOfFlows) {
  const Traced t = simulate_traced(four_stage_input(), {}, "critical.pftrace");
  const auto& path = t.result.critical_path_tasks;
  ASSERT_GT(path.size(), 10u);
  EXPECT_DOUBLE_EQ(path.front().start_s, 0);
  double sum = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    sum += path[i].duration_s;
    if (i > 0) {
      EXPECT_NEAR(path[i].start_s, path[i - 1].start_s + path[i - 1].duration_s, 1e-12) << i;
    }
    EXPECT_EQ(path[i].rank, 2 * path[i].stage);  // folded: replica 0
  }
  EXPECT_NEAR(sum, t.result.step_time_s, 1e-12);
  const nlohmann::json j = to_json(t.result);
  ASSERT_EQ(j["critical_path_tasks"].size(), path.size());
  EXPECT_EQ(j["critical_path_tasks"][0]["task"], path[0].name);

  // Flow k leaves the k-th critical slice and ends at the (k+1)-th: every id once out, once in,
  // the receiving slice starting where the sending one ends; folded, every critical task is shown.
  std::map<std::uint64_t, const testing::DecodedSlice*> out, in;
  for (const auto& s : t.trace.slices) {
    for (auto id : s.flow_out) EXPECT_TRUE(out.emplace(id, &s).second);
    for (auto id : s.flow_in) EXPECT_TRUE(in.emplace(id, &s).second);
  }
  ASSERT_EQ(out.size(), path.size() - 1);
  ASSERT_EQ(in.size(), path.size() - 1);
  for (std::uint64_t id = 1; id < path.size(); ++id) {
    ASSERT_TRUE(out.contains(id) && in.contains(id)) << id;
    EXPECT_EQ(out[id]->end_ns, in[id]->begin_ns) << id;
    EXPECT_EQ(in[id]->name, std::regex_replace(path[id].name, std::regex(" L[0-9]+"), ""));
    if (id + 1 < path.size()) {
      EXPECT_EQ(in[id]->flow_out, std::vector<std::uint64_t>{id + 1});
    }
  }
}

TEST(ExecutorPerfettoTrace, FullFidelityShowsReplicaZeroAndLinksItsCriticalTasksInTimeOrder) {
  SimulationInput in = four_stage_input();
  in.parallel.tp = 1;
  in.parallel.dp = 2;  // two pipelines: the trace shows replica 0 (ranks 0, 2, 4, 6 under tp-cp-ep-dp-pp)
  const std::string path = temp_path("full.pftrace");
  const StepResult r = simulate_step(in, {.fidelity = Fidelity::kFull, .trace_path = path, .critical_path_tasks = true});
  const DecodedTrace tr = decode_pftrace(path);
  std::remove(path.c_str());
  ASSERT_TRUE(tr.faults.empty()) << tr.faults.front();
  EXPECT_EQ(slice_pids(tr), (std::set<int>{1, 3, 5, 7}));
  std::map<std::uint64_t, const testing::DecodedSlice*> out, in_slices;
  for (const auto& s : tr.slices) {
    for (auto id : s.flow_out) out.emplace(id, &s);
    for (auto id : s.flow_in) in_slices.emplace(id, &s);
  }
  ASSERT_FALSE(out.empty());
  EXPECT_LT(out.size(), r.critical_path_tasks.size());
  for (const auto& [id, from] : out) {
    ASSERT_TRUE(in_slices.contains(id)) << id;
    EXPECT_LE(from->end_ns, in_slices[id]->begin_ns) << id;
  }
}

TEST(ExecutorPerfettoTrace, FiltersKeepOnlyWhatTheySay) {
  const SimulationInput in = four_stage_input();
  const Traced all = simulate_traced(in, {}, "all.pftrace");

  const Traced stage = simulate_traced(in, {.stages = {1, 3}}, "stages.pftrace");
  EXPECT_EQ(slice_pids(stage.trace), (std::set<int>{3, 7}));
  const Traced rank = simulate_traced(in, {.ranks = {4}}, "ranks.pftrace");
  EXPECT_EQ(slice_pids(rank.trace), (std::set<int>{5}));
  EXPECT_EQ(rank.trace.counters.size(), 1u);

  const std::int64_t step_ns = std::llround(all.result.step_time_s * 1e9);
  TraceFilter window;
  window.from_ns = step_ns / 3;
  window.to_ns = step_ns / 2;
  const Traced win = simulate_traced(in, window, "window.pftrace");
  std::size_t overlapping = 0;
  for (const auto& s : all.trace.slices) overlapping += s.end_ns > window.from_ns && s.begin_ns < window.to_ns ? 1 : 0;
  EXPECT_EQ(win.trace.slices.size(), overlapping);
  EXPECT_LT(win.trace.slices.size(), all.trace.slices.size());
  for (const auto& [uuid, samples] : win.trace.counters) {
    EXPECT_EQ(samples.front().first, window.from_ns);
    for (const auto& sample : samples) EXPECT_LT(sample.first, window.to_ns);
  }

  const Traced mb = simulate_traced(in, {.microbatch = 3}, "microbatch.pftrace");
  ASSERT_FALSE(mb.trace.slices.empty());
  std::size_t of_mb3 = 0;
  for (const auto& s : all.trace.slices) of_mb3 += s.name.find(" mb 3 ") != std::string::npos ? 1 : 0;
  EXPECT_EQ(mb.trace.slices.size(), of_mb3);
  for (const auto& s : mb.trace.slices) EXPECT_NE(s.name.find(" mb 3 "), std::string::npos) << s.name;
}

TEST(ExecutorPerfettoTrace, AFilterNamingWhatTheStepHasNotFailsBeforeTheReplay) {
  const SimulationInput in = four_stage_input();
  const std::string path = temp_path("bad.pftrace");
  try {
    const TraceFilter filter{.stages = {2, 9}};
    (void)simulate_step(in, {.trace_path = path, .trace_filter = &filter});
    FAIL() << "no error";
  } catch (const TraceFilterError& e) {
    EXPECT_EQ(e.option(), "stages");
    EXPECT_STREQ(e.what(), "stage 9 does not exist (stages are 0-3)");
  }
  try {
    const TraceFilter filter{.ranks = {3}};
    (void)simulate_step(in, {.trace_path = path, .trace_filter = &filter});
    FAIL() << "no error";
  } catch (const TraceFilterError& e) {
    EXPECT_EQ(e.option(), "ranks");
    EXPECT_STREQ(e.what(), "rank 3 is not traced (the trace shows the replica-0 rank of each stage: 0,2,4,6)");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ExecutorTraceFilter, ParsesIndexListsAndWindows) {
  EXPECT_EQ(parse_index_list("0,2,5-7"), (std::vector<int>{0, 2, 5, 6, 7}));
  EXPECT_EQ(parse_index_list("3,1,3"), (std::vector<int>{1, 3}));
  EXPECT_EQ(parse_time_window("120ms:0.5s"), (std::pair<std::int64_t, std::int64_t>{120'000'000, 500'000'000}));
  EXPECT_EQ(parse_time_window(":1.5us").second, 1500);
  EXPECT_EQ(parse_time_window("2ms:").first, 2'000'000);
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { parse_index_list("1,,2"); }),
            "expected a list of non-negative integers and ranges like 0,2,5-7, got '1,,2' ('' is not an index)");
  EXPECT_EQ(message([] { parse_index_list("-1"); }),
            "expected a list of non-negative integers and ranges like 0,2,5-7, got '-1' ('' is not an index)");
  EXPECT_EQ(message([] { parse_index_list("5-2"); }), "range '5-2' in '5-2' runs backwards");
  EXPECT_EQ(message([] { parse_time_window("10:20ms"); }),
            "expected START:END with durations like 120ms:0.5s (units ns, us, ms, s), got '10:20ms' ('10' is not a "
            "duration)");
  EXPECT_EQ(message([] { parse_time_window("5ms:1ms"); }), "END must be after START, got '5ms:1ms'");
  EXPECT_EQ(message([] { parse_time_window("5ms"); }),
            "expected START:END with durations like 120ms:0.5s, got '5ms'");
  EXPECT_EQ(message([] { parse_time_window("nanms:1s"); }),
            "expected START:END with durations like 120ms:0.5s (units ns, us, ms, s), got 'nanms:1s' ('nanms' is not a "
            "duration)");
}

}  // namespace
}  // namespace mofasim::executor
