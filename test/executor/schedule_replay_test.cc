// Pipeline schedules through the FULL replay path (generate -> TaskGraph check -> engine replay ->
// analysis) against their closed forms, with uniform stages and free communication.
#include <gtest/gtest.h>

#include "schedules/factory.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

using testing::free_topology;
using testing::uniform_plan;

StepResult run(model::ScheduleKind kind, int p, int m, int v, double f, double bi, double w, double act = 0) {
  const schedules::Schedule sched = schedules::build_schedule(kind, {.stages = p, .microbatches = m, .chunks = v});
  const int positions = sched.positions_per_lane();
  const StepPlan plan = uniform_plan(positions, p, f, bi, w, act);
  std::vector<LayerRange> layers;
  for (int i = 0; i < positions; ++i) layers.push_back({.first = i, .count = 1});
  model::ParallelSpec par{.pp = p, .vpp = v, .micro_batch = 1, .global_batch = m, .schedule = kind};
  return simulate_plan({.plan = &plan, .schedule = &sched, .position_layers = layers, .parallel = par,
                        .topology = free_topology(p)},
                       {.fidelity = Fidelity::kFolded});
}

TEST(ExecutorScheduleReplay, OneFOneBStepIsMPlusPMinusOneTimesFPlusB) {
  // p = 4, m = 8, F = 1 ms, B = 2 ms (full backward: input 1.5 ms + weight 0.5 ms).
  // 1F1B step = (m + p - 1)(F + B) = 11 * 3 ms = 33 ms.
  const StepResult r = run(model::ScheduleKind::k1F1B, 4, 8, 1, 1e-3, 1.5e-3, 0.5e-3);
  EXPECT_NEAR(r.step_time_s, 33e-3, 1e-9);
  // Every stage is busy m(F + B) = 24 ms; the rest, (p - 1)(F + B) = 9 ms, is bubble.
  EXPECT_NEAR(r.breakdown.compute, 24e-3, 1e-9);
  EXPECT_NEAR(r.breakdown.pp_bubble, 9e-3, 1e-9);
  EXPECT_NEAR(r.breakdown.total(), r.step_time_s, 1e-9);
}

TEST(ExecutorScheduleReplay, InterleavedStepIsMvPlusPMinusOneTimesFPlusBOverV) {
  // p = 4, v = 2, m = 8; per full stage F = 2 ms, B = 4 ms, so per chunk 1 ms and 2 ms.
  // Interleaved step = (m v + p - 1)(F + B)/v = (16 + 3) * 6 ms / 2 = 57 ms.
  const StepResult r = run(model::ScheduleKind::kInterleaved1F1B, 4, 8, 2, 1e-3, 1.5e-3, 0.5e-3);
  EXPECT_NEAR(r.step_time_s, 57e-3, 1e-9);
  EXPECT_NEAR(r.breakdown.pp_bubble, 3 * 6e-3 / 2, 1e-9);
}

TEST(ExecutorScheduleReplay, ZeroBubbleH1BubbleIsPMinusOneTimesFPlusBMinusW) {
  // p = 4, m = 8, F = B = W = 1 ms. Bubble = (p - 1)(F + B - W) = 3 ms;
  // step = m (F + B + W) + bubble = 24 + 3 = 27 ms.
  const StepResult r = run(model::ScheduleKind::kZbH1, 4, 8, 1, 1e-3, 1e-3, 1e-3);
  EXPECT_NEAR(r.step_time_s, 27e-3, 1e-9);
  EXPECT_NEAR(r.breakdown.pp_bubble, 3e-3, 1e-9);
}

TEST(ExecutorScheduleReplay, OneFOneBPeakActivationIsInFlightMicroBatchesPerStage) {
  // One layer per stage storing A = 1 MB per micro-batch; 1F1B holds min(p - s, m) on stage s.
  const double a = 1e6;
  const StepResult r = run(model::ScheduleKind::k1F1B, 4, 8, 1, 1e-3, 1.5e-3, 0.5e-3, a);
  ASSERT_EQ(r.memory.size(), 4u);
  for (int s = 0; s < 4; ++s) EXPECT_DOUBLE_EQ(r.memory[static_cast<std::size_t>(s)].peak_activation_bytes, (4 - s) * a);
}

TEST(ExecutorScheduleReplay, GpipeHoldsEveryMicroBatch) {
  // GPipe runs all forwards first: stage 0 holds all m = 6 micro-batches; step = (m + p - 1)(F + B).
  const double a = 2e6;
  const StepResult r = run(model::ScheduleKind::kGpipe, 3, 6, 1, 1e-3, 1e-3, 1e-3, a);
  EXPECT_DOUBLE_EQ(r.memory[0].peak_activation_bytes, 6 * a);
  EXPECT_NEAR(r.step_time_s, 8 * 3e-3, 1e-9);
}

TEST(ExecutorScheduleReplay, CycleInScheduleIsAnErrorNamingTasks) {
  // Stage 0 runs B(mb 0) before F(mb 1); stage 1 runs F(mb 1) before B(mb 0) ... and F(mb 0) last:
  // stage 1's B(mb 0) needs its F(mb 0), which comes after F(mb 1), which needs stage 0's F(mb 1),
  // which stage 0 runs only after B(mb 0) -> cycle.
  schedules::Schedule sched(model::ScheduleKind::k1F1B, schedules::ScheduleLayout::single_lane(2, 2, 1));
  using schedules::Op;
  using schedules::Phase;
  sched.append(0, {.phase = Phase::kForward, .microbatch = 0});
  sched.append(0, {.phase = Phase::kBackward, .microbatch = 0});
  sched.append(0, {.phase = Phase::kForward, .microbatch = 1});
  sched.append(0, {.phase = Phase::kBackward, .microbatch = 1});
  sched.append(1, {.phase = Phase::kForward, .microbatch = 1});
  sched.append(1, {.phase = Phase::kBackward, .microbatch = 1});
  sched.append(1, {.phase = Phase::kForward, .microbatch = 0});
  sched.append(1, {.phase = Phase::kBackward, .microbatch = 0});
  const StepPlan plan = uniform_plan(2, 2, 1e-3, 1e-3, 1e-3);
  model::ParallelSpec par{.pp = 2, .micro_batch = 1, .global_batch = 2};
  try {
    (void)simulate_plan({.plan = &plan, .schedule = &sched, .position_layers = {{0, 1}, {1, 1}}, .parallel = par,
                         .topology = free_topology(2)},
                        {});
    FAIL() << "a cyclic schedule must not simulate";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
    EXPECT_NE(msg.find("mb "), std::string::npos) << msg;
    EXPECT_NE(msg.find("stage "), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace mofasim::executor
