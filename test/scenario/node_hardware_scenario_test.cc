// Heterogeneous GPUs (topology.node_hardware) through the loader and the step simulation: each
// rank computes at its own GPU's kernel prices, memory is checked against its own capacity, and
// the result names the GPU that bound the step.
#include <gtest/gtest.h>

#include <string>

#include "schedules/factory.h"
#include "sim/executor/generate.h"
#include "sim/executor/plan_from_model.h"
#include "sim/executor/simulate_step.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/scenario_specs.h"

namespace mofasim::cli {
namespace {

// Pure DP over two nodes of one GPU each, joined by 50 GB/s NICs without latency; `mix` is the
// node_hardware list (empty: every node the hardware section's H100). No launch charges: the
// presets' fitted 50 us per op phase (kernel_launch, which CUDA graphs keep) and 5 us host floor
// (which they remove) would swamp tiny-llama's kernels, whose HBM time is compared.
std::string two_nodes(const std::string& hardware, const std::string& mix) {
  return "model: {preset: tiny-llama}\n"
         "hardware: {preset: " + hardware + ", kernel_launch: \"0 s\"}\n"
         "topology: {gpus: 2, gpus_per_node: 1, intra_node: {bandwidth: \"370 GB/s\"}, "
         "inter_node: {bandwidth: \"50 GB/s\"}" + (mix.empty() ? "" : ", node_hardware: " + mix) + "}\n"
         "parallelism: {dp: 2, micro_batch: 1, global_batch: 4, schedule: 1f1b}\n"
         "optimizations: {cuda_graphs: true}\n"
         "training: {steps: 10}\n";
}

struct Costs {
  double compute_s = 0;  // every compute task of one rank, priced on this hardware's kernel model
  double comm_bytes = 0;  // the DP collectives' buffers
};

// The step's costs as the rank plan prices them on `loaded`'s hardware section.
Costs costs_on(const scenario::LoadedScenario& loaded) {
  const executor::SimulationInput in = simulation_input(loaded);
  const executor::PreparedStep step = executor::prepare_step(in);
  const executor::Workload w = executor::generate_workload(
      {.schedule = &step.schedule, .plan = &step.plan, .parallel = in.parallel, .features = step.features,
       .position_layers = step.position_layers});
  Costs c;
  for (executor::TaskId t = 0; t < w.size(); ++t) {
    if (w.kind(t) == executor::TaskKind::kCompute) c.compute_s += w.work(t);
    if (w.kind(t) == executor::TaskKind::kCollective) c.comm_bytes += w.work(t);
  }
  return c;
}

// One H100 node and one H200 node: the H200 (same GEMM ceiling, 4.8 vs 3.35 TB/s of HBM) finishes
// its compute first and waits in the all-reduce, so the step is the H100's compute plus the
// collective. A ring all-reduce over 2 GPUs moves 2 (n - 1) / n = 1x its buffer through each NIC.
TEST(NodeHardware, PureDataParallelStepIsTheSlowerNodesComputePlusTheCollective) {
  const auto mixed = scenario::load_scenario_from_string(
      two_nodes("h100-sxm", "[{nodes: [1], hardware: {preset: h200, kernel_launch: \"0 s\"}}]"), "mix.yaml");
  const Costs h100 = costs_on(scenario::load_scenario_from_string(two_nodes("h100-sxm", ""), "h100.yaml"));
  const Costs h200 = costs_on(scenario::load_scenario_from_string(two_nodes("h200", ""), "h200.yaml"));
  ASSERT_GT(h100.compute_s, 0);
  EXPECT_LT(h200.compute_s, 0.99 * h100.compute_s);  // memory-bound kernels gain from the HBM
  EXPECT_DOUBLE_EQ(h200.comm_bytes, h100.comm_bytes);
  const executor::StepResult r = executor::simulate_step(simulation_input(mixed), {});
  const double collective_s = h100.comm_bytes / 50e9;
  EXPECT_NEAR(r.step_time_s, h100.compute_s + collective_s, 1e-6);  // ns rounding of ~100 tasks
  // The all-H200 job: its own compute plus the same collective.
  const executor::StepResult fast = executor::simulate_step(
      simulation_input(scenario::load_scenario_from_string(two_nodes("h200", ""), "h200.yaml")), {});
  EXPECT_NEAR(fast.step_time_s, h200.compute_s + collective_s, 1e-6);
  // The result says which GPU bound the step: the H100 computes on the critical path, the H200 not.
  ASSERT_EQ(r.hardware.size(), 2U);
  EXPECT_EQ(r.hardware[0].name, mixed.hardware.name);
  EXPECT_EQ(r.hardware[0].gpus, 1);
  EXPECT_EQ(r.hardware[1].name, "H200-SXM-141GB");
  EXPECT_NEAR(r.hardware[0].critical_path_compute_s, h100.compute_s, 1e-6);
  EXPECT_EQ(r.hardware[1].critical_path_compute_s, 0);
  // Both nodes are simulated (different hardware never folds together) and the full replay agrees.
  EXPECT_EQ(r.simulated_ranks, 2);
  EXPECT_DOUBLE_EQ(r.step_time_s,
                   executor::simulate_step(simulation_input(mixed), {.fidelity = executor::Fidelity::kFull}).step_time_s);
}

// Memory: every GPU against its own capacity, the smallest binds. An H200 job whose node 1 is an
// H100: the stage is held by both and the 80 GiB H100 binds, not the 140 GiB H200.
TEST(NodeHardware, MemoryIsCheckedAgainstTheSmallestGpuThatHoldsTheStage) {
  const auto mixed = scenario::load_scenario_from_string(
      two_nodes("h200", "[{nodes: [1], hardware: {preset: h100-sxm}}]"), "mix.yaml");
  const executor::StepResult r = executor::simulate_step(simulation_input(mixed), {});
  ASSERT_EQ(r.memory.size(), 1U);
  EXPECT_EQ(r.memory[0].bound_hardware, "H100-SXM5-80GB");
  EXPECT_DOUBLE_EQ(r.memory[0].capacity_bytes, 80.0 * (1 << 30));
  const executor::StepResult h200 = executor::simulate_step(
      simulation_input(scenario::load_scenario_from_string(two_nodes("h200", ""), "h200.yaml")), {});
  EXPECT_DOUBLE_EQ(h200.memory[0].capacity_bytes, 140.0 * (1 << 30));
  EXPECT_TRUE(h200.memory[0].bound_hardware.empty());
}

// Each class brings its own reserve (model/memory_reserve.h): the H200 section keeps the schema's
// expandable segments and 287,047,680 B context; node 1's H100 runs the caching allocator with an
// eager-loading context (666,632,192 B). The H100 binds with allocated / 0.85 + 666,632,192 B.
// Given 100 GiB of other buffers on node 1's H200 instead (140 - 100 < 80 GiB of room), the H200 binds.
TEST(NodeHardware, TheReservedTotalIsEachGpuClassesOwn) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  const executor::StepResult mixed = executor::simulate_step(
      simulation_input(scenario::load_scenario_from_string(
          two_nodes("h200", "[{nodes: [1], hardware: {preset: h100-sxm, allocator: caching, cuda_context: \"666632192 B\"}}]"),
          "mix.yaml")),
      {});
  ASSERT_EQ(mixed.memory.size(), 1U);
  const executor::StageMemory& m = mixed.memory[0];
  EXPECT_EQ(m.bound_hardware, "H100-SXM5-80GB");
  EXPECT_EQ(m.allocated_bytes, m.static_bytes + m.peak_activation_bytes);
  EXPECT_DOUBLE_EQ(m.fragmentation_bytes, m.allocated_bytes / 0.85 - m.allocated_bytes);
  EXPECT_EQ(m.cuda_context_bytes, 666'632'192.0);
  EXPECT_DOUBLE_EQ(m.peak_bytes, m.allocated_bytes / 0.85 + 666'632'192.0);
  EXPECT_EQ(m.capacity_bytes, 80 * kGiB);

  const executor::StepResult buffers = executor::simulate_step(
      simulation_input(scenario::load_scenario_from_string(
          two_nodes("h200", "[{nodes: [1], hardware: {preset: h200, memory_reserved: \"100 GiB\"}}]"), "buf.yaml")),
      {});
  const executor::StageMemory& b = buffers.memory[0];
  EXPECT_EQ(b.bound_hardware, "H200-SXM-141GB");
  EXPECT_EQ(b.reserved_bytes, 100 * kGiB);
  EXPECT_EQ(b.fragmentation_bytes, 0);
  EXPECT_EQ(b.peak_bytes, b.allocated_bytes + 287'047'680.0 + 100 * kGiB);
}

// Every bad entry is a located error at its field.
TEST(NodeHardware, BadEntriesAreLocatedErrors) {
  const auto error_of = [](const std::string& mix) {
    try {
      (void)scenario::load_scenario_from_string(two_nodes("h100-sxm", mix), "bad.yaml");
    } catch (const scenario::ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_NE(error_of("[{nodes: [2], hardware: {preset: h200}}]")
                .find("topology.node_hardware[0].nodes[0]: node 2 is outside the cluster (0..1)"),
            std::string::npos);
  EXPECT_NE(error_of("[{nodes: [1], hardware: {preset: h2000}}]")
                .find("bad.yaml:3:160: topology.node_hardware[0].hardware.preset: unknown hardware preset 'h2000'; did "
                      "you mean 'h200'?"),
            std::string::npos);
  EXPECT_NE(error_of("[{nodes: [1], hardware: {preset: h200}}, {nodes: [0, 1], hardware: {preset: b200}}]")
                .find("topology.node_hardware[1].nodes[1]: node 1 already has hardware from topology.node_hardware[0]"),
            std::string::npos);
  EXPECT_NE(error_of("[{nodes: [1], gpus_per_node: 4, hardware: {preset: gb200}}]")
                .find("topology.node_hardware[0].gpus_per_node: 4 GPUs per node, but topology.gpus_per_node is 1"),
            std::string::npos);
  EXPECT_NE(error_of("[{nodes: [1]}]").find("topology.node_hardware[0].hardware: missing"), std::string::npos);
  EXPECT_NE(error_of("[{hardware: {preset: h200}}]").find("topology.node_hardware[0].nodes: missing"), std::string::npos);
  EXPECT_NE(error_of("[{nodes: [1], hardware: {name: x}}]").find("topology.node_hardware[0].hardware.peak_bf16: missing"),
            std::string::npos);
}

}  // namespace
}  // namespace mofasim::cli
