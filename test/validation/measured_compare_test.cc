// The step predictors of measured validation: each gives the step time its model gives, unchanged,
// and a breakdown of it whose parts sum to it; compare_measured carries the breakdown to the row.
#include "sim/analysis/measured_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/analytic_model.h"
#include "sim/executor/simulate_step.h"

namespace mofasim::analysis {
namespace {

// 16 A100s in two nodes of 8: TP 2 and PP 2 inside a node, DP 4 across the nodes, 8 micro-batches
// per replica, so the step has compute, exposed TP and a pipeline bubble.
MeasuredRow two_node_row() {
  return MeasuredRow{.source = "runs.csv", .line = 5, .gpus = 16, .global_batch = 64, .micro_batch = 2,
                     .hidden_size = 2048, .attention_heads = 16, .layers = 8, .seq_length = 1024,
                     .tp = 2, .dp = 4, .pp = 2, .iteration_time_s = 1.0};
}

MeasuredCase two_node_case() {
  return to_measured_case(two_node_row(), vtrain_a100_conditions(hardware_from_preset("a100-80gb")));
}

void expect_parts_sum_to_step(const StepPrediction& p) {
  ASSERT_TRUE(p.breakdown.has_value());
  ASSERT_GT(p.step_s, 0);
  EXPECT_NEAR(p.breakdown->total(), p.step_s, 1e-9 * p.step_s);
  const PredictedBreakdown& b = *p.breakdown;
  for (double part : {b.compute, b.recompute, b.tp, b.cp, b.ep, b.pp_comm, b.dp, b.offload, b.pp_bubble,
                      b.optimizer}) {
    EXPECT_GE(part, 0);
  }
  EXPECT_GT(b.compute, 0.5 * p.step_s);  // the layers' GEMMs dominate this step
  EXPECT_GT(b.pp_bubble, 0);             // two stages: 1F1B warm-up and cool-down
  EXPECT_GT(b.tp, 0);                    // Megatron's TP all-reduces block the layer
  EXPECT_GT(b.optimizer, 0);
  EXPECT_EQ(b.cp, 0);  // no context or expert parallelism in this layout
  EXPECT_EQ(b.ep, 0);
}

TEST(MeasuredCompare, TheAnalyticPredictorsPartsSumToItsStep) {
  const MeasuredCase c = two_node_case();
  const StepPrediction p = analytic_step_predictor()(c);
  expect_parts_sum_to_step(p);
  // The closed form's own step, unchanged; recompute and offload are not split out there.
  const model::StepTiming t = model::evaluate_mofa(model::AnalyticInput{
      .model = c.model, .hardware = c.hardware, .parallel = c.parallel, .features = c.features,
      .topology = c.topology}).timing;
  EXPECT_EQ(p.step_s, t.step_time_s);
  EXPECT_EQ(p.breakdown->compute, t.breakdown.compute);
  EXPECT_EQ(p.breakdown->dp, t.breakdown.dp_exposed);
  EXPECT_EQ(p.breakdown->recompute, 0);
  EXPECT_EQ(p.breakdown->offload, 0);
}

TEST(MeasuredCompare, TheSimulatedPredictorsPartsSumToItsStep) {
  const MeasuredCase c = two_node_case();
  const StepPrediction p = simulated_step_predictor()(c);
  expect_parts_sum_to_step(p);
  const executor::StepResult r = executor::simulate_step(
      executor::SimulationInput{.model = c.model, .hardware = c.hardware, .parallel = c.parallel,
                                .features = c.features, .topology = c.topology},
      executor::SimulateOptions{.fidelity = executor::Fidelity::kFolded});
  EXPECT_EQ(p.step_s, r.step_time_s);
  EXPECT_EQ(p.breakdown->tp, r.breakdown.tp);
  EXPECT_EQ(p.breakdown->pp_bubble, r.breakdown.pp_bubble);
}

TEST(MeasuredCompare, EachComparisonCarriesItsPredictionsBreakdown) {
  const std::vector<MeasuredRow> rows{two_node_row()};
  const auto cmp = compare_measured(rows, vtrain_a100_conditions(hardware_from_preset("a100-80gb")),
                                    analytic_step_predictor());
  ASSERT_EQ(cmp.size(), 1u);
  ASSERT_TRUE(cmp[0].breakdown.has_value());
  EXPECT_NEAR(cmp[0].breakdown->total(), cmp[0].predicted_s, 1e-9 * cmp[0].predicted_s);
  // A predictor that gives only a step time leaves the breakdown absent.
  const auto bare = compare_measured(rows, vtrain_a100_conditions(hardware_from_preset("a100-80gb")),
                                     [](const MeasuredCase&) { return StepPrediction{.step_s = 0.75}; });
  EXPECT_EQ(bare[0].predicted_s, 0.75);
  EXPECT_FALSE(bare[0].breakdown.has_value());
}

}  // namespace
}  // namespace mofasim::analysis
