// The step simulation's live activation peak and the memory model (`mofasim memory`) agree stage
// by stage, the last stage (output head and loss) included: both count the head's logits for the
// micro-batches model::head_microbatches_in_flight says are live, not for every micro-batch in
// flight on that stage.
#include <gtest/gtest.h>


#include "model/memory.h"
#include "model/op_table.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

SimulationInput four_stage(model::ScheduleKind schedule, int vpp) {
  SimulationInput in;
  in.model = testing::tiny_model();
  in.model.num_layers = 8;
  in.hardware = testing::tiny_gpu();
  in.parallel = {.tp = 1, .pp = 4, .vpp = vpp, .dp = 1, .micro_batch = 1, .global_batch = 8,
                 .schedule = schedule};
  in.topology = testing::free_topology(4);
  return in;
}

void expect_stagewise_agreement(const SimulationInput& in) {
  const StepResult r = simulate_step(in, {.fidelity = Fidelity::kFull});
  ASSERT_EQ(r.memory.size(), 4U);
  for (const StageMemory& m : r.memory) {
    EXPECT_NEAR(m.peak_activation_bytes, m.model_activation_bytes, 1e-9 * m.model_activation_bytes)
        << "stage " << m.stage;
  }
}

TEST(MemoryAgreement, OneFOneBLastStageHoldsOneMicroBatchOfLogits) {
  const SimulationInput in = four_stage(model::ScheduleKind::k1F1B, 1);
  expect_stagewise_agreement(in);
  // By hand: the last stage holds min(p - 3, m) = 1 micro-batch of its 2 layers plus one micro-batch
  // of head activations; stage 0 holds 4 micro-batches of 2 layers plus the embedding's token ids.
  const model::LayerTotals layer = model::ops_for_layer(in.model, in.parallel, 0).totals();
  const model::LayerTotals head = model::ops_for_head(in.model, in.parallel).totals();
  const model::LayerTotals emb = model::ops_for_embedding(in.model, in.parallel).totals();
  const StepResult r = simulate_step(in, {.fidelity = Fidelity::kFull});
  EXPECT_DOUBLE_EQ(r.memory[3].model_activation_bytes, 2 * layer.activation_bytes + head.activation_bytes);
  EXPECT_DOUBLE_EQ(r.memory[0].model_activation_bytes, 4 * (2 * layer.activation_bytes + emb.activation_bytes));
}

TEST(MemoryAgreement, RecomputeModulesAndFullRecomputeMethodsAgreeStageByStage) {
  // The rebuilt part of a layer is live in its backward, when the later layers of that micro-batch
  // (and the head's logits) have been freed: both sides count it so.
  SimulationInput in = four_stage(model::ScheduleKind::k1F1B, 1);
  in.features.recompute = model::RecomputeKind::kSelective;
  in.features.recompute_modules = model::recompute_bit(model::RecomputeModule::kMlp) |
                                  model::recompute_bit(model::RecomputeModule::kLayernorm);
  expect_stagewise_agreement(in);
  in.features.recompute = model::RecomputeKind::kFull;
  expect_stagewise_agreement(in);  // uniform, one layer per group
  in.features.recompute_method = model::RecomputeMethod::kBlock;
  in.features.recompute_num_layers = 1;  // the first of each stage's 2 layers
  expect_stagewise_agreement(in);
}

TEST(MemoryAgreement, Fp8ActivationStorageAgreesStageByStage) {
  // FP8 linear inputs (and the blockwise recipe's E5M6 attention output) are in the tables both
  // sides read (model::with_activation_storage): the peaks move together.
  SimulationInput in = four_stage(model::ScheduleKind::k1F1B, 1);
  in.hardware.peak_flops_fp8 = 2 * in.hardware.peak_flops_bf16;
  const double bf16 = simulate_step(in, {.fidelity = Fidelity::kFull}).memory[0].model_activation_bytes;
  in.features.fp8 = {.enabled = true, .recipe = model::Fp8Recipe::kBlockwise};
  expect_stagewise_agreement(in);
  EXPECT_LT(simulate_step(in, {.fidelity = Fidelity::kFull}).memory[0].model_activation_bytes, 0.9 * bf16);
  in.features.recompute = model::RecomputeKind::kSelective;
  in.features.recompute_modules = model::recompute_bit(model::RecomputeModule::kLayernorm);
  expect_stagewise_agreement(in);
}

TEST(MemoryAgreement, GpipeAgreesStageByStage) {
  expect_stagewise_agreement(four_stage(model::ScheduleKind::kGpipe, 1));
}

TEST(MemoryAgreement, InterleavedLastStageCountsOneMicroBatchOfLogits) {
  // The last stage of an interleaved schedule holds more than one stage's worth of micro-batches
  // (here 1 + 3/8 = 1.375), but the logits of one only: the memory model used to multiply the head
  // by 1.375. The memory model walks each rank's pass order, so every stage agrees now, stage 0
  // (chunk 0's embedding token ids) included.
  const StepResult r = simulate_step(four_stage(model::ScheduleKind::kInterleaved1F1B, 2), {.fidelity = Fidelity::kFull});
  const StageMemory& last = r.memory.back();
  EXPECT_NEAR(last.peak_activation_bytes, last.model_activation_bytes, 1e-9 * last.model_activation_bytes);
  expect_stagewise_agreement(four_stage(model::ScheduleKind::kInterleaved1F1B, 2));
}

TEST(MemoryAgreement, ZeroBubbleKeepsWeightGradientInputsUntilW) {
  // ZB-H1 defers each weight-gradient pass: the GEMM inputs stay live until it, which the
  // whole-stage in-flight count (p - k micro-batches) leaves out; the walk counts them.
  const SimulationInput in = four_stage(model::ScheduleKind::kZbH1, 1);
  expect_stagewise_agreement(in);
  const StepResult r = simulate_step(in, {.fidelity = Fidelity::kFull});
  const model::LayerTotals layer = model::ops_for_layer(in.model, in.parallel, 0).totals();
  // Stage 1 holds more than its p - 1 = 3 micro-batches of 2 layers: a deferred W's inputs too.
  EXPECT_GT(r.memory[1].model_activation_bytes, 3 * 2 * layer.activation_bytes);
  EXPECT_LT(r.memory[1].model_activation_bytes, 4 * 2 * layer.activation_bytes);
}

TEST(MemoryAgreement, HeadMicroBatchesInFlight) {
  EXPECT_EQ(model::head_microbatches_in_flight(model::ScheduleKind::k1F1B, 3), 1.0);
  EXPECT_EQ(model::head_microbatches_in_flight(model::ScheduleKind::kInterleaved1F1B, 1.5), 1.0);
  EXPECT_EQ(model::head_microbatches_in_flight(model::ScheduleKind::kZbH1, 0), 0.0);
  EXPECT_EQ(model::head_microbatches_in_flight(model::ScheduleKind::kGpipe, 8), 8.0);
  EXPECT_THROW(model::head_microbatches_in_flight(model::ScheduleKind::k1F1B, -1), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::executor
