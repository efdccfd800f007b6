// ZeRO-3 / FSDP in the DAG (sim/executor/generate_layer.cc): each layer's parameter all-gather
// before its forward and again before its backward of every micro-batch, one all-gather at a
// time, prefetched one layer ahead (a gather may start once the pass two before it has ended).
#include <string>

#include <gtest/gtest.h>

#include "schedules/factory.h"
#include "sim/executor/generate.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

// Two layers, F = 1 ms, B = 2 ms (no separate W), each gathering 0.3 GB of parameters over dp 2:
// a ring all-gather moves 1/2 of it through a 100 GB/s link, g = 1.5 ms.
StepPlan fsdp_plan() {
  StepPlan plan = testing::uniform_plan(2, 1, 1e-3, 2e-3, 0);
  for (LayerPlan& lp : plan.layers) lp.fsdp_gather_bytes = 0.3e9;
  return plan;
}

model::FeatureSpec zero3() {
  model::FeatureSpec f;
  f.distributed_optimizer = true;
  f.dp_sharding = model::DpSharding::kOptimGradsParams;
  return f;
}

TEST(FsdpGather, EveryLayerPassGathersItsParametersOncePerMicroBatch) {
  // m = 2 micro-batches × 2 layers × (forward + backward) = 8 gathers of 0.3 GB each, on DP.
  const StepPlan plan = fsdp_plan();
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 2});
  GenerateInput in;
  in.schedule = &sched;
  in.plan = &plan;
  in.parallel.dp = 2;
  in.parallel.global_batch = 4;
  in.features = zero3();
  in.position_layers = {{0, 2}};
  const Workload w = generate_workload(in);
  int gathers = 0;
  for (std::uint32_t t = 0; t < w.size(); ++t) {
    if (w.op_name(w.op(t)) != "fsdp_param_all_gather") continue;
    ++gathers;
    EXPECT_DOUBLE_EQ(w.work(t), 0.3e9);
    EXPECT_EQ(w.scope(t), Scope::kDp);
  }
  EXPECT_EQ(gathers, 8);
}

TEST(FsdpGather, PrefetchHidesTheGatherUnderThePreviousPass) {
  // One micro-batch. G0 [0, 1.5] then G1 [1.5, 3] (nothing two passes before them); F0
  // [1.5, 2.5], F1 waits for G1: [3, 4]. The backward of layer 1 gathers after F0's end and G1:
  // [3, 4.5], so B1 [4.5, 6.5]; layer 0's after F1 and that gather: [4.5, 6], hidden under B1,
  // B0 [6.5, 8.5]. Step 8.5 ms, of which 1.5 + 0.5 + 0.5 ms of gathers exposed.
  const StepPlan plan = fsdp_plan();
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  PlanSimulation sim;
  sim.plan = &plan;
  sim.schedule = &sched;
  sim.position_layers = {{0, 2}};
  sim.parallel.dp = 2;
  sim.parallel.global_batch = 2;
  sim.features = zero3();
  sim.topology = {.gpus = 2, .gpus_per_node = 2, .intra_node = {.bandwidth = 100e9, .latency = 0}};
  const StepResult r = simulate_plan(sim, {});
  EXPECT_NEAR(r.step_time_s, 8.5e-3, 1e-8);
  EXPECT_NEAR(r.breakdown.dp, 2.5e-3, 1e-8);
  // Without the gathers (ZeRO-1): 2 × 1 + 2 × 2 = 6 ms.
  StepPlan plain = testing::uniform_plan(2, 1, 1e-3, 2e-3, 0);
  sim.plan = &plain;
  EXPECT_NEAR(simulate_plan(sim, {}).step_time_s, 6e-3, 1e-8);
}

}  // namespace
}  // namespace mofasim::executor
