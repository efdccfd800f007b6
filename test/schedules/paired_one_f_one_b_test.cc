// The EP-overlap variants of 1F1B and interleaved 1F1B (PipelineShape::pair_steady_passes, MoFa
// MoFa(22)): the order worked by hand, the closed forms (bubble without overlap credit, in-flight
// activations) against the dependency-driven replay, and the steady state with a pair credit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "schedules/evaluate.h"
#include "schedules/factory.h"
#include "schedules/interleaved_1f1b.h"
#include "schedules/one_f_one_b.h"

namespace mofasim::schedules {
namespace {

using namespace std::chrono_literals;

constexpr Duration kUnit{1000};

// "F3|B0" for a pair, "F1" / "B2" otherwise (one chunk).
std::vector<std::string> order(const Schedule& s, int stage) {
  std::vector<std::string> out;
  const auto ops = s.ops(stage);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    std::string o = (ops[i].phase == Phase::kForward ? "F" : "B") + std::to_string(ops[i].microbatch);
    if (ops[i].overlaps_next) {
      ++i;
      o += "|B" + std::to_string(ops[i].microbatch);
    }
    out.push_back(o);
  }
  return out;
}

// p = 2, m = 4. Warm-up w_s = min(2(p − s) − 1, m): 3 forwards on stage 0, 1 on stage 1; then
// F(w_s + i) paired with B(i); then the remaining backwards.
TEST(PairedOneFOneB, OrderOnTwoStagesByHand) {
  const Schedule s = build_schedule(ScheduleKind::k1F1B, {.stages = 2, .microbatches = 4, .pair_steady_passes = true});
  EXPECT_TRUE(s.pair_steady_passes());
  EXPECT_EQ(order(s, 0), (std::vector<std::string>{"F0", "F1", "F2", "F3|B0", "B1", "B2", "B3"}));
  EXPECT_EQ(order(s, 1), (std::vector<std::string>{"F0", "F1|B0", "F2|B1", "F3|B2", "B3"}));
  // Plain 1F1B is untouched: warm-up p − s − 1, no pairs.
  const Schedule plain = build_schedule(ScheduleKind::k1F1B, {.stages = 2, .microbatches = 4});
  EXPECT_FALSE(plain.pair_steady_passes());
  EXPECT_EQ(order(plain, 0), (std::vector<std::string>{"F0", "F1", "B0", "F2", "B1", "F3", "B2", "B3"}));
}

// Without overlap credit a pair costs F + B, and the paired order keeps 1F1B's bubble:
// p = 4, m = 8, F = 1, B = 2: makespan (m + p − 1)(F + B) = 33 units, idle (p − 1)(F + B) = 9.
TEST(PairedOneFOneB, BubbleWithoutCreditIsPlainOneFOneB) {
  const PipelineShape shape{.stages = 4, .microbatches = 8, .pair_steady_passes = true};
  const auto r = evaluate(build_schedule(ScheduleKind::k1F1B, shape),
                          CostTable::uniform(4, 1, {.forward = kUnit, .input_grad = 1500ns, .weight_grad = 500ns}));
  EXPECT_EQ(r.makespan, 33 * kUnit);
  for (const auto& st : r.stages) EXPECT_EQ(st.idle, 9 * kUnit);
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::k1F1B, shape, {1, 1.5, 0.5}), 9.0);
}

// Pair credit 0.5 (a pair costs (F + B)/2): p = 2, m = 4, F = 1, B = 2, so F' = 0.5, B' = 1 in a pair.
// Stage 0: F0 F1 F2 in [0, 3]. Stage 1: F0 [1, 2]; F1|B0 from 2 (F1 arrives at 2): [2, 3.5];
// F2|B1 from 3.5: [3.5, 5]; F3|B2 waits for F3 of stage 0's pair. Stage 0's F3|B0 starts when B0
// arrives (3.5): F3 [3.5, 4], B0 [4, 5]. Stage 1: F3|B2 from 5: [5, 6.5]; B3 [6.5, 8.5].
// Stage 0: B1 (arrives 5) [5, 7], B2 (6.5) [7, 9], B3 (8.5) [9, 11]. Makespan 11 units, against
// (m + p − 1)(F + B) = 15 for plain 1F1B.
TEST(PairedOneFOneB, PairCreditShortensTheStepByHand) {
  const CostTable costs = CostTable::uniform(2, 1, {.forward = kUnit, .input_grad = 1500ns, .weight_grad = 500ns});
  const auto paired = evaluate(build_schedule(ScheduleKind::k1F1B, {.stages = 2, .microbatches = 4, .pair_steady_passes = true}),
                               costs, {.overlapped_pair_scale = 0.5});
  EXPECT_EQ(paired.makespan, 11 * kUnit);
  const auto plain = evaluate(build_schedule(ScheduleKind::k1F1B, {.stages = 2, .microbatches = 4}), costs,
                              {.overlapped_pair_scale = 0.5});
  EXPECT_EQ(plain.makespan, 15 * kUnit);
}

// Why the warm-up steps by 2: with the plain warm-up plus one forward (w_s = p − s), stage s's pair
// i waits for stage s+1's pair i, which waits for a forward in stage s's pair i − 1, so neighbours
// alternate and the steady period exceeds one pair. p = 4, m = 32, F = 1, B = 2, no credit: the
// paired variant matches plain 1F1B, (m + p − 1)(F + B) = 105 units, while the one-extra-forward
// order is slower than that.
TEST(PairedOneFOneB, OneExtraWarmupForwardIsNotEnough) {
  const int p = 4;
  const int m = 32;
  Schedule one_extra(ScheduleKind::k1F1B, ScheduleLayout::single_lane(p, m, 1));
  for (int s = 0; s < p; ++s) {
    const int warmup = p - s;
    std::uint32_t f = 0;
    std::uint32_t b = 0;
    for (int i = 0; i < warmup; ++i) one_extra.append(s, Op{.phase = Phase::kForward, .microbatch = f++});
    for (int i = 0; i < m - warmup; ++i) {
      one_extra.append(s, Op{.phase = Phase::kForward, .overlaps_next = true, .microbatch = f++});
      one_extra.append(s, Op{.phase = Phase::kBackward, .microbatch = b++});
    }
    while (b < static_cast<std::uint32_t>(m)) one_extra.append(s, Op{.phase = Phase::kBackward, .microbatch = b++});
  }
  const CostTable costs = CostTable::uniform(p, 1, {.forward = kUnit, .input_grad = 1500ns, .weight_grad = 500ns});
  const auto ours = evaluate(build_schedule(ScheduleKind::k1F1B, {.stages = p, .microbatches = m, .pair_steady_passes = true}), costs);
  EXPECT_EQ(ours.makespan, 105 * kUnit);
  EXPECT_GT(evaluate(one_extra, costs).makespan, 105 * kUnit);
}

// In-flight activations: one_f_one_b.h's min(2(p − s), m) and interleaved_1f1b.h's
// min(2(p − s − 1) + (v − 1)p + 2, m·v), worked for the §8.4 shape p = 8, m = 64, v = 5.
TEST(PairedOneFOneB, InFlightClosedForms) {
  const PipelineShape one{.stages = 8, .microbatches = 64, .pair_steady_passes = true};
  EXPECT_EQ(in_flight_chunks(ScheduleKind::k1F1B, one, 0), 16);  // plain: 8
  EXPECT_EQ(in_flight_chunks(ScheduleKind::k1F1B, one, 7), 2);   // plain: 1
  EXPECT_EQ(in_flight_chunks(ScheduleKind::k1F1B, {.stages = 8, .microbatches = 5, .pair_steady_passes = true}, 0), 5);
  const PipelineShape inter{.stages = 8, .microbatches = 64, .chunks = 5, .pair_steady_passes = true};
  EXPECT_EQ(in_flight_chunks(ScheduleKind::kInterleaved1F1B, inter, 0), 2 * 7 + 4 * 8 + 2);  // 48; plain 47
  EXPECT_DOUBLE_EQ(peak_activation(ScheduleKind::kInterleaved1F1B, inter, 0), 48.0 / 5);
  EXPECT_EQ(in_flight_chunks(ScheduleKind::kInterleaved1F1B, inter, 7), 4 * 8 + 2);
  // The replay counts the same peaks.
  const auto r = evaluate(build_schedule(ScheduleKind::kInterleaved1F1B, inter),
                          CostTable::uniform(8, 5, {.forward = kUnit, .input_grad = kUnit, .weight_grad = kUnit}));
  EXPECT_EQ(r.stages[0].peak_activations, 48);
  EXPECT_EQ(r.stages[7].peak_activations, 34);
}

// Interleaved without credit keeps its bubble: p = 4, m = 8, v = 2, per-stage F = 2, B = 4:
// (m·v + p − 1)(F + B)/v = 57 units, idle (p − 1)(F + B)/v = 9 on every stage.
TEST(PairedInterleaved1F1B, BubbleWithoutCreditIsPlainInterleaved) {
  const PipelineShape shape{.stages = 4, .microbatches = 8, .chunks = 2, .pair_steady_passes = true};
  const auto r = evaluate(build_schedule(ScheduleKind::kInterleaved1F1B, shape),
                          CostTable::uniform(4, 2, {.forward = kUnit, .input_grad = 1500ns, .weight_grad = 500ns}));
  EXPECT_EQ(r.makespan, 57 * kUnit);
  for (const auto& st : r.stages) EXPECT_EQ(st.idle, 9 * kUnit);
}

TEST(PairedOneFOneB, StepShapePairsOnlyMoeWithExpertParallelAndEpOverlap) {
  model::ModelSpec moe;
  moe.moe.num_experts = 8;
  const model::ParallelSpec par{.pp = 4, .vpp = 2, .dp = 2, .ep = 2, .micro_batch = 1, .global_batch = 16};
  model::FeatureSpec on;
  on.ep_overlap.enabled = true;
  const PipelineShape shape = step_shape(moe, par, on);
  EXPECT_EQ(shape.stages, 4);
  EXPECT_EQ(shape.microbatches, 8);  // 16 / (1 · 2)
  EXPECT_EQ(shape.chunks, 2);
  EXPECT_TRUE(shape.pair_steady_passes);
  EXPECT_FALSE(step_shape(moe, par, {}).pair_steady_passes);           // EP overlap off
  EXPECT_FALSE(step_shape(model::ModelSpec{}, par, on).pair_steady_passes);  // dense model
  model::ParallelSpec no_ep = par;
  no_ep.ep = 1;
  EXPECT_FALSE(step_shape(moe, no_ep, on).pair_steady_passes);  // no all-to-all to hide
  model::ParallelSpec bad = par;
  bad.micro_batch = 0;
  EXPECT_THROW((void)step_shape(moe, bad, on), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::schedules
