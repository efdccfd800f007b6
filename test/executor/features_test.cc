// MoFa features as DAG transformations, replayed: CP ring overlap (eq. 21), expert load
// imbalance, PP and DP overlap (eq. 23-24), activation offload (eq. 33-35), MoE with EP
// all-to-all, EP overlap pairing and MemFine chunking.
#include <gtest/gtest.h>

#include "schedules/factory.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

using testing::tiny_gpu;
using testing::tiny_model;

// One stage, one micro-batch, one layer whose forward is `ops`; nothing in the backward.
StepResult one_layer(const std::vector<PlanOp>& ops, const model::ParallelSpec& par, const model::FeatureSpec& f,
                     const topology::TopologySpec& topo, double imbalance = 1.0) {
  StepPlan plan;
  LayerPlan lp;
  lp.forward.ops = ops;
  plan.layers.push_back(lp);
  plan.stages.resize(1);
  const schedules::Schedule sched =
      schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  PlanSimulation sim;
  sim.plan = &plan;
  sim.schedule = &sched;
  sim.position_layers = {{0, 1}};
  sim.parallel = par;
  sim.features = f;
  sim.topology = topo;
  sim.load_imbalance = imbalance;
  return simulate_plan(sim, {});
}

TEST(ExecutorFeatures, CpRingOverlapsKvTransferWithAttention) {
  // c = 2: attention a = 4 ms in two 2 ms steps; one KV block of 0.3 GB at 100 GB/s = 3 ms.
  // Off: a/2 + 3 + a/2 = 7 ms. On (eq. 21): max(a/2, 3) + a/2 = 5 ms.
  const std::vector<PlanOp> ops = {
      {.name = "attention", .seconds = 4e-3, .flags = kFlagAttentionCore},
      {.name = "cp_p2p", .is_comm = true, .scope = Scope::kCp, .collective = Collective::kSendRecv, .bytes = 0.3e9}};
  const model::ParallelSpec par{.cp = 2, .micro_batch = 1, .global_batch = 1};
  const topology::TopologySpec topo{.gpus = 2, .gpus_per_node = 2, .intra_node = {.bandwidth = 100e9, .latency = 0}};
  model::FeatureSpec f;
  EXPECT_NEAR(one_layer(ops, par, f, topo).step_time_s, 7e-3, 1e-8);
  f.cp_overlap.enabled = true;
  const StepResult on = one_layer(ops, par, f, topo);
  EXPECT_NEAR(on.step_time_s, 5e-3, 1e-8);
  // Exposed CP: the 1 ms the transfer outlasts the first attention step.
  EXPECT_NEAR(on.breakdown.cp, 1e-3, 1e-8);
}

TEST(ExecutorFeatures, LoadImbalanceStretchesExpertCompute) {
  // Expert compute 2 ms at mean load; busiest EP rank carries 1.5x the tokens -> 3 ms; other ops unchanged.
  const std::vector<PlanOp> ops = {{.name = "router", .seconds = 1e-3},
                                   {.name = "experts", .seconds = 2e-3, .flags = kFlagExpert}};
  const model::ParallelSpec par{.micro_batch = 1, .global_batch = 1};
  EXPECT_NEAR(one_layer(ops, par, {}, testing::free_topology(1), 1.5).step_time_s, 4e-3, 1e-9);
}

TEST(ExecutorFeatures, OverlapContentionCoefficientsSlowBothSides) {
  // CP ring with overlap and alpha = 1.5, beta = 2: attention step 1 (2 ms) runs beside the 1 ms
  // transfer. Both start at 0: the transfer progresses at 1/2 -> would end at 2 ms; attention at
  // 1/1.5. At 2 ms the transfer ends with attention 2/1.5 = 1.333 ms done; the remaining 0.667 ms
  // runs alone -> 2.667 ms; then attention step 2 (2 ms): 4.667 ms.
  const std::vector<PlanOp> ops = {
      {.name = "attention", .seconds = 4e-3, .flags = kFlagAttentionCore},
      {.name = "cp_p2p", .is_comm = true, .scope = Scope::kCp, .collective = Collective::kSendRecv, .bytes = 0.1e9}};
  const model::ParallelSpec par{.cp = 2, .micro_batch = 1, .global_batch = 1};
  const topology::TopologySpec topo{.gpus = 2, .gpus_per_node = 2, .intra_node = {.bandwidth = 100e9, .latency = 0}};
  model::FeatureSpec f;
  f.cp_overlap = {.enabled = true, .alpha = 1.5, .beta = 2.0};
  EXPECT_NEAR(one_layer(ops, par, f, topo).step_time_s, 2e-3 + (2e-3 - 2e-3 / 1.5) + 2e-3, 1e-8);
}

SimulationInput tiny_input() {
  SimulationInput in;
  in.model = tiny_model();
  in.hardware = tiny_gpu();
  in.parallel = {.tp = 2, .pp = 2, .dp = 2, .micro_batch = 1, .global_batch = 8, .sequence_parallel = true,
                 .schedule = model::ScheduleKind::k1F1B};
  in.topology = {.gpus = 8, .gpus_per_node = 4, .intra_node = {.bandwidth = 200e9, .latency = 2e-6},
                 .inter_node = {.bandwidth = 5e9, .latency = 5e-6}};
  return in;
}

TEST(ExecutorFeatures, PpOverlapHidesSendsUnderCompute) {
  // Slow scale-out (5 GB/s) makes PP sends expensive; blocking sends expose them (eq. 23 off).
  SimulationInput in = tiny_input();
  const StepResult off = simulate_step(in, {});
  in.features.pp_overlap.enabled = true;
  const StepResult on = simulate_step(in, {});
  EXPECT_LT(on.step_time_s, off.step_time_s);
}

TEST(ExecutorFeatures, DpOverlapStartsBucketsDuringTheBackward) {
  // Eq. (24): with overlap, gradient buckets reduce while later layers still run backward; the
  // exposed DP time can only shrink.
  SimulationInput in = tiny_input();
  in.features.dp_bucket_bytes = 1e6;
  const StepResult off = simulate_step(in, {});
  in.features.dp_overlap.enabled = true;
  const StepResult on = simulate_step(in, {});
  EXPECT_GT(off.breakdown.dp, 0);
  EXPECT_LT(on.breakdown.dp, off.breakdown.dp);
  EXPECT_LE(on.step_time_s, off.step_time_s);
}

TEST(ExecutorFeatures, ActivationOffloadFreesDeviceMemory) {
  // Eq. (33)-(35): activations leave the GPU after each layer's forward and come back before its
  // backward; the live peak drops below the resident case, the step does not get shorter.
  SimulationInput in = tiny_input();
  const StepResult base = simulate_step(in, {});
  in.features.activation_offload.enabled = true;
  const StepResult off = simulate_step(in, {});
  EXPECT_LT(off.memory[0].peak_activation_bytes, base.memory[0].peak_activation_bytes);
  EXPECT_GE(off.step_time_s, base.step_time_s);
}

SimulationInput tiny_moe() {
  SimulationInput in = tiny_input();
  in.model.moe = {.num_experts = 8, .top_k = 2, .expert_ffn_hidden_size = 512};
  in.parallel.ep = 2;
  return in;
}

TEST(ExecutorFeatures, MoeLayersRunAllToAllOverTheExpertGroup) {
  const StepResult r = simulate_step(tiny_moe(), {});
  EXPECT_GT(r.breakdown.ep, 0);
  // Folding stays exact with EP groups inside a node.
  const StepResult full = simulate_step(tiny_moe(), {.fidelity = Fidelity::kFull});
  EXPECT_DOUBLE_EQ(r.step_time_s, full.step_time_s);
}

TEST(ExecutorFeatures, EpOverlapWithoutSchedulePairsKeepsTheDagAcyclic) {
  // 1F1B marks no overlapped pairs: ep_overlap only sets the all-to-all's alpha/beta; the DAG must
  // stay acyclic (pairing adjacent F/B of 1F1B would deadlock, see generate.cc) and the step is
  // unchanged when alpha = beta = 1.
  SimulationInput in = tiny_moe();
  const StepResult off = simulate_step(in, {});
  in.features.ep_overlap.enabled = true;
  const StepResult on = simulate_step(in, {});
  EXPECT_DOUBLE_EQ(on.step_time_s, off.step_time_s);
}

TEST(ExecutorFeatures, MemFineChunksLowerTheExpertActivationPeak) {
  // MemFine keeps only one chunk's routed-expert activation live: the peak drops, the
  // recompute adds time.
  SimulationInput in = tiny_moe();
  const StepResult base = simulate_step(in, {});
  in.features.memfine = true;
  in.features.memfine_chunks = 4;
  const StepResult mf = simulate_step(in, {});
  EXPECT_LT(mf.memory[0].peak_activation_bytes, base.memory[0].peak_activation_bytes);
  EXPECT_GT(mf.breakdown.recompute, 0);
}

TEST(ExecutorFeatures, DualPipeOverlappedPairsHideAllToAll) {
  // DualPipe marks F&B pairs; with ep_overlap on they interleave so one pass's all-to-all runs under
  // the other's compute (eq. 22): exposed EP shrinks and the step does not grow.
  SimulationInput in = tiny_moe();
  in.parallel.schedule = model::ScheduleKind::kDualPipe;
  in.parallel.global_batch = 16;
  const StepResult off = simulate_step(in, {});
  in.features.ep_overlap.enabled = true;
  const StepResult on = simulate_step(in, {});
  EXPECT_NEAR(on.breakdown.total(), on.step_time_s, 1e-9);
  EXPECT_LT(on.breakdown.ep, off.breakdown.ep);
  EXPECT_LE(on.step_time_s, off.step_time_s);
}

}  // namespace
}  // namespace mofasim::executor
