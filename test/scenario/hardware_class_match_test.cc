// Heterogeneous GPUs (sim/executor/hardware_classes.h): a class's step is priced on its own GPU,
// and only the time of its compute and host tasks is its own. Everything the replay takes from the
// hardware section's step (op shapes, bytes moved, memory) must be the same, or the entry is
// refused naming the first task that differs; a class that differs only in time is repriced.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/executor/generate.h"
#include "sim/executor/hardware_classes.h"
#include "sim/executor/simulate_step.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/scenario_specs.h"

namespace mofasim::cli {
namespace {

// Pure DP over two nodes of one GPU each, node 1 an H200: the layout of node_hardware_scenario_test.
const char* kMixed =
    "model: {preset: tiny-llama}\n"
    "hardware: {preset: h100-sxm}\n"
    "topology: {gpus: 2, gpus_per_node: 1, intra_node: {bandwidth: \"370 GB/s\"}, "
    "inter_node: {bandwidth: \"50 GB/s\"}, node_hardware: [{nodes: [1], hardware: {preset: h200}}]}\n"
    "parallelism: {dp: 2, micro_batch: 1, global_batch: 4, schedule: 1f1b}\n"
    "optimizations: {cuda_graphs: true}\n"
    "training: {steps: 10}\n";

struct Case {
  executor::SimulationInput in;
  executor::PreparedStep step;
  executor::Workload base;
};

Case mixed_case() {
  const executor::SimulationInput in = simulation_input(scenario::load_scenario_from_string(kMixed, "mix.yaml"));
  executor::PreparedStep step = executor::prepare_step(in);
  executor::Workload base = executor::generate_workload({.schedule = &step.schedule, .plan = &step.plan,
                                                         .parallel = in.parallel, .features = step.features,
                                                         .position_layers = step.position_layers});
  return {.in = in, .step = std::move(step), .base = std::move(base)};
}

// Prices the H200 class with `plan` standing for the plan priced on it; the error text or "".
std::string refusal(const Case& c, const executor::StepPlan& plan, executor::HardwareClasses* out = nullptr) {
  const executor::StepPlan* plans[] = {&plan};
  try {
    executor::HardwareClasses classes = executor::price_hardware_classes(
        c.in.node_hardware, plans,
        {.schedule = &c.step.schedule, .plan = &c.step.plan, .parallel = c.in.parallel, .features = c.step.features,
         .position_layers = c.step.position_layers},
        c.base, c.in.topology);
    if (out != nullptr) *out = std::move(classes);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(HardwareClassMatch, AClassThatDiffersOnlyInTimeIsRepriced) {
  const Case c = mixed_case();
  executor::StepPlan plan = c.step.plan;
  executor::PlanOp& op = plan.layers.at(0).forward.ops.at(0);
  ASSERT_FALSE(op.is_comm);
  const double extra_s = op.seconds;
  ASSERT_GT(extra_s, 0);
  op.seconds *= 2;  // the H200 twice as slow on layer 0's first forward op, nothing else changed
  executor::HardwareClasses classes;
  EXPECT_EQ(refusal(c, plan, &classes), "");
  ASSERT_EQ(classes.work.size(), 1U);
  int slower = 0;
  for (executor::TaskId t = 0; t < c.base.size(); ++t) {
    if (classes.work[0][t] == c.base.work(t)) continue;
    ++slower;
    // The op merges with its neighbours into one compute task, which takes the op's time longer.
    EXPECT_NEAR(classes.work[0][t] - c.base.work(t), extra_s, 1e-12 * extra_s) << c.base.describe(t);
    EXPECT_EQ(c.base.kind(t), executor::TaskKind::kCompute);
    EXPECT_EQ(c.base.layer(t), 0U);
  }
  EXPECT_EQ(slower, 2);  // its forward in each of the 2 micro-batches (4 / (1 x dp 2))
}

TEST(HardwareClassMatch, AnotherOpShapeIsRefused) {
  // A GFLOP more is another op shape: the two GPUs would not compute the same layer. Only the
  // task kinds used to be compared, so this was accepted.
  const Case c = mixed_case();
  executor::StepPlan plan = c.step.plan;
  plan.layers.at(0).forward.ops.at(0).flops += 1e9;
  // Layer 0's forward ops merge into one task; it computes 404,750,336 FLOPs per micro-batch.
  EXPECT_EQ(refusal(c, plan),
            "topology.node_hardware[0].hardware: its step differs from the hardware section's at F mb 0 chunk 0 "
            "layer 0 input_norm+qkv_projection+attention+output_projection+post_attention_norm+mlp_linear1+"
            "mlp_activation+mlp_linear2 (stage 0, compute) in its FLOPs (op shape) 1404750336 vs 404750336, so the "
            "two cannot run one step together");
}

TEST(HardwareClassMatch, OtherBytesMovedAreRefused) {
  // Twice layer 0's gradient bytes: the H200's DP all-reduce would move another size than the
  // H100's in the same collective; the replay moved the hardware section's bytes silently.
  const Case c = mixed_case();
  executor::StepPlan plan = c.step.plan;
  plan.layers.at(0).dense_grad_bytes *= 2;
  const std::string error = refusal(c, plan);
  EXPECT_NE(error.find(" in its bytes "), std::string::npos) << error;
  // Another activation size is other memory.
  plan = c.step.plan;
  plan.layers.at(0).activation_bytes *= 2;
  EXPECT_NE(refusal(c, plan).find(" in its memory allocated or freed "), std::string::npos) << refusal(c, plan);
}

}  // namespace
}  // namespace mofasim::cli
