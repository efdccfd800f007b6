// Closed forms against the dependency-driven replay, with uniform costs and free communication,
// and the worked numbers of reference-formulas.md §8.4 (p = 8, m = 64, T_F = T_B = T_W = 1).
// One time unit is 1000 ns so interleaved chunk costs (unit / v) stay whole nanoseconds.
#include <gtest/gtest.h>

#include "schedules/dualpipe.h"
#include "schedules/evaluate.h"
#include "schedules/factory.h"
#include "schedules/gpipe.h"
#include "schedules/interleaved_1f1b.h"
#include "schedules/one_f_one_b.h"
#include "schedules/zero_bubble_h1.h"

namespace mofasim::schedules {
namespace {

using namespace std::chrono_literals;

constexpr Duration kUnit{1000};

EvaluateResult run(ScheduleKind kind, PipelineShape shape, PassCosts per_chunk, EvaluateOptions options = {}) {
  const Schedule s = build_schedule(kind, shape);
  return evaluate(s, CostTable::uniform(shape.stages, s.chunks(), per_chunk), options);
}

// 1F1B, p = 4, m = 8, F = 1, Bi = 1.5, W = 0.5 (full B = 2): makespan = (m + p − 1)(F + B)
// = 11 · 3 = 33 units; every stage idles (p − 1)(F + B) = 9 units.
TEST(OneFOneB, MakespanIsMPlusPMinusOneTimesFPlusB) {
  const auto r = run(ScheduleKind::k1F1B, {.stages = 4, .microbatches = 8},
                     {.forward = kUnit, .input_grad = 1500ns, .weight_grad = 500ns});
  EXPECT_EQ(r.makespan, 33 * kUnit);
  for (const auto& st : r.stages) EXPECT_EQ(st.idle, 9 * kUnit);
  EXPECT_DOUBLE_EQ(one_f_one_b_bubble({.stages = 4, .microbatches = 8}, {1, 1.5, 0.5}), 9.0);
}

// Same formula for GPipe: forward sweep (m + p − 1)F, backward sweep (m + p − 1)B.
// p = 3, m = 5, F = 1, B = 2: (5 + 2)·3 = 21 units.
TEST(Gpipe, MakespanIsMPlusPMinusOneTimesFPlusB) {
  const auto r = run(ScheduleKind::kGpipe, {.stages = 3, .microbatches = 5},
                     {.forward = kUnit, .input_grad = kUnit, .weight_grad = kUnit});
  EXPECT_EQ(r.makespan, 21 * kUnit);
  EXPECT_DOUBLE_EQ(gpipe_bubble({.stages = 3, .microbatches = 5}, {1, 1, 1}), 6.0);
  EXPECT_EQ(r.stages[0].idle, 6 * kUnit);
}

// Interleaved, p = 4, m = 8, v = 2, per-stage F = 2, full B = 4 (chunk costs 1 and 2):
// makespan = (m·v + p − 1)(F + B)/v = (16 + 3)·6/2 = 57 units; bubble (p − 1)(F + B)/v = 9.
TEST(Interleaved1F1B, MakespanIsMVPlusPMinusOneTimesChunkCost) {
  const PipelineShape shape{.stages = 4, .microbatches = 8, .chunks = 2};
  const auto r = run(ScheduleKind::kInterleaved1F1B, shape,
                     {.forward = kUnit, .input_grad = 1500ns, .weight_grad = 500ns});
  EXPECT_EQ(r.makespan, 57 * kUnit);
  for (const auto& st : r.stages) EXPECT_EQ(st.idle, 9 * kUnit);
  EXPECT_DOUBLE_EQ(interleaved_1f1b_bubble(shape, {2, 3, 1}), 9.0);
}

// Megatron needs whole micro-batch groups of p.
TEST(Interleaved1F1B, RejectsMicrobatchesNotMultipleOfStages) {
  EXPECT_THROW(build_interleaved_1f1b({.stages = 4, .microbatches = 6, .chunks = 2}), std::invalid_argument);
  EXPECT_THROW(build_interleaved_1f1b({.stages = 4, .microbatches = 8, .chunks = 1}), std::invalid_argument);
}

// ZB-H1 bubble (p − 1)(F + B − W). p = 4, m = 12, F = 3, Bi = 2, W = 1 (W ≤ min(F, B), the
// formula's regime): 3·(3 + 2 − 1) = 12 units on every stage; makespan m(F + B + W) + 12 = 84.
TEST(ZeroBubbleH1, BubbleIsPMinusOneTimesFPlusBMinusW) {
  const PipelineShape shape{.stages = 4, .microbatches = 12};
  const auto r = run(ScheduleKind::kZbH1, shape, {.forward = 3 * kUnit, .input_grad = 2 * kUnit, .weight_grad = kUnit});
  EXPECT_EQ(r.makespan, 84 * kUnit);
  for (const auto& st : r.stages) EXPECT_EQ(st.idle, 12 * kUnit);
  EXPECT_DOUBLE_EQ(zero_bubble_h1_bubble(shape, {3, 2, 1}), 12.0);
}

// ZB-H1 memory: stage s peaks at (p − s)·M_B + s·M_W. With M_W = M_B/2 and p = 4:
// stage 0: 4, stage 1: 3.5, stage 2: 3, stage 3: 2.5 (units of M_B).
TEST(ZeroBubbleH1, PeakMemoryIsPMinusSActivationsPlusSWeightResidues) {
  const auto r = run(ScheduleKind::kZbH1, {.stages = 4, .microbatches = 12},
                     {.forward = kUnit, .input_grad = kUnit, .weight_grad = kUnit}, {.weight_grad_memory_ratio = 0.5});
  EXPECT_DOUBLE_EQ(r.stages[0].peak_memory, 4.0);
  EXPECT_DOUBLE_EQ(r.stages[1].peak_memory, 3.5);
  EXPECT_DOUBLE_EQ(r.stages[2].peak_memory, 3.0);
  EXPECT_DOUBLE_EQ(r.stages[3].peak_memory, 2.5);
  EXPECT_EQ(zero_bubble_h1_deferred_weight_grads({.stages = 4, .microbatches = 12}, 3), 3);
}

// GPipe holds all m micro-batches; 1F1B holds min(p, m) on stage 0 (and p − s on stage s).
TEST(PeakActivation, GpipeHoldsMOneFOneBHoldsMinPM) {
  const PassCosts unit{.forward = kUnit, .input_grad = kUnit, .weight_grad = kUnit};
  EXPECT_EQ(run(ScheduleKind::kGpipe, {.stages = 4, .microbatches = 10}, unit).stages[0].peak_activations, 10);
  EXPECT_EQ(run(ScheduleKind::k1F1B, {.stages = 4, .microbatches = 10}, unit).stages[0].peak_activations, 4);
  EXPECT_EQ(run(ScheduleKind::k1F1B, {.stages = 4, .microbatches = 10}, unit).stages[2].peak_activations, 2);
  // m < p: only m micro-batches exist.
  EXPECT_EQ(run(ScheduleKind::k1F1B, {.stages = 4, .microbatches = 3}, unit).stages[0].peak_activations, 3);
  EXPECT_EQ(one_f_one_b_in_flight({.stages = 4, .microbatches = 3}, 0), 3);
}

// reference-formulas.md §8.4: p = 8, m = 64, T_F = T_B = T_W = 1 unit (full backward 2).
class Section84 : public ::testing::Test {
 protected:
  static constexpr int kP = 8;
  static constexpr int kM = 64;
  const PassTimes times_{1, 1, 1};
};

// 1F1B bubble (p − 1)(F + B) = 7·3 = 21; rate 7/64 of the ideal m(F + B) = 192.
TEST_F(Section84, OneFOneBBubbleIs21) {
  const auto r = run(ScheduleKind::k1F1B, {.stages = kP, .microbatches = kM},
                     {.forward = kUnit, .input_grad = kUnit, .weight_grad = kUnit});
  EXPECT_EQ(r.stages[0].idle, 21 * kUnit);
  EXPECT_EQ(r.makespan, (192 + 21) * kUnit);
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::k1F1B, {.stages = kP, .microbatches = kM}, times_), 21.0);
  EXPECT_EQ(r.stages[0].peak_activations, 8);  // 1F1B peak: p = 8 micro-batches on stage 0
}

// Interleaved v = 5: bubble 21/5 = 4.2 units (chunk passes cost 0.2 units = 200 ns).
// Peak on stage 0: warm-up 2(p − 1) + (v − 1)p = 46 chunk-forwards plus one = 47 chunk
// activations of L/(p·v) layers, i.e. 47/5 = 9.4 M_B = p + (p − 1)/v. Megatron's estimator
// sizes memory by the factor 1 + (p − 1)/(p·v) = 1.175 = 9.4/8; we count the 47 chunks exactly.
TEST_F(Section84, InterleavedV5BubbleIs4Point2AndPeakIs9Point4) {
  const PipelineShape shape{.stages = kP, .microbatches = kM, .chunks = 5};
  const auto r = run(ScheduleKind::kInterleaved1F1B, shape,
                     {.forward = 200ns, .input_grad = 200ns, .weight_grad = 200ns});
  EXPECT_EQ(r.stages[0].idle, 4200ns);
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::kInterleaved1F1B, shape, times_), 4.2);
  EXPECT_EQ(r.stages[0].peak_activations, 47);
  EXPECT_EQ(in_flight_chunks(ScheduleKind::kInterleaved1F1B, shape, 0), 47);
  EXPECT_DOUBLE_EQ(peak_activation(ScheduleKind::kInterleaved1F1B, shape, 0), 9.4);
}

// ZB-H1: 7·(1 + 1 − 1) = 7 units; peak forward activations p = 8 on stage 0, like 1F1B.
TEST_F(Section84, ZeroBubbleH1BubbleIs7) {
  const PipelineShape shape{.stages = kP, .microbatches = kM};
  const auto r = run(ScheduleKind::kZbH1, shape, {.forward = kUnit, .input_grad = kUnit, .weight_grad = kUnit});
  for (const auto& st : r.stages) EXPECT_EQ(st.idle, 7 * kUnit);
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::kZbH1, shape, times_), 7.0);
  EXPECT_EQ(r.stages[0].peak_activations, 8);
}

// DualPipe, PP = 8: bubble (PP/2 − 1)(F&B + B − 3W) with no overlap credit, F&B = F + B = 3:
// 3·(3 + 2 − 3) = 6 units on every stage. Peak PP + 1 = 9 chunk activations (chunk = L/p
// layers) on every stage. The replay meets both exactly with F = Bi = W (it runs an overlapped
// pair back to back, starting once both inputs are there). With unequal costs the replayed
// bubble differs from the formula (evaluate() is exact for this order; the formula is DualPipe's
// own estimate).
TEST_F(Section84, DualPipeBubbleIs6AndPeakIs9) {
  const PipelineShape shape{.stages = kP, .microbatches = kM};
  const auto r = run(ScheduleKind::kDualPipe, shape, {.forward = kUnit, .input_grad = kUnit, .weight_grad = kUnit});
  for (const auto& st : r.stages) {
    EXPECT_EQ(st.idle, 6 * kUnit);
    EXPECT_EQ(st.peak_activations, 9);
  }
  EXPECT_DOUBLE_EQ(bubble_time(ScheduleKind::kDualPipe, shape, times_), 6.0);
  EXPECT_EQ(in_flight_chunks(ScheduleKind::kDualPipe, shape, 3), 9);
}

// DualPipe with an overlap credit: pair scale 0.8 makes F&B = 0.8·(F + B) = 4.8 units for
// F = Bi = W = 2; formula (PP/2 − 1)(4.8 + 4 − 6) = 2.8 units for PP = 4, which the replay meets.
TEST(DualPipe, OverlapCreditShrinksBubbleAsFormula) {
  const PipelineShape shape{.stages = 4, .microbatches = 16};
  const auto r = run(ScheduleKind::kDualPipe, shape, {.forward = 2 * kUnit, .input_grad = 2 * kUnit,
                                                      .weight_grad = 2 * kUnit},
                     {.overlapped_pair_scale = 0.8});
  EXPECT_DOUBLE_EQ(dualpipe_bubble(shape, {2, 2, 2}, 0.8 * 6), 2.8);
  for (const auto& st : r.stages) EXPECT_EQ(st.idle, 2800ns);
}

TEST(DualPipe, RejectsOddOrTooFewMicrobatches) {
  EXPECT_THROW(build_dualpipe({.stages = 3, .microbatches = 12}), std::invalid_argument);
  EXPECT_THROW(build_dualpipe({.stages = 4, .microbatches = 9}), std::invalid_argument);
  EXPECT_THROW(build_dualpipe({.stages = 4, .microbatches = 6}), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::schedules
