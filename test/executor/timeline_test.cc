// The protobuf timeline (timeline_writer.h): written through simulate_step, parsed back, it holds
// the Chrome trace's task instances at the trace's times, sorted, inside the step, one task at a
// time per stream, with the StepResult's numbers; on a closed-form 1F1B pipeline its spans add up
// to the formula.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "proto/timeline.pb.h"
#include "schedules/factory.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

using testing::free_topology;
using testing::tiny_gpu;
using testing::tiny_model;
using testing::uniform_plan;

proto::Timeline read_timeline(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  proto::Timeline tl;
  EXPECT_TRUE(f.good()) << path;
  EXPECT_TRUE(tl.ParseFromIstream(&f)) << path;
  return tl;
}

// The invariants every timeline keeps, whatever the plan.
void expect_well_formed(const proto::Timeline& tl) {
  ASSERT_GT(tl.spans_size(), 0);
  for (int i = 0; i < tl.processes_size(); ++i) EXPECT_EQ(tl.processes(i).id(), static_cast<std::uint32_t>(i));
  for (int i = 0; i < tl.streams_size(); ++i) {
    EXPECT_EQ(tl.streams(i).id(), static_cast<std::uint32_t>(i));
    EXPECT_LT(tl.streams(i).process_id(), static_cast<std::uint32_t>(tl.processes_size()));
  }
  // Sorted by start; every span inside [0, step].
  std::int64_t last_end = 0;
  for (int i = 0; i < tl.spans_size(); ++i) {
    const proto::Span& s = tl.spans(i);
    if (i > 0) {
      EXPECT_LE(tl.spans(i - 1).start_ns(), s.start_ns()) << "span " << i;
    }
    EXPECT_GE(s.start_ns(), 0);
    EXPECT_GE(s.duration_ns(), 0);
    EXPECT_LE(s.start_ns() + s.duration_ns(), tl.step_ns()) << s.op();
    last_end = std::max(last_end, s.start_ns() + s.duration_ns());
    ASSERT_LT(s.stream_id(), static_cast<std::uint32_t>(tl.streams_size()));
    const proto::Stream& st = tl.streams(static_cast<int>(s.stream_id()));
    EXPECT_EQ(st.process_id(), s.process_id());
    if (st.kind() == proto::Stream::PP_RECV) {
      // Shown on its receiver: the receiver is this process, the sender names the stream.
      EXPECT_EQ(s.peer_process_id(), s.process_id());
      EXPECT_NE(st.peer_process_id(), s.process_id());
    }
  }
  // The step is the last task's end.
  EXPECT_EQ(last_end, tl.step_ns());
  // A stream runs one task at a time: in start order, each span starts after the previous ends.
  std::map<std::uint32_t, std::int64_t> stream_free_at;
  for (const proto::Span& s : tl.spans()) {
    auto [it, fresh] = stream_free_at.try_emplace(s.stream_id(), 0);
    EXPECT_GE(s.start_ns(), it->second) << "overlap on stream "
                                        << tl.streams(static_cast<int>(s.stream_id())).name() << " of process "
                                        << s.process_id() << " at " << s.start_ns() << " ns (" << s.op() << ")";
    it->second = s.start_ns() + s.duration_ns();
  }
}

// (process, start ns, duration ns, op) of every trace complete event, and of every timeline span.
using SpanKey = std::tuple<int, std::int64_t, std::int64_t, std::string>;

std::vector<SpanKey> trace_keys(const nlohmann::json& trace) {
  std::vector<SpanKey> keys;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    // The trace writes ts/dur as ns * 1e-3 microseconds; rounding back recovers the integers.
    keys.emplace_back(e["pid"].get<int>(), std::llround(e["ts"].get<double>() * 1e3),
                      std::llround(e["dur"].get<double>() * 1e3), e["args"]["op"].get<std::string>());
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<SpanKey> timeline_keys(const proto::Timeline& tl) {
  std::vector<SpanKey> keys;
  for (const proto::Span& s : tl.spans()) {
    keys.emplace_back(static_cast<int>(s.process_id()), s.start_ns(), s.duration_ns(), s.op());
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

void expect_summary_equals(const proto::StepSummary& s, const StepResult& r) {
  EXPECT_EQ(s.step_time_s(), r.step_time_s);
  EXPECT_EQ(s.gpus(), r.gpus);
  EXPECT_EQ(s.simulated_ranks(), r.simulated_ranks);
  EXPECT_EQ(s.critical_stage(), r.critical_stage);
  EXPECT_EQ(s.breakdown().compute_s(), r.breakdown.compute);
  EXPECT_EQ(s.breakdown().recompute_s(), r.breakdown.recompute);
  EXPECT_EQ(s.breakdown().optimizer_s(), r.breakdown.optimizer);
  EXPECT_EQ(s.breakdown().tp_s(), r.breakdown.tp);
  EXPECT_EQ(s.breakdown().cp_s(), r.breakdown.cp);
  EXPECT_EQ(s.breakdown().ep_s(), r.breakdown.ep);
  EXPECT_EQ(s.breakdown().pp_comm_s(), r.breakdown.pp_comm);
  EXPECT_EQ(s.breakdown().dp_s(), r.breakdown.dp);
  EXPECT_EQ(s.breakdown().offload_s(), r.breakdown.offload);
  EXPECT_EQ(s.breakdown().pp_bubble_s(), r.breakdown.pp_bubble);
  EXPECT_EQ(s.tflops_per_gpu(), r.tflops_per_gpu);
  EXPECT_EQ(s.mfu(), r.mfu);
  EXPECT_EQ(s.hfu(), r.hfu);
  EXPECT_EQ(s.tokens_per_s(), r.tokens_per_s);
  EXPECT_EQ(s.peak_memory_bytes(), r.peak_memory_bytes);
  ASSERT_EQ(s.memory_size(), static_cast<int>(r.memory.size()));
  for (std::size_t i = 0; i < r.memory.size(); ++i) {
    const proto::StepSummary::StageMemory& m = s.memory(static_cast<int>(i));
    EXPECT_EQ(m.stage(), r.memory[i].stage);
    EXPECT_EQ(m.static_bytes(), r.memory[i].static_bytes);
    EXPECT_EQ(m.peak_activation_bytes(), r.memory[i].peak_activation_bytes);
    EXPECT_EQ(m.model_activation_bytes(), r.memory[i].model_activation_bytes);
    EXPECT_EQ(m.allocated_bytes(), r.memory[i].allocated_bytes);
    EXPECT_EQ(m.fragmentation_bytes(), r.memory[i].fragmentation_bytes);
    EXPECT_EQ(m.cuda_context_bytes(), r.memory[i].cuda_context_bytes);
    EXPECT_EQ(m.reserved_bytes(), r.memory[i].reserved_bytes);
    EXPECT_EQ(m.peak_bytes(), r.memory[i].peak_bytes);
    EXPECT_EQ(m.capacity_bytes(), r.memory[i].capacity_bytes);
    EXPECT_EQ(m.fits(), r.memory[i].fits());
  }
  EXPECT_EQ(s.events(), r.events);
  EXPECT_EQ(s.tasks(), r.tasks);
  EXPECT_EQ(s.instances(), r.instances);
}

struct RealCase {
  const char* name;
  model::ScheduleKind schedule;
  int layers;
  int pp;
  int vpp;
  Fidelity fidelity;
  bool cpu_optimizer;
};

void PrintTo(const RealCase& c, std::ostream* os) { *os << c.name; }

class ExecutorTimelineReal : public ::testing::TestWithParam<RealCase> {};

// The tiny model (with `layers` layers) on tp 2 x pp x dp 2 GPUs, TP/PP/DP communication on real links, distributed
// optimizer (or the CPU optimizer with its copies on the host streams).
SimulationInput real_input(const RealCase& c) {
  SimulationInput in;
  in.model = tiny_model();
  in.model.num_layers = c.layers;
  in.hardware = tiny_gpu();
  in.parallel = {.tp = 2, .pp = c.pp, .vpp = c.vpp, .dp = 2, .micro_batch = 1, .global_batch = 8,
                 .sequence_parallel = true, .schedule = c.schedule};
  in.features.distributed_optimizer = true;
  in.features.dp_overlap.enabled = true;
  if (c.cpu_optimizer) in.features.optimizer_placement = model::OptimizerPlacement::kCpu;
  in.topology = {.gpus = 4 * c.pp, .gpus_per_node = 4, .intra_node = {.bandwidth = 200e9, .latency = 2e-6},
                 .inter_node = {.bandwidth = 25e9, .latency = 5e-6}};
  return in;
}

TEST_P(ExecutorTimelineReal, MatchesTheTraceAndTheStepResult) {
  const RealCase& c = GetParam();
  const std::string base = std::string(MOFASIM_BINARY_DIR) + "/executor_timeline_" + c.name;
  const std::string trace_path = base + ".json";
  const std::string timeline_path = base + ".pb";
  const StepResult r = simulate_step(real_input(c), {.fidelity = c.fidelity, .trace_path = trace_path,
                                                     .timeline_path = timeline_path, .scenario_name = c.name});
  const proto::Timeline tl = read_timeline(timeline_path);
  std::ifstream tf(trace_path);
  const nlohmann::json trace = nlohmann::json::parse(tf);
  std::remove(trace_path.c_str());
  std::remove(timeline_path.c_str());

  EXPECT_EQ(tl.scenario(), c.name);
  EXPECT_EQ(tl.fidelity(), c.fidelity == Fidelity::kFull ? proto::Timeline::FULL : proto::Timeline::FOLDED);
  // step_time_s is step_ns * 1e-9 (simulate_plan), so the integer step must give it back exactly.
  EXPECT_EQ(static_cast<double>(tl.step_ns()) * 1e-9, r.step_time_s);
  ASSERT_EQ(tl.processes_size(), c.pp);  // one per stage
  expect_well_formed(tl);
  // Same task instances at the same times as the trace, one span per complete event.
  const std::vector<SpanKey> from_trace = trace_keys(trace);
  EXPECT_EQ(static_cast<std::size_t>(tl.spans_size()), from_trace.size());
  EXPECT_EQ(timeline_keys(tl), from_trace);
  expect_summary_equals(tl.summary(), r);
  // Every stage but the first receives activations, every stage but the last gradients: the
  // receiving streams are the stage's pipeline neighbours (with interleaving, stage 0 also
  // receives from the last stage and the last from stage 0: the chunk wrap-around).
  std::map<std::uint32_t, std::vector<std::uint32_t>> senders;
  for (const proto::Stream& st : tl.streams()) {
    if (st.kind() == proto::Stream::PP_RECV) senders[st.process_id()].push_back(st.peer_process_id());
  }
  const auto last = static_cast<std::uint32_t>(c.pp - 1);
  if (c.vpp == 1 && c.schedule != model::ScheduleKind::kDualPipe) {
    EXPECT_EQ(senders[0], std::vector<std::uint32_t>{1});
    EXPECT_EQ(senders[last], std::vector<std::uint32_t>{last - 1});
  } else {
    EXPECT_EQ(senders[0], (std::vector<std::uint32_t>{1, last}));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Plans, ExecutorTimelineReal,
    ::testing::Values(RealCase{"one_f_one_b_folded", model::ScheduleKind::k1F1B, 4, 2, 1, Fidelity::kFolded, false},
                      RealCase{"one_f_one_b_full", model::ScheduleKind::k1F1B, 4, 2, 1, Fidelity::kFull, false},
                      RealCase{"interleaved_pp4", model::ScheduleKind::kInterleaved1F1B, 8, 4, 2, Fidelity::kFolded, false},
                      RealCase{"zb_h1_cpu_optimizer", model::ScheduleKind::kZbH1, 4, 4, 1, Fidelity::kFolded, true}),
    [](const ::testing::TestParamInfo<RealCase>& p) { return std::string(p.param.name); });

TEST(ExecutorTimeline, OneFOneBSpansAddUpToTheClosedForm) {
  // p = 4, m = 8, one layer per stage, F = 1 ms, B = 1.5 ms input + 0.5 ms weight, free links.
  // 1F1B step = (m + p - 1)(F + B) = 11 * 3 ms = 33 ms; every stage computes m (F + B) = 24 ms,
  // of which m F = 8 ms in forward spans; each stage runs m = 8 forward spans.
  const int p = 4;
  const int m = 8;
  const schedules::Schedule sched =
      schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = p, .microbatches = m, .chunks = 1});
  const StepPlan plan = uniform_plan(p, p, 1e-3, 1.5e-3, 0.5e-3);
  std::vector<LayerRange> layers;
  for (int i = 0; i < p; ++i) layers.push_back({.first = i, .count = 1});
  const model::ParallelSpec par{.pp = p, .micro_batch = 1, .global_batch = m, .schedule = model::ScheduleKind::k1F1B};
  const std::string path = std::string(MOFASIM_BINARY_DIR) + "/executor_timeline_closed_form.pb";
  PlanSimulation in;  // assigned field by field: g++ 12 misreads a designated temporary here
  in.plan = &plan;
  in.schedule = &sched;
  in.position_layers = layers;
  in.parallel = par;
  in.topology = free_topology(p);
  SimulateOptions options;
  options.timeline_path = path;
  const StepResult r = simulate_plan(in, options);
  const proto::Timeline tl = read_timeline(path);
  std::remove(path.c_str());

  EXPECT_EQ(tl.step_ns(), 33'000'000);
  EXPECT_EQ(tl.scenario(), "");
  expect_well_formed(tl);
  expect_summary_equals(tl.summary(), r);
  std::vector<std::int64_t> compute_ns(p, 0);
  std::vector<std::int64_t> forward_ns(p, 0);
  std::vector<int> forwards(p, 0);
  for (const proto::Span& s : tl.spans()) {
    if (s.category() != proto::Span::COMPUTE) continue;
    const auto proc = static_cast<std::size_t>(s.process_id());
    EXPECT_EQ(tl.streams(static_cast<int>(s.stream_id())).kind(), proto::Stream::COMPUTE);
    compute_ns[proc] += s.duration_ns();
    if (s.phase() == proto::Span::F) {
      forward_ns[proc] += s.duration_ns();
      ++forwards[proc];
      EXPECT_EQ(s.layer(), s.process_id());  // layer i on stage i
      EXPECT_LT(s.micro_batch(), static_cast<std::uint32_t>(m));
    }
  }
  for (int s = 0; s < p; ++s) {
    EXPECT_EQ(compute_ns[static_cast<std::size_t>(s)], 24'000'000) << "stage " << s;
    EXPECT_EQ(forward_ns[static_cast<std::size_t>(s)], 8'000'000) << "stage " << s;
    EXPECT_EQ(forwards[static_cast<std::size_t>(s)], m) << "stage " << s;
  }
  // Stage 0's first forward starts the step; the last stage's forward of micro-batch 0 waits
  // for p - 1 forwards upstream: (p - 1) F = 3 ms.
  EXPECT_EQ(tl.spans(0).start_ns(), 0);
  std::int64_t last_stage_first_f = -1;
  for (const proto::Span& s : tl.spans()) {
    if (s.process_id() == p - 1 && s.phase() == proto::Span::F && last_stage_first_f < 0) last_stage_first_f = s.start_ns();
  }
  EXPECT_EQ(last_stage_first_f, 3'000'000);
}

TEST(ExecutorTimeline, UnwritablePathIsARuntimeError) {
  const schedules::Schedule sched =
      schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1, .chunks = 1});
  const StepPlan plan = uniform_plan(1, 1, 1e-3, 1e-3, 1e-3);
  const model::ParallelSpec par{.pp = 1, .micro_batch = 1, .global_batch = 1, .schedule = model::ScheduleKind::k1F1B};
  PlanSimulation in;
  in.plan = &plan;
  in.schedule = &sched;
  in.position_layers = {{.first = 0, .count = 1}};
  in.parallel = par;
  in.topology = free_topology(1);
  SimulateOptions options;
  options.timeline_path = std::string(MOFASIM_BINARY_DIR) + "/no/such/dir/t.pb";
  EXPECT_THROW(simulate_plan(in, options), std::runtime_error);
}

}  // namespace
}  // namespace mofasim::executor
