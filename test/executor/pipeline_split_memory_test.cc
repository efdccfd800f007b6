// Megatron's account_for_embedding/loss_in_pipeline_split in the step simulation: the first and
// last stages run one transformer layer fewer, and the replay's live activation peak agrees with
// the memory model stage by stage, worked by hand for the two ends.
#include <gtest/gtest.h>

#include "model/op_table.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

TEST(PipelineSplitMemory, EndsHoldOneLayerFewerAndBothModelsAgree) {
  // 6 layers + embedding + loss = 8 over pp 4: layers 1, 2, 2, 1.
  SimulationInput in;
  in.model = testing::tiny_model();
  in.model.num_layers = 6;
  in.hardware = testing::tiny_gpu();
  in.parallel = {.tp = 1, .pp = 4, .vpp = 1, .dp = 1, .micro_batch = 1, .global_batch = 8,
                 .schedule = model::ScheduleKind::k1F1B};
  in.parallel.account_for_embedding = true;
  in.parallel.account_for_loss = true;
  in.topology = testing::free_topology(4);
  const StepResult r = simulate_step(in, {.fidelity = Fidelity::kFull});
  ASSERT_EQ(r.memory.size(), 4U);
  for (const StageMemory& m : r.memory) {
    EXPECT_NEAR(m.peak_activation_bytes, m.model_activation_bytes, 1e-9 * m.model_activation_bytes) << "stage " << m.stage;
  }
  // 1F1B: stage k holds min(4 - k, 8) micro-batches; stage 0 one layer and the embedding's token
  // ids each, stage 3 one layer and one micro-batch of head activations.
  const model::LayerTotals layer = model::ops_for_layer(in.model, in.parallel, 0).totals();
  const model::LayerTotals head = model::ops_for_head(in.model, in.parallel).totals();
  const model::LayerTotals emb = model::ops_for_embedding(in.model, in.parallel).totals();
  EXPECT_DOUBLE_EQ(r.memory[0].model_activation_bytes, 4 * (layer.activation_bytes + emb.activation_bytes));
  EXPECT_DOUBLE_EQ(r.memory[1].model_activation_bytes, 3 * 2 * layer.activation_bytes);
  EXPECT_DOUBLE_EQ(r.memory[3].model_activation_bytes, layer.activation_bytes + head.activation_bytes);
}

}  // namespace
}  // namespace mofasim::executor
