// Link-utilisation counters of the Perfetto trace (perfetto_links.h), read back with the vendored
// protos, against a hand-worked case: two flows sharing an oversubscribed spine port get half of it
// each, and the NIC they also share runs at half its capacity.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>

#include "schedules/factory.h"
#include "sim/executor/perfetto_links.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/perfetto_trace_decode.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

using testing::decode_pftrace;
using testing::DecodedTrace;

constexpr double kPpBytes = 1e9;

// PP 2 x DP 2 on two nodes of two GPUs, one NIC per node, each node its own supernode behind a 2:1
// oversubscribed spine. Ranks dp-major: stage 0 = ranks 0, 1 (node 0), stage 1 = ranks 2, 3 (node 1).
// One micro-batch per replica: F 1 ms, B 1 ms per stage, 1 GB sent each way between the stages.
// Capacities (topology.h): NIC (g/k) * 100 GB/s = 200 GB/s; spine port 200 GB/s / 2 = 100 GB/s.
// Both replicas send at once over nic_tx(0), spine_up(0), spine_down(1), nic_rx(1): max-min gives
// each 50 GB/s (the spine port shared by two), so the spine port is full and the NIC half used,
// for 1 GB / 50 GB/s = 20 ms; the gradients come back the same way on the reverse links.
DecodedTrace two_flow_trace(const TraceFilter& filter, const std::string& name) {
  StepPlan plan = testing::uniform_plan(2, 2, 1e-3, 1e-3, 0);
  plan.pp_bytes = kPpBytes;
  const schedules::Schedule sched =
      schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 2, .microbatches = 1});
  PlanSimulation sim;
  sim.plan = &plan;
  sim.schedule = &sched;
  sim.position_layers = {{0, 1}, {1, 1}};
  sim.hardware = testing::tiny_gpu();
  sim.parallel = {.pp = 2, .dp = 2, .micro_batch = 1, .global_batch = 2};
  sim.topology = {.gpus = 4, .gpus_per_node = 2, .nodes_per_supernode = 1,
                  .intra_node = {.bandwidth = 1e12, .latency = 0}, .inter_node = {.bandwidth = 100e9, .latency = 0},
                  .nics_per_node = 1, .oversubscription = 2};
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mofasim_" + std::to_string(::getpid()) + "_" + name)).string();
  (void)simulate_plan(sim, {.fidelity = Fidelity::kFull, .trace_path = path, .trace_filter = &filter});
  DecodedTrace trace = decode_pftrace(path);
  std::remove(path.c_str());
  return trace;
}

// Counter samples by "process name / track name", for the node processes only.
std::map<std::string, std::vector<std::pair<std::int64_t, double>>> link_counters(const DecodedTrace& tr) {
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> out;
  for (const auto& [uuid, samples] : tr.counters) {
    const auto& process = tr.tracks.at(tr.process_of(uuid));
    if (process.pid < kNodePidBase) continue;
    out[process.name + " / " + tr.tracks.at(uuid).name] = samples;
  }
  return out;
}

// The value above 0 a counter holds, and for how long in all.
std::pair<double, std::int64_t> busy(const std::vector<std::pair<std::int64_t, double>>& samples) {
  double level = 0;
  std::int64_t ns = 0;
  for (std::size_t i = 0; i + 1 < samples.size(); ++i) {
    if (samples[i].second > 0) {
      EXPECT_TRUE(level == 0 || level == samples[i].second) << "two different levels";
      level = samples[i].second;
      ns += samples[i + 1].first - samples[i].first;
    }
  }
  EXPECT_EQ(samples.back().second, 0) << "the link is still busy at the end";
  return {level, ns};
}

TEST(PerfettoLinkCounters, TwoFlowsShareTheSpinePortHalfEachAndTheNicRunsAtHalf) {
  const DecodedTrace tr = two_flow_trace({}, "links.pftrace");
  ASSERT_TRUE(tr.faults.empty()) << tr.faults.front();
  const auto counters = link_counters(tr);
  // The default kinds (NICs and spine ports) of the two traced ranks' nodes, each way.
  std::vector<std::string> names;
  for (const auto& [name, samples] : counters) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "node 0 links / nic_rx rail 0 (of 200 GB/s)", "node 0 links / nic_tx rail 0 (of 200 GB/s)",
                       "node 0 links / spine_down rail 0 (of 100 GB/s)", "node 0 links / spine_up rail 0 (of 100 GB/s)",
                       "node 1 links / nic_rx rail 0 (of 200 GB/s)", "node 1 links / nic_tx rail 0 (of 200 GB/s)",
                       "node 1 links / spine_down rail 0 (of 100 GB/s)", "node 1 links / spine_up rail 0 (of 100 GB/s)"}));
  constexpr std::int64_t kTransferNs = 20'000'000;  // 1 GB at 50 GB/s per flow
  for (const auto& [name, samples] : counters) {
    const auto [level, ns] = busy(samples);
    const bool spine = name.find("spine") != std::string::npos;
    EXPECT_EQ(level, spine ? 1.0 : 0.5) << name;  // 2 x 50 of 100 GB/s; 2 x 50 of 200 GB/s
    EXPECT_NEAR(static_cast<double>(ns), kTransferNs, 2) << name;
  }
  // The forward transfer starts when stage 0's forward ends (1 ms) and leaves node 0.
  const auto& tx = counters.at("node 0 links / nic_tx rail 0 (of 200 GB/s)");
  ASSERT_EQ(tx.size(), 3u);
  EXPECT_EQ(tx[0], (std::pair<std::int64_t, double>{0, 0}));
  EXPECT_EQ(tx[1], (std::pair<std::int64_t, double>{1'000'000, 0.5}));
  EXPECT_EQ(tx[2].second, 0);
}

TEST(PerfettoLinkCounters, TheKindFilterAndTheWindowLimitTheCounters) {
  TraceFilter none;
  none.link_kinds = 0;
  EXPECT_TRUE(link_counters(two_flow_trace(none, "none.pftrace")).empty());

  TraceFilter spine_up;
  spine_up.link_kinds = parse_link_kinds("spine_up");
  spine_up.stages = {1};  // node 1 only
  spine_up.from_ns = 10'000'000;
  spine_up.to_ns = 15'000'000;
  const auto counters = link_counters(two_flow_trace(spine_up, "filtered.pftrace"));
  // Node 1's spine_up carries the gradients, which start after the forward transfer (21 ms): in
  // [10, 15) ms it is idle, and a track is still written since the link carried traffic.
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters.begin()->first, "node 1 links / spine_up rail 0 (of 100 GB/s)");
  EXPECT_EQ(counters.begin()->second, (std::vector<std::pair<std::int64_t, double>>{{10'000'000, 0}}));
}

TEST(PerfettoLinkCounters, LinkKindsParse) {
  EXPECT_EQ(parse_link_kinds("all"), 0x3F);
  EXPECT_EQ(parse_link_kinds("none"), 0);
  EXPECT_EQ(parse_link_kinds("nvlink"), 0x03);
  EXPECT_EQ(parse_link_kinds("nic,spine_down"), 0x0C | 0x20);
  try {
    (void)parse_link_kinds("nic,pcie");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "expected all, none or a comma list of nvlink, nic, spine, nvlink_tx, nvlink_rx, nic_tx, "
                           "nic_rx, spine_up, spine_down, got 'nic,pcie' ('pcie' is not a link kind)");
  }
  EXPECT_THROW((void)parse_link_kinds(""), std::invalid_argument);
  EXPECT_THROW((void)parse_link_kinds("nic,"), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::executor
