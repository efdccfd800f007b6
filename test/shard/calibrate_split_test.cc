// Calibration with every objective evaluation's points predicted at once (evaluate_all, what the
// MPI mode spreads over ranks): the same search, value for value, as point by point.
#include <gtest/gtest.h>

#include <cstring>

#include "sim/analysis/calibrate.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::analysis {
namespace {

std::vector<CalibrationPoint> points() {
  std::vector<CalibrationPoint> pts;
  for (int tp : {1, 2, 4}) {
    model::ModelSpec m = model::testing::llama2_70b();
    m.num_layers = 4;
    const model::ParallelSpec p = model::testing::parallel_spec(model::testing::Layout{.tp = tp, .pp = 2, .global_batch = 4});
    const model::AnalyticInput in{.model = m,
                                  .hardware = model::testing::round_gpu(),
                                  .parallel = p,
                                  .features = {},
                                  .topology = topology::TopologySpec{.gpus = p.gpus(),
                                                                     .gpus_per_node = p.gpus(),
                                                                     .intra_node = {.bandwidth = 100e9, .latency = 0},
                                                                     .inter_node = {.bandwidth = 25e9, .latency = 0}}};
    pts.push_back({.label = "tp" + std::to_string(tp), .input = in, .measured_step_s = 1.5 * tp});
  }
  return pts;
}

TEST(CalibrateSplit, EvaluateAllGivesTheSameFitBitForBit) {
  const std::vector<CalibrationPoint> pts = points();
  CalibrationOptions options{
      .parameters = {{.parameter = CalibrationParameter::kGemmEfficiency, .lower = 0.1, .upper = 1.0, .initial = 0.5}},
      .max_evaluations = 300};
  const CalibrationResult one_by_one = calibrate(pts, options);
  int batches = 0;
  options.evaluate_all = [&](std::span<const model::AnalyticInput> inputs) {
    ++batches;
    std::vector<double> out;
    for (const model::AnalyticInput& in : inputs) out.push_back(analytic_step_evaluator()(in));
    return out;
  };
  const CalibrationResult batched = calibrate(pts, options);
  EXPECT_EQ(batches, batched.evaluations);  // one batch per objective evaluation
  EXPECT_GT(batched.evaluations, 10);
  EXPECT_EQ(batched.evaluations, one_by_one.evaluations);
  ASSERT_EQ(batched.values.size(), 1u);
  EXPECT_EQ(std::memcmp(&batched.values[0], &one_by_one.values[0], sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(&batched.objective, &one_by_one.objective, sizeof(double)), 0);
}

TEST(CalibrateSplit, AWrongCountIsAnInternalError) {
  CalibrationOptions options{
      .parameters = {{.parameter = CalibrationParameter::kGemmEfficiency, .lower = 0.1, .upper = 1.0, .initial = 0.5}}};
  options.evaluate_all = [](std::span<const model::AnalyticInput>) { return std::vector<double>{1.0}; };
  EXPECT_THROW(calibrate(points(), options), std::logic_error);
}

}  // namespace
}  // namespace mofasim::analysis
