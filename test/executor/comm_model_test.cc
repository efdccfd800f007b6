// The communication model in the replay: NCCL protocol choice per message size (the same cost as
// topology's closed form) and overlap interference (a running collective slows its rank's compute
// by sm_count / (sm_count − collective_sms)), each against a hand-worked step time.
#include <gtest/gtest.h>

#include "schedules/factory.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

// One stage, one micro-batch, one layer whose forward is `ops`; nothing in the backward.
StepResult one_layer(const std::vector<PlanOp>& ops, const model::ParallelSpec& par, const model::HardwareSpec& hw,
                     const model::FeatureSpec& f, const topology::TopologySpec& topo) {
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
  sim.hardware = hw;
  sim.parallel = par;
  sim.features = f;
  sim.topology = topo;
  return simulate_plan(sim, {});
}

model::HardwareSpec h100_sms() {
  model::HardwareSpec hw = testing::tiny_gpu();
  hw.kernels.sm_count = 132;
  hw.collective_sms = 24;
  return hw;
}

TEST(ReplayCommModel, OverlappedTransferStealsSmsFromCompute) {
  // CP ring, c = 2, overlap on with alpha = beta = 1 given: attention 4 ms in two 2 ms steps; the
  // 0.1 GB KV block at 100 GB/s takes 1 ms beside step 1. With 24 of 132 SMs held by the
  // send/recv, step 1 runs at 108/132 while the transfer runs: 1 ms covers 0.8182 ms of it, the
  // remaining 1.1818 ms runs alone, then step 2: 2 + (1 − 108/132) + 2 = 4.1818 ms.
  const std::vector<PlanOp> ops = {
      {.name = "attention", .seconds = 4e-3, .flags = kFlagAttentionCore},
      {.name = "cp_p2p", .is_comm = true, .scope = Scope::kCp, .collective = CollectiveKind::kRingStep,
        .bytes = 0.1e9}};
  const model::ParallelSpec par{.cp = 2, .micro_batch = 1, .global_batch = 1};
  const topology::TopologySpec topo{.gpus = 2, .gpus_per_node = 2, .intra_node = {.bandwidth = 100e9, .latency = 0}};
  model::FeatureSpec f;
  f.cp_overlap = {.enabled = true, .alpha = 1.0, .beta = 1.0};
  EXPECT_NEAR(one_layer(ops, par, h100_sms(), f, topo).step_time_s, 4e-3 + 1e-3 * (1 - 108.0 / 132.0), 1e-9);
  // The switch off: overlap is free again, max(2, 1) + 2 = 4 ms.
  f.overlap_interference = false;
  EXPECT_NEAR(one_layer(ops, par, h100_sms(), f, topo).step_time_s, 4e-3, 1e-9);
  // Unknown SM counts: no interference either.
  f.overlap_interference = true;
  EXPECT_NEAR(one_layer(ops, par, testing::tiny_gpu(), f, topo).step_time_s, 4e-3, 1e-9);
}

TEST(ReplayCommModel, AllReduceRunsTheNcclProtocolOfItsSize) {
  // A lone TP all-reduce on 8 GPUs of one node at 370 GB/s, NCCL model, LL cap 141 GB/s.
  // 8 KiB: LL, 6.6 + 14·0.6 = 15.0 µs + (370/141) · 1.75 · 8192 / 370e9 = 15.1017 µs.
  // 1 GiB: Simple, 8.4 + 14·3.4 = 56 µs + 1.75 · 2^30 / 370e9 = 5.1345 ms.
  const model::ParallelSpec par{.tp = 8, .micro_batch = 1, .global_batch = 1};
  topology::TopologySpec topo{.gpus = 8, .gpus_per_node = 8, .intra_node = {.bandwidth = 370e9, .latency = 2e-6}};
  topo.collectives = {.model = topology::CollectiveModel::kNccl, .ll_max_bandwidth = 141e9};
  const auto all_reduce = [](double bytes) {
    return std::vector<PlanOp>{
        {.name = "tp_ar", .is_comm = true, .scope = Scope::kTp, .collective = CollectiveKind::kAllReduce,
          .bytes = bytes}};
  };
  const model::FeatureSpec f;
  EXPECT_NEAR(one_layer(all_reduce(8192), par, testing::tiny_gpu(), f, topo).step_time_s,
              15.0e-6 + 370.0 / 141.0 * 1.75 * 8192 / 370e9, 2e-9);
  EXPECT_NEAR(one_layer(all_reduce(1073741824.0), par, testing::tiny_gpu(), f, topo).step_time_s,
              56e-6 + 1.75 * 1073741824.0 / 370e9, 2e-9);
  // The α–β model: 14 steps · 2 µs + the same bandwidth term.
  topo.collectives.model = topology::CollectiveModel::kAlphaBeta;
  EXPECT_NEAR(one_layer(all_reduce(8192), par, testing::tiny_gpu(), f, topo).step_time_s,
              28e-6 + 1.75 * 8192 / 370e9, 2e-9);
}

}  // namespace
}  // namespace mofasim::executor
