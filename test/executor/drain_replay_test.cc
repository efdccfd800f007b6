// The asynchronous checkpoint drain beside the step's own traffic (replay_background.h,
// replay_drain.h; issue 17): hand-worked drain and step times on a closed-form plan.
#include <gtest/gtest.h>

#include <stdexcept>

#include "schedules/factory.h"
#include "sim/executor/replay_drain.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

// Two nodes of one GPU each, dp 2 over 50 GB/s NICs (one rail per node), one micro-batch of
// F 1 + B 2 + W 1 = 4 ms compute, then one 0.1 GB gradient all-reduce: a ring of 2 moves 1x the
// buffer over each NIC's tx, 0.1 GB / 50 GB/s = 2 ms. Healthy step: 6 ms.
StepPlan one_layer_plan() {
  StepPlan plan = testing::uniform_plan(1, 1, 1e-3, 2e-3, 1e-3);
  for (LayerPlan& lp : plan.layers) lp.dense_grad_bytes = 0.1e9;
  return plan;
}

class DrainReplay : public ::testing::Test {
 protected:
  DrainReplay() {
    sim_ = PlanSimulation{.plan = &plan_, .schedule = &sched_, .position_layers = {{0, 1}},
                          .parallel = {.dp = 2, .micro_batch = 1, .global_batch = 2},
                          .topology = {.gpus = 2, .gpus_per_node = 1, .inter_node = {.bandwidth = 50e9, .latency = 0}}};
  }
  DrainUnderTraining drain(const BackgroundEgress& egress, std::int64_t max_steps = 1000,
                           Fidelity fidelity = Fidelity::kFolded) {
    return simulate_drain([this](const SimulateOptions& o) {
                            ++replays_;
                            return simulate_plan(sim_, o);
                          },
                          {.fidelity = fidelity}, egress, max_steps);
  }
  static BackgroundEgress shards(double bytes) { return {.bytes_by_gpu = {bytes, bytes}}; }

  StepPlan plan_ = one_layer_plan();
  schedules::Schedule sched_ = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  PlanSimulation sim_;
  int replays_ = 0;  // steps replayed by the last drains, the healthy one included
};

// No other traffic on the NIC while it drains: 0.1 GB / 50 GB/s = 2 ms, done within the 4 ms of
// compute; the step is untouched.
TEST_F(DrainReplay, AloneOnTheNicTheDrainTakesSizeOverBandwidth) {
  const DrainUnderTraining d = drain(shards(0.1e9));
  EXPECT_NEAR(d.healthy_step_s, 6e-3, 1e-9);
  EXPECT_NEAR(d.drain_s, 2e-3, 1e-9);
  EXPECT_NEAR(d.first_step_s, 6e-3, 1e-9);
  EXPECT_EQ(d.draining_steps, 1);
  EXPECT_NEAR(d.slowdown_s, 0, 1e-12);
  EXPECT_FALSE(d.outlived_interval);
  // Started 1 ms into the step: it ends at 3 ms.
  BackgroundEgress late = shards(0.1e9);
  late.start_s = 1e-3;
  EXPECT_NEAR(drain(late).drain_s, 3e-3, 1e-9);
}

// The storage tier's shared limit of 40 GB/s binds: two GPUs drain at 20 GB/s each, 0.06 GB in
// 3 ms. Folded fidelity simulates GPU 0 only, its flow weighted 2 on the shared limit: the same.
TEST_F(DrainReplay, TheSharedStorageLimitSplitsOverEveryGpuFoldedOrFull) {
  BackgroundEgress e = shards(0.06e9);
  e.shared_limit = 40e9;
  EXPECT_NEAR(drain(e, 1000, Fidelity::kFolded).drain_s, 3e-3, 1e-9);
  EXPECT_NEAR(drain(e, 1000, Fidelity::kFull).drain_s, 3e-3, 1e-9);
  // A node limit of 10 GB/s binds instead: 0.06 GB / 10 GB/s = 6 ms, past the all-reduce's start
  // at 4 ms. Max-min freezes the drain at its node limit and gives the all-reduce the other
  // 40 GB/s of the NIC: 0.08 GB from 4 to 6 ms, then the last 0.02 GB alone at 50 GB/s, 0.4 ms.
  // The step takes 6.4 ms and the drain still ends at 6 ms.
  e.shared_limit = 0;
  e.node_limit = 10e9;
  const DrainUnderTraining d = drain(e);
  EXPECT_NEAR(d.drain_s, 6e-3, 1e-9);
  EXPECT_NEAR(d.first_step_s, 6.4e-3, 1e-9);
  EXPECT_NEAR(d.slowdown_s, 0.4e-3, 1e-9);
}

// The case: 0.35 GB per GPU. From 0 to 4 ms the drain is alone at 50 GB/s (0.2 GB sent,
// 0.15 GB left). At 4 ms the all-reduce joins it on each NIC's tx: max-min gives each 25 GB/s.
// The all-reduce's 0.1 GB takes 4 ms: the step ends at 8 ms instead of 6. The drain has sent
// another 0.1 GB by then; its last 0.05 GB runs alone at the start of the next step, 1 ms. So the
// drain takes 8 + 1 = 9 ms (7 ms on an idle network), spans 2 steps and costs 2 ms of training.
TEST_F(DrainReplay, DrainAndDataParallelAllReduceShareTheNicMaxMinFair) {
  for (Fidelity f : {Fidelity::kFolded, Fidelity::kFull}) {
    const DrainUnderTraining d = drain(shards(0.35e9), 1000, f);
    EXPECT_NEAR(d.first_step_s, 8e-3, 1e-9);
    EXPECT_NEAR(d.drain_s, 9e-3, 1e-9);
    EXPECT_EQ(d.draining_steps, 2);
    EXPECT_NEAR(d.slowdown_s, 2e-3, 1e-9);
  }
  // Three streams per GPU: 0 to 4 ms, 3 x 16.7 GB/s (0.05 GB left per stream); then 4 flows on
  // the NIC at 12.5 GB/s each. The streams end at 4 + 0.05 / 12.5 = 8 ms; the all-reduce has sent
  // 0.05 GB and sends the rest alone, 1 ms: the step takes 9 ms and the drain 8 ms.
  BackgroundEgress streams = shards(0.35e9);
  streams.streams = 3;
  const DrainUnderTraining s = drain(streams);
  EXPECT_NEAR(s.drain_s, 8e-3, 1e-9);
  EXPECT_NEAR(s.first_step_s, 9e-3, 1e-9);
  EXPECT_EQ(s.draining_steps, 1);
  EXPECT_NEAR(s.slowdown_s, 3e-3, 1e-9);
}

// 10 GB per GPU spans many steps. Each full step drains 0.2 GB alone (0-4 ms) and 0.1 GB beside
// the all-reduce (4-8 ms): 0.3 GB in an 8 ms step. After 33 such steps 0.1 GB is left, which the
// 34th step drains alone in 2 ms: 33 x 8 + 2 = 266 ms, slowdown 33 x 2 = 66 ms. Most of the
// identical steps are counted, not replayed.
TEST_F(DrainReplay, ADrainOverManyStepsCountsTheIdenticalOnes) {
  const DrainUnderTraining d = drain(shards(10e9));
  EXPECT_EQ(replays_, 4);  // healthy, steps 1 and 2 (which shows 31 more are alike), step 34
  EXPECT_EQ(d.draining_steps, 34);
  EXPECT_NEAR(d.drain_s, 266e-3, 1e-7);
  EXPECT_NEAR(d.slowdown_s, 66e-3, 1e-7);
  EXPECT_FALSE(d.outlived_interval);
  // An interval of 10 steps: after them 10 - 3 = 7 GB remain and drain on an idle network while
  // the next snapshot waits, 7 GB / 50 GB/s = 140 ms: 10 x 8 + 140 = 220 ms.
  const DrainUnderTraining capped = drain(shards(10e9), 10);
  EXPECT_EQ(capped.draining_steps, 10);
  EXPECT_TRUE(capped.outlived_interval);
  EXPECT_NEAR(capped.drain_s, 220e-3, 1e-7);
  EXPECT_NEAR(capped.slowdown_s, 20e-3, 1e-7);
}

// Two stages on two nodes of 4 GPUs, dp 4 with DP outermost (rank order tp-pp-cp-ep-dp: rank = pp + 2 dp), so every DP
// all-reduce crosses the NICs the drains leave by. Folded fidelity drains from replica 0's GPUs only, with fold weights on the shared and node
// limits; every number equals the full replay's.
TEST(DrainReplayFolding, FoldedEqualsFullWithSharedAndNodeLimits) {
  StepPlan plan = testing::uniform_plan(2, 2, 1e-3, 2e-3, 1e-3);
  for (LayerPlan& lp : plan.layers) lp.dense_grad_bytes = 0.2e9;
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 2, .microbatches = 4});
  PlanSimulation sim{.plan = &plan, .schedule = &sched, .position_layers = {{0, 1}, {1, 1}},
                     .parallel = {.pp = 2, .dp = 4, .micro_batch = 1, .global_batch = 16},
                     .topology = {.gpus = 8, .gpus_per_node = 4, .intra_node = {.bandwidth = 100e9, .latency = 1e-6},
                                  .inter_node = {.bandwidth = 25e9, .latency = 5e-6}},
                     .rank_order = "tp-pp-cp-ep-dp"};
  // Shards by stage (GPU g holds stage g % 2), as checkpoint shards are: folding relies on it.
  const BackgroundEgress e{.bytes_by_gpu = {1e9, 2e9, 1e9, 2e9, 1e9, 2e9, 1e9, 2e9}, .streams = 2,
                           .node_limit = 60e9, .shared_limit = 100e9};
  auto run = [&](Fidelity f) {
    return simulate_drain([&](const SimulateOptions& o) { return simulate_plan(sim, o); }, {.fidelity = f}, e, 1000);
  };
  const DrainUnderTraining folded = run(Fidelity::kFolded);
  const DrainUnderTraining full = run(Fidelity::kFull);
  EXPECT_NEAR(folded.drain_s, full.drain_s, 1e-9);
  EXPECT_NEAR(folded.first_step_s, full.first_step_s, 1e-9);
  EXPECT_NEAR(folded.slowdown_s, full.slowdown_s, 1e-9);
  EXPECT_EQ(folded.draining_steps, full.draining_steps);
  EXPECT_GT(full.slowdown_s, 0);
}

TEST_F(DrainReplay, MalformedDrainsAreRefused) {
  EXPECT_THROW(drain(shards(1e9), 0), std::invalid_argument);
  EXPECT_THROW(drain({.bytes_by_gpu = {1e9}}), std::invalid_argument);  // one GPU of two
  BackgroundEgress e = shards(1e9);
  e.streams = 0;
  EXPECT_THROW(drain(e), std::invalid_argument);
  e = shards(-1);
  EXPECT_THROW(drain(e), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::executor
