// Stragglers and degraded links in the step replay (sim/perturb, issue 17): hand-worked step
// times on closed-form plans, folded == full with a perturbation, and the per-perturbation costs.
#include <gtest/gtest.h>

#include "schedules/factory.h"
#include "sim/executor/perturbation_costs.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

// One layer, F = 1 ms, B = 2 ms, W = 1 ms per micro-batch, and `grad_bytes` of dense gradients
// all-reduced over DP once the backward is done (no DP overlap, one bucket).
StepPlan one_layer_plan(int stages, double grad_bytes) {
  StepPlan plan = testing::uniform_plan(stages, stages, 1e-3, 2e-3, 1e-3);
  for (LayerPlan& lp : plan.layers) lp.dense_grad_bytes = grad_bytes;
  return plan;
}

std::vector<LayerRange> one_layer_per_stage(int stages) {
  std::vector<LayerRange> r;
  for (int s = 0; s < stages; ++s) r.push_back({s, 1});
  return r;
}

perturb::PerturbationSpec slow_ranks(std::vector<int> ranks, double slowdown) {
  perturb::PerturbationSpec p;
  p.slow.push_back({.ranks = std::move(ranks), .slowdown = slowdown});
  return p;
}

// Pure DP: 4 GPUs on one node at 100 GB/s, 2 micro-batches, one 0.3 GB gradient all-reduce.
// Healthy: 2 * (1 + 2 + 1) ms + ring 2 (n-1)/n * 0.3 GB / 100 GB/s = 8 + 4.5 = 12.5 ms. Rank 2 at
// 1.5x stretches only its compute: 1.5 * 8 + 4.5 = 16.5 ms (the all-reduce waits for it).
TEST(PerturbationReplay, OneSlowRankInPureDataParallelStretchesTheStepByTheClosedForm) {
  const StepPlan plan = one_layer_plan(1, 0.3e9);
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 2});
  PlanSimulation sim{.plan = &plan, .schedule = &sched, .position_layers = one_layer_per_stage(1),
                     .parallel = {.dp = 4, .micro_batch = 1, .global_batch = 8},
                     .topology = {.gpus = 4, .gpus_per_node = 4, .intra_node = {.bandwidth = 100e9, .latency = 0}}};
  EXPECT_NEAR(simulate_plan(sim, {}).step_time_s, 12.5e-3, 1e-8);
  sim.perturbations = slow_ranks({2}, 1.5);
  const StepResult slow = simulate_plan(sim, {});
  EXPECT_NEAR(slow.step_time_s, 16.5e-3, 1e-8);
  EXPECT_NEAR(slow.breakdown.dp, 4.5e-3, 1e-8);
  // The critical path runs through rank 2's compute: 12 ms of it.
  EXPECT_NEAR(slow.critical_path_perturbed_s, 12e-3, 1e-8);
  sim.perturbations = slow_ranks({2}, 2.0);  // the 2x case: 2 * 8 + 4.5 ms
  EXPECT_NEAR(simulate_plan(sim, {}).step_time_s, 20.5e-3, 1e-8);
}

// Two nodes of one GPU, dp 2 over 50 GB/s NICs, one 0.1 GB gradient all-reduce: ring of 2 moves
// 2 (n-1)/n = 1x the buffer, 0.1 GB / 50 GB/s = 2 ms; compute 4 ms. Node 1's NIC at half its
// bandwidth doubles the bandwidth term: 4 + 4 = 8 ms. The degraded link is on the critical path
// for exactly the all-reduce.
TEST(PerturbationReplay, DegradedNicHalvesTheBandwidthTermOfTheCollectiveThatCrossesIt) {
  const StepPlan plan = one_layer_plan(1, 0.1e9);
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  PlanSimulation sim{.plan = &plan, .schedule = &sched, .position_layers = one_layer_per_stage(1),
                     .parallel = {.dp = 2, .micro_batch = 1, .global_batch = 2},
                     .topology = {.gpus = 2, .gpus_per_node = 1, .inter_node = {.bandwidth = 50e9, .latency = 0}}};
  EXPECT_NEAR(simulate_plan(sim, {}).step_time_s, 6e-3, 1e-8);
  sim.perturbations.degraded_links.push_back({.level = perturb::LinkLevel::kNic, .node = 1, .bandwidth_fraction = 0.5});
  const StepResult degraded = simulate_plan(sim, {});
  EXPECT_NEAR(degraded.step_time_s, 8e-3, 1e-8);
  EXPECT_NEAR(degraded.breakdown.dp, 4e-3, 1e-8);
  EXPECT_NEAR(degraded.critical_path_perturbed_s, 4e-3, 1e-8);
  // A quarter of the bandwidth: 0.1 GB / 12.5 GB/s = 8 ms.
  sim.perturbations.degraded_links[0].bandwidth_fraction = 0.25;
  EXPECT_NEAR(simulate_plan(sim, {}).step_time_s, 12e-3, 1e-8);
}

// TP 2 inside each of two nodes, DP 2 across them. Node 1's NICs at half bandwidth slow the DP
// all-reduce and leave the TP all-reduce (NVLink) as it was; a degraded NVLink does the opposite.
TEST(PerturbationReplay, DegradedNicSlowsOnlyTheCollectivesThatCrossIt) {
  StepPlan plan = one_layer_plan(1, 0.1e9);
  auto& ops = plan.layers[0].forward.ops;  // the all-reduce first, so the forward GEMM waits for it
  ops.insert(ops.begin(), {.name = "tp_ar", .is_comm = true, .scope = Scope::kTp,
    .collective = CollectiveKind::kAllReduce,
                           .bytes = 0.1e9});
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  PlanSimulation sim{.plan = &plan, .schedule = &sched, .position_layers = one_layer_per_stage(1),
                     .parallel = {.tp = 2, .dp = 2, .micro_batch = 1, .global_batch = 2},
                     .topology = {.gpus = 4, .gpus_per_node = 2, .intra_node = {.bandwidth = 100e9, .latency = 0},
                                  .inter_node = {.bandwidth = 50e9, .latency = 0}}};
  const StepResult healthy = simulate_plan(sim, {});
  sim.perturbations.degraded_links.push_back({.level = perturb::LinkLevel::kNic, .node = 1, .bandwidth_fraction = 0.5});
  const StepResult degraded = simulate_plan(sim, {});
  // Compute 4 ms + TP all-reduce of 0.1 GB on 2 GPUs at 100 GB/s (1 ms) + DP all-reduce of 0.1 GB
  // on 2 GPUs, one DP group per rail at 50 GB/s per GPU (2 ms) = 7 ms; the degraded rails take
  // the DP all-reduce to 4 ms and leave the TP one alone: 9 ms.
  EXPECT_NEAR(healthy.step_time_s, 7e-3, 1e-8);
  EXPECT_NEAR(degraded.step_time_s, 9e-3, 1e-8);
  EXPECT_NEAR(healthy.breakdown.dp, 2e-3, 1e-8);
  EXPECT_NEAR(degraded.breakdown.dp, 4e-3, 1e-8);
  EXPECT_DOUBLE_EQ(degraded.breakdown.tp, healthy.breakdown.tp);
  // Only the DP all-reduce crosses the NICs: it is the perturbed part of the critical path.
  EXPECT_NEAR(degraded.critical_path_perturbed_s, 4e-3, 1e-8);
  // NVLink of GPU 3 at half instead: the TP all-reduce of {2, 3} takes 2 ms, DP is as healthy.
  sim.perturbations.degraded_links[0] = {.level = perturb::LinkLevel::kNvlink, .gpu = 3, .bandwidth_fraction = 0.5};
  const StepResult nvlink = simulate_plan(sim, {});
  EXPECT_NEAR(nvlink.step_time_s, 8e-3, 1e-8);
  EXPECT_NEAR(nvlink.critical_path_perturbed_s, 2e-3, 1e-8);
}

// Pure DP over two pipeline stages on two nodes: a slow GPU in replica 2 is simulated beside
// replica 0 and the rest fold; the result equals the full replay.
TEST(PerturbationReplay, FoldedEqualsFullWithAStraggler) {
  const StepPlan plan = one_layer_plan(2, 0.2e9);
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 2, .microbatches = 4});
  PlanSimulation sim{.plan = &plan, .schedule = &sched, .position_layers = one_layer_per_stage(2),
                     .parallel = {.pp = 2, .dp = 4, .micro_batch = 1, .global_batch = 16},
                     .topology = {.gpus = 8, .gpus_per_node = 4, .intra_node = {.bandwidth = 100e9, .latency = 1e-6},
                                  .inter_node = {.bandwidth = 25e9, .latency = 5e-6}}};
  // Rank order tp-cp-ep-dp-pp: rank = dp + 4 * pp, so rank 6 is replica 2's stage 1.
  sim.perturbations = slow_ranks({6}, 1.5);
  const StepResult folded = simulate_plan(sim, {.fidelity = Fidelity::kFolded});
  const StepResult full = simulate_plan(sim, {.fidelity = Fidelity::kFull});
  EXPECT_EQ(folded.fidelity, Fidelity::kFolded);
  EXPECT_EQ(folded.simulated_ranks, 4);  // replicas 0 and 2, two stages each
  EXPECT_EQ(full.simulated_ranks, 8);
  EXPECT_DOUBLE_EQ(folded.step_time_s, full.step_time_s);
  EXPECT_DOUBLE_EQ(folded.breakdown.dp, full.breakdown.dp);
  EXPECT_DOUBLE_EQ(folded.breakdown.pp_bubble, full.breakdown.pp_bubble);
  EXPECT_DOUBLE_EQ(folded.critical_path_perturbed_s, full.critical_path_perturbed_s);
  PlanSimulation healthy = sim;
  healthy.perturbations = {};
  EXPECT_GT(folded.step_time_s, simulate_plan(healthy, {}).step_time_s);
  // A degraded NIC of node 1 (stage 1 of every replica): every replica is simulated, still equal.
  sim.perturbations.degraded_links.push_back({.level = perturb::LinkLevel::kNic, .node = 1, .nic = 2, .bandwidth_fraction = 0.3});
  const StepResult folded2 = simulate_plan(sim, {.fidelity = Fidelity::kFolded});
  EXPECT_DOUBLE_EQ(folded2.step_time_s, simulate_plan(sim, {.fidelity = Fidelity::kFull}).step_time_s);
}

// With TP, a straggler's TP group is not replica 0's: folding is refused with a note.
TEST(PerturbationReplay, FoldingIsRefusedWhereAStragglerReachesGroupsReplicaZeroDoesNotMeet) {
  const StepPlan plan = one_layer_plan(1, 0.1e9);
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  PlanSimulation sim{.plan = &plan, .schedule = &sched, .position_layers = one_layer_per_stage(1),
                     .parallel = {.tp = 2, .dp = 2, .micro_batch = 1, .global_batch = 2},
                     .topology = testing::free_topology(4)};
  StepPlan with_tp = plan;
  with_tp.layers[0].forward.ops.push_back(
      {.name = "tp_ar", .is_comm = true, .scope = Scope::kTp, .collective = CollectiveKind::kAllReduce, .bytes = 1e6});
  sim.plan = &with_tp;
  sim.perturbations = slow_ranks({3}, 1.5);  // TP group {2, 3}; replica 0 is rank 0 (TP group {0, 1})
  const StepResult r = simulate_plan(sim, {.fidelity = Fidelity::kFolded});
  EXPECT_EQ(r.fidelity, Fidelity::kFull);
  EXPECT_NE(r.fidelity_note.find("folded refused: the tp group of rank 3 (stage 0) mixes perturbed and healthy replicas"), std::string::npos) << r.fidelity_note;
}

// A whole slow node under TP: node 3 holds TP group {6, 7}, stage 1 of replicas 2 and 3 (tp 2,
// pp 2, dp 2, rank = tp + 2 dp + 4 pp, two GPUs per node). Both TP ranks are alike, so folding
// simulates replica 0 and replica 2 (the first of the slow TP group) and represents replica 1 by 0
// and replica 3 by 2: 4 of the 8 ranks, and the step equals the full replay's.
TEST(PerturbationReplay, ASlowNodeUnderTensorParallelismFoldsToOneSlowReplica) {
  StepPlan plan = one_layer_plan(2, 0.2e9);
  for (LayerPlan& lp : plan.layers) {
    lp.forward.ops.push_back(
        {.name = "tp_ar", .is_comm = true, .scope = Scope::kTp, .collective = CollectiveKind::kAllReduce, .bytes = 4e6});
  }
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 2, .microbatches = 4});
  PlanSimulation sim{.plan = &plan, .schedule = &sched, .position_layers = one_layer_per_stage(2),
                     .parallel = {.tp = 2, .pp = 2, .dp = 2, .micro_batch = 1, .global_batch = 8},
                     .topology = {.gpus = 8, .gpus_per_node = 2, .intra_node = {.bandwidth = 100e9, .latency = 1e-6},
                                  .inter_node = {.bandwidth = 25e9, .latency = 5e-6}}};
  sim.perturbations.slow.push_back({.nodes = {3}, .slowdown = 1.7});
  const StepResult folded = simulate_plan(sim, {.fidelity = Fidelity::kFolded});
  const StepResult full = simulate_plan(sim, {.fidelity = Fidelity::kFull});
  EXPECT_EQ(folded.fidelity, Fidelity::kFolded) << folded.fidelity_note;
  EXPECT_EQ(folded.simulated_ranks, 4);
  EXPECT_EQ(full.simulated_ranks, 8);
  EXPECT_DOUBLE_EQ(folded.step_time_s, full.step_time_s);
  EXPECT_DOUBLE_EQ(folded.breakdown.dp, full.breakdown.dp);
  EXPECT_DOUBLE_EQ(folded.breakdown.tp, full.breakdown.tp);
  EXPECT_DOUBLE_EQ(folded.critical_path_perturbed_s, full.critical_path_perturbed_s);
  PlanSimulation healthy = sim;
  healthy.perturbations = {};
  EXPECT_GT(folded.step_time_s, simulate_plan(healthy, {}).step_time_s);
  // Only GPU 7 slow: its TP peer 6 is healthy, no replica represents both, so full fidelity.
  sim.perturbations.slow[0] = {.ranks = {7}, .slowdown = 1.7};
  const StepResult one = simulate_plan(sim, {.fidelity = Fidelity::kFolded});
  EXPECT_EQ(one.fidelity, Fidelity::kFull);
  EXPECT_DOUBLE_EQ(one.step_time_s, simulate_plan(sim, {.fidelity = Fidelity::kFull}).step_time_s);
}

// Costs alone against the healthy step: a straggler costs time on the critical path; a degraded
// NVLink on a cluster whose traffic never uses NVLink (one GPU per node) costs nothing and is off it.
TEST(PerturbationReplay, EachPerturbationCostIsItsStepAloneMinusTheHealthyStep) {
  SimulationInput in;
  in.model = testing::tiny_model();
  in.hardware = testing::tiny_gpu();
  in.parallel = {.dp = 2, .micro_batch = 1, .global_batch = 4};
  in.topology = {.gpus = 2, .gpus_per_node = 1, .inter_node = {.bandwidth = 25e9, .latency = 5e-6}};
  in.perturbations = slow_ranks({1}, 2.0);
  in.perturbations.degraded_links.push_back({.name = "nvlink-0", .level = perturb::LinkLevel::kNvlink, .gpu = 0,
                                             .bandwidth_fraction = 0.5});
  StepResult r = simulate_step(in, {});
  add_perturbation_costs(in, {}, r);
  SimulationInput healthy = in;
  healthy.perturbations = {};
  const double base = simulate_step(healthy, {}).step_time_s;
  ASSERT_TRUE(r.healthy_step_time_s.has_value());
  EXPECT_DOUBLE_EQ(*r.healthy_step_time_s, base);
  ASSERT_EQ(r.perturbation_costs.size(), 2U);
  EXPECT_EQ(r.perturbation_costs[0].name, "slow[0]");
  EXPECT_DOUBLE_EQ(r.perturbation_costs[0].cost_s, r.step_time_s - base);  // the NVLink adds nothing
  EXPECT_GT(r.perturbation_costs[0].cost_s, 0);
  EXPECT_GT(r.perturbation_costs[0].critical_path_s, 0);
  EXPECT_EQ(r.perturbation_costs[1].name, "nvlink-0");
  EXPECT_EQ(r.perturbation_costs[1].cost_s, 0);
  EXPECT_EQ(r.perturbation_costs[1].critical_path_s, 0);
}

}  // namespace
}  // namespace mofasim::executor
