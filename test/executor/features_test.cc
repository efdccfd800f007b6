// MoFa features as DAG transformations, replayed: CP ring overlap (MoFa(21)), expert load
// imbalance, PP and DP overlap (MoFa(23) MoFa(24)), activation offload (MoFa(33) MoFa(34) MoFa(35)), MoE with EP
// all-to-all, EP overlap pairing (DualPipe, and the paired 1F1B variants worked by hand) and
// MemFine chunking.
#include <gtest/gtest.h>

#include "schedules/factory.h"
#include "sim/executor/plan_from_model.h"
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
  // Off: a/2 + 3 + a/2 = 7 ms. On (MoFa(21)): max(a/2, 3) + a/2 = 5 ms.
  const std::vector<PlanOp> ops = {
      {.name = "attention", .seconds = 4e-3, .flags = kFlagAttentionCore},
      {.name = "cp_p2p", .is_comm = true, .scope = Scope::kCp, .collective = CollectiveKind::kRingStep,
        .bytes = 0.3e9}};
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
      {.name = "cp_p2p", .is_comm = true, .scope = Scope::kCp, .collective = CollectiveKind::kRingStep,
        .bytes = 0.1e9}};
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

TEST(ExecutorFeatures, SelectiveRecomputeRerunsItsCollectivesBeforeTheBackward) {
  // One layer and a head, t = 2 at 100 GB/s: the layer's forward is an all-gather of 0.1 GB (each
  // rank receives half: 0.5 ms) and fc1 (2 ms); the head takes 1 ms each way, fc1's dgrad 1 ms.
  // Selective recompute re-runs fc1 (2 ms) before its dgrad and, when the all-gather is inside the
  // re-run part (kFlagSelectiveRecompute on the collective), the all-gather first:
  // 3.5 + 1 + (0.5 + 2) + 1 = 8 ms, against 7.5 ms when only the GEMM re-runs. It is TP time.
  auto step = [](std::uint8_t gather_flags) {
    StepPlan plan;
    LayerPlan lp;
    lp.forward.ops = {{.name = "tp_ag", .is_comm = true, .scope = Scope::kTp, .collective = CollectiveKind::kAllGather,
                       .bytes = 0.1e9, .flags = gather_flags},
                      {.name = "fc1", .seconds = 2e-3, .recompute_seconds = 2e-3, .flags = kFlagSelectiveRecompute}};
    lp.input_grad.ops = {{.name = "fc1_dgrad", .seconds = 1e-3}};
    plan.layers.push_back(lp);
    LayerPlan head;
    head.forward.ops = {{.name = "head", .seconds = 1e-3}};
    head.input_grad.ops = {{.name = "head_dgrad", .seconds = 1e-3}};
    plan.post = head;
    plan.stages.resize(1);
    const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
    PlanSimulation sim;
    sim.plan = &plan;
    sim.schedule = &sched;
    sim.position_layers = {{0, 1}};
    sim.parallel = {.tp = 2, .micro_batch = 1, .global_batch = 1};
    sim.features.recompute = model::RecomputeKind::kSelective;
    sim.topology = {.gpus = 2, .gpus_per_node = 2, .intra_node = {.bandwidth = 100e9, .latency = 0}};
    return simulate_plan(sim, {});
  };
  const StepResult gemm_only = step(kFlagNone);
  EXPECT_NEAR(gemm_only.step_time_s, 7.5e-3, 1e-8);
  const StepResult with_gather = step(kFlagSelectiveRecompute);
  EXPECT_NEAR(with_gather.step_time_s, 8e-3, 1e-8);
  EXPECT_NEAR(with_gather.breakdown.tp - gemm_only.breakdown.tp, 0.5e-3, 1e-8);
  EXPECT_NEAR(with_gather.breakdown.recompute, 2e-3, 1e-8);
}

TEST(ExecutorFeatures, PpOverlapHidesSendsUnderCompute) {
  // Slow scale-out (5 GB/s) makes PP sends expensive; blocking sends expose them (MoFa(23) off).
  SimulationInput in = tiny_input();
  const StepResult off = simulate_step(in, {});
  in.features.pp_overlap.enabled = true;
  const StepResult on = simulate_step(in, {});
  EXPECT_LT(on.step_time_s, off.step_time_s);
}

TEST(ExecutorFeatures, DpOverlapStartsBucketsDuringTheBackward) {
  // MoFa(24): with overlap, gradient buckets reduce while later layers still run backward; the
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
  // MoFa(33) MoFa(34) MoFa(35): activations leave the GPU after each layer's forward and come back before its
  // backward; the live peak drops below the resident case, the step does not get shorter. Copies
  // at 1 TB/s finish before the next layer's forward ends (at 25 GB/s they would still be in
  // flight at the peak: only transformer layers are offloaded, not the embedding).
  SimulationInput in = tiny_input();
  in.hardware.d2h_bandwidth = 1e12;
  in.hardware.h2d_bandwidth = 1e12;
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
  // the other's compute (MoFa(22)): exposed EP shrinks and the step does not grow.
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

// ---------------------------------------------------------------- EP overlap in 1F1B (MoFa(22))

// One layer per stage, each pass an all-to-all sandwiched between two compute ops:
//   F  = c1 (1 ms), dispatch a2a (2 ms), c2 (1 ms)           T_F = 4 ms
//   B  = c2' (2 ms), a2a (2 ms), c1' (2 ms); no separate W    T_B = 6 ms
// The a2a: 2 EP members inside one node, each sends half its 0.4 GB buffer over its 100 GB/s
// NVLink: 0.2 GB / 100 GB/s = 2 ms. Activation 1 GB per layer per micro-batch; PP sends free.
StepResult ep_pair_step(bool overlap) {
  constexpr double kMs = 1e-3;
  const PlanOp a2a{.name = "a2a", .is_comm = true, .scope = Scope::kEp, .collective = CollectiveKind::kAllToAll,
                   .bytes = 0.4e9};
  LayerPlan lp;
  lp.forward.ops = {{.name = "c1", .seconds = 1 * kMs}, a2a, {.name = "c2", .seconds = 1 * kMs}};
  lp.input_grad.ops = {{.name = "c2_grad", .seconds = 2 * kMs}, a2a, {.name = "c1_grad", .seconds = 2 * kMs}};
  lp.activation_bytes = lp.activation_bytes_selective = lp.activation_bytes_full = 1e9;
  StepPlan plan;
  plan.layers = {lp, lp};
  plan.stages.resize(2);
  // p = 2, ep = 2 carved out of dp = 2, m = 8 / (1 * 2) = 4.
  const model::ParallelSpec par{.pp = 2, .dp = 2, .ep = 2, .micro_batch = 1, .global_batch = 8};
  const schedules::Schedule sched = schedules::build_schedule(
      model::ScheduleKind::k1F1B, {.stages = 2, .microbatches = 4, .pair_steady_passes = overlap});
  PlanSimulation sim;
  sim.plan = &plan;
  sim.schedule = &sched;
  sim.position_layers = {{0, 1}, {1, 1}};
  sim.parallel = par;
  sim.features.ep_overlap.enabled = overlap;  // alpha = beta = 1
  sim.topology = {.gpus = 4, .gpus_per_node = 4, .intra_node = {.bandwidth = 100e9, .latency = 0},
                  .inter_node = {.bandwidth = 100e9, .latency = 0}};
  return simulate_plan(sim, {});
}

TEST(ExecutorFeatures, EpOverlapPairedOneFOneBStepByHand) {
  // Off: plain 1F1B, every pass runs alone: (m + p - 1)(T_F + T_B) = 5 * 10 = 50 ms.
  const StepResult off = ep_pair_step(false);
  EXPECT_NEAR(off.step_time_s, 50e-3, 1e-8);
  // On: stage 0 runs F0 F1 F2 | F3+B0 | B1 B2 B3, stage 1 F0 | F1+B0 | F2+B1 | F3+B2 | B3. In a pair
  // the generator interleaves c1(F), c2'(B), a2a(F), c2(F), a2a(B), c1'(B) on the two streams, so
  // with both inputs there a pair takes (MoFa(22) with alpha = beta = 1)
  //   c1 + max(c2', a2a_F) + max(c2, a2a_B) + c1' = 1 + max(2, 2) + max(1, 2) + 2 = 7 ms  (< 10).
  // Stage 0: F0..F2 in [0, 12]. Stage 1: F0 [4, 8]; its pairs start when the previous one ends and
  // the forward input is there: [8, 15], [15, 22], [22, 29]; B3 [29, 35] (each B sends at its end).
  // Stage 0's pair: c1(F3) [12, 13], then waits for B0 (15): c2' [15, 17], c2(F3) [17, 18],
  // a2a(B0) [17, 19], c1' [19, 21]. B1 arrives 22: [22, 28]; B2 at 29: [29, 35]; B3 at 35: [35, 41].
  const StepResult on = ep_pair_step(true);
  EXPECT_NEAR(on.step_time_s, 41e-3, 1e-8);
  EXPECT_LT(on.breakdown.ep, off.breakdown.ep);
  // Memory: one_f_one_b.h's min(2(p - s), m) micro-batches in flight (plain: min(p - s, m)).
  EXPECT_DOUBLE_EQ(on.memory[0].peak_activation_bytes, 4e9);
  EXPECT_DOUBLE_EQ(on.memory[1].peak_activation_bytes, 2e9);
  EXPECT_DOUBLE_EQ(off.memory[0].peak_activation_bytes, 2e9);
  EXPECT_DOUBLE_EQ(off.memory[1].peak_activation_bytes, 1e9);
}

// The tiny MoE model with EP inside a slow node, for 1F1B and interleaved 1F1B, through
// plan_from_model like simulate_step, on the step's own shape (schedules::step_shape pairs the
// steady passes when ep_overlap is on) unless `plain_order` keeps the unpaired order.
StepResult moe_step(model::ScheduleKind kind, bool overlap, bool plain_order = false) {
  SimulationInput in = tiny_moe();
  in.parallel = {.tp = 1, .pp = 2, .vpp = kind == model::ScheduleKind::kInterleaved1F1B ? 2 : 1, .dp = 4,
                 .ep = 4, .micro_batch = 1, .global_batch = 32, .schedule = kind};
  in.topology.intra_node.bandwidth = 10e9;  // all-to-all heavy
  in.features.ep_overlap.enabled = overlap;
  schedules::PipelineShape shape = schedules::step_shape(in.model, in.parallel, in.features);
  EXPECT_EQ(shape.pair_steady_passes, overlap);
  if (plain_order) shape.pair_steady_passes = false;
  const schedules::Schedule sched = schedules::build_schedule(kind, shape);
  const StepPlan plan = plan_from_model(
      {.model = &in.model, .hardware = &in.hardware, .parallel = in.parallel, .features = in.features, .schedule = &sched});
  return simulate_plan({.plan = &plan, .schedule = &sched, .position_layers = position_layers(in.model, in.parallel, sched),
                        .hardware = in.hardware, .parallel = in.parallel, .features = in.features,
                        .topology = in.topology},
                       {});
}

TEST(ExecutorFeatures, EpOverlapWithoutSchedulePairsKeepsTheDagAcyclic) {
  // An order that marks no pairs: ep_overlap only sets the all-to-all's alpha/beta; the DAG must
  // stay acyclic (pairing adjacent F/B of plain 1F1B would deadlock, see generate_pipeline.cc) and the step
  // is unchanged when alpha = beta = 1.
  const StepResult off = moe_step(model::ScheduleKind::k1F1B, false);
  const StepResult on = moe_step(model::ScheduleKind::k1F1B, true, /*plain_order=*/true);
  EXPECT_DOUBLE_EQ(on.step_time_s, off.step_time_s);
}

TEST(ExecutorFeatures, EpOverlapPairsMakeCommHeavyMoeStepsFaster) {
  for (const model::ScheduleKind kind : {model::ScheduleKind::k1F1B, model::ScheduleKind::kInterleaved1F1B}) {
    SCOPED_TRACE(schedules::to_string(kind));
    const StepResult off = moe_step(kind, false);
    const StepResult on = moe_step(kind, true);
    EXPECT_GT(off.breakdown.ep, 0.1 * off.step_time_s);  // the plan is communication-heavy
    EXPECT_LT(on.step_time_s, off.step_time_s);
    EXPECT_LT(on.breakdown.ep, off.breakdown.ep);
    EXPECT_NEAR(on.breakdown.total(), on.step_time_s, 1e-9);
    // The memory model reads the paired variant's in-flight count (one_f_one_b.h: counted per
    // op, the pair's F opening before its B frees). The replay interleaves the pair layer by
    // layer, so the B frees its upper layers while the F fills its lower ones: it holds more than
    // the plain order and at most the model's count.
    for (std::size_t s = 0; s < on.memory.size(); ++s) {
      const StageMemory& m = on.memory[s];
      EXPECT_GT(m.model_activation_bytes, off.memory[s].model_activation_bytes) << "stage " << s;
      EXPECT_GT(m.peak_activation_bytes, off.memory[s].peak_activation_bytes) << "stage " << s;
      EXPECT_LE(m.peak_activation_bytes, 1.02 * m.model_activation_bytes) << "stage " << s;
    }
  }
}

}  // namespace
}  // namespace mofasim::executor
