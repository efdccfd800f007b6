// The evaluator on hand-built schedules: deadlock reports, p2p latency, bad input.
#include <gtest/gtest.h>

#include "schedules/evaluate.h"
#include "schedules/factory.h"

namespace mofasim::schedules {
namespace {

using namespace std::chrono_literals;

Op f(std::uint32_t mb) { return Op{.phase = Phase::kForward, .microbatch = mb}; }
Op b(std::uint32_t mb) { return Op{.phase = Phase::kBackward, .microbatch = mb}; }

// Two stages, two micro-batches. Stage 0 runs F0 B0 F1 B1 but stage 1 insists on F1 first:
// stage 1 waits for F(mb 1) of stage 0, which sits behind B(mb 0), which waits for stage 1.
TEST(Evaluate, DeadlockNamesTheWaitingOps) {
  Schedule s(ScheduleKind::k1F1B, ScheduleLayout::single_lane(2, 2, 1));
  for (Op op : {f(0), b(0), f(1), b(1)}) s.append(0, op);
  for (Op op : {f(1), b(1), f(0), b(0)}) s.append(1, op);
  const auto costs = CostTable::uniform(2, 1, {.forward = 1ns, .input_grad = 1ns, .weight_grad = 1ns});
  try {
    (void)evaluate(s, costs);
    FAIL() << "expected ScheduleDeadlock";
  } catch (const ScheduleDeadlock& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("stage 0 op 1 B(mb 0, chunk 0) waits for B(mb 0) of stage 1 chunk 0"), std::string::npos)
        << what;
    EXPECT_NE(what.find("stage 1 op 0 F(mb 1, chunk 0) waits for F(mb 1) of stage 0 chunk 0"), std::string::npos)
        << what;
    EXPECT_NE(what.find("7 ops unrun"), std::string::npos) << what;  // only stage 0's F0 ran
    ASSERT_EQ(e.waiting().size(), 2u);
    EXPECT_EQ(e.waiting()[0].stage, 0);
    EXPECT_EQ(e.waiting()[0].index, 1u);
    EXPECT_EQ(e.waiting()[1].op, f(1));
  }
}

// One micro-batch through 3 stages, F = 2, B = 3 (full), latency 1 per hop:
// 3F + 3B + 4 hops (2 forward, 2 backward) = 6 + 9 + 4 = 19 ns.
TEST(Evaluate, P2pLatencyIsPaidOncePerStageCrossing) {
  const Schedule s = build_schedule(ScheduleKind::k1F1B, {.stages = 3, .microbatches = 1});
  const auto r = evaluate(s, CostTable::uniform(3, 1, {.forward = 2ns, .input_grad = 2ns, .weight_grad = 1ns}),
                          {.p2p_latency = 1ns});
  EXPECT_EQ(r.makespan, 19ns);
  EXPECT_EQ(r.stages[1].busy, 5ns);
  EXPECT_EQ(r.stages[1].idle, 14ns);
}

// Interleaved keeps hops between chunks of the same stage free only when they are on the same
// stage; with p = 1 every hop is local, so latency never applies: 1 stage, v = 2, m = 1:
// F F B B = 2·1 + 2·2 = 6 ns whatever the latency.
TEST(Evaluate, SameStageHopsPayNoLatency) {
  const Schedule s = build_schedule(ScheduleKind::kInterleaved1F1B, {.stages = 1, .microbatches = 1, .chunks = 2});
  const auto r = evaluate(s, CostTable::uniform(1, 2, {.forward = 1ns, .input_grad = 1ns, .weight_grad = 1ns}),
                          {.p2p_latency = 100ns});
  EXPECT_EQ(r.makespan, 6ns);
}

// Per-(stage, chunk) costs: a slow last stage (F = 2, B = 4) dominates 1F1B with p = 2, m = 3:
// stage 1 runs F B back to back once fed: starts at 1 (stage 0's F0), then 3·(2 + 4) = 18 busy,
// and the last B then crosses to stage 0 (B = 2): makespan 1 + 18 + 2 = 21 ns.
TEST(Evaluate, PerStageCosts) {
  const Schedule s = build_schedule(ScheduleKind::k1F1B, {.stages = 2, .microbatches = 3});
  auto costs = CostTable::uniform(2, 1, {.forward = 1ns, .input_grad = 1ns, .weight_grad = 1ns});
  costs.set(1, 0, {.forward = 2ns, .input_grad = 3ns, .weight_grad = 1ns});
  const auto r = evaluate(s, costs);
  EXPECT_EQ(r.makespan, 21ns);
  EXPECT_EQ(r.stages[1].busy, 18ns);
  EXPECT_EQ(r.stages[0].busy, 9ns);
}

TEST(Evaluate, RejectsBrokenContractAndMismatchedCosts) {
  Schedule twice(ScheduleKind::k1F1B, ScheduleLayout::single_lane(1, 1, 1));
  for (Op op : {f(0), f(0), b(0)}) twice.append(0, op);
  const auto one = CostTable::uniform(1, 1, {.forward = 1ns, .input_grad = 1ns, .weight_grad = 1ns});
  EXPECT_THROW((void)evaluate(twice, one), std::invalid_argument);

  Schedule missing(ScheduleKind::k1F1B, ScheduleLayout::single_lane(1, 1, 1));
  missing.append(0, f(0));
  EXPECT_THROW((void)evaluate(missing, one), std::invalid_argument);

  const Schedule ok = build_schedule(ScheduleKind::k1F1B, {.stages = 2, .microbatches = 2});
  EXPECT_THROW((void)evaluate(ok, one), std::invalid_argument);
  const auto two = CostTable::uniform(2, 1, {.forward = 1ns, .input_grad = 1ns, .weight_grad = 1ns});
  EXPECT_THROW((void)evaluate(ok, two, {.overlapped_pair_scale = 0}), std::invalid_argument);
  EXPECT_THROW(CostTable::uniform(0, 1, {}), std::invalid_argument);
}

TEST(Factory, RejectsBadShapeNamingTheField) {
  try {
    (void)build_schedule(ScheduleKind::k1F1B, {.stages = 0, .microbatches = 4});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "1f1b schedule: stages = 0; allowed: >= 1");
  }
}

}  // namespace
}  // namespace mofasim::schedules
