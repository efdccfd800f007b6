// Calibration: recovers known efficiencies from synthetic measurements that the analytic model
// itself produced with those efficiencies, and reads the measurements CSV.
#include "sim/analysis/calibrate.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "test/model/model_presets_for_test.h"

namespace mofasim::analysis {
namespace {

using model::testing::Layout;

model::AnalyticInput point(int tp, int seq, int layers) {
  model::ModelSpec m = model::testing::llama2_70b();
  m.num_layers = layers;
  m.seq_length = seq;
  model::ParallelSpec p = model::testing::parallel_spec(Layout{.tp = tp, .pp = 2, .global_batch = 4});
  return model::AnalyticInput{.model = m,
                              .hardware = model::testing::round_gpu(),
                              .parallel = p,
                              .features = {},
                              .topology = topology::TopologySpec{.gpus = p.gpus(),
                                                                 .gpus_per_node = p.gpus() < 8 ? p.gpus() : 8,
                                                                 .intra_node = {.bandwidth = 100e9, .latency = 0},
                                                                 .inter_node = {.bandwidth = 25e9, .latency = 0}}};
}

// "Measurements": the analytic model's step times with gemm 0.7, attention 0.45, bandwidth ×0.8.
std::vector<CalibrationPoint> synthetic_points() {
  std::vector<CalibrationPoint> pts;
  const int shapes[][3] = {{1, 2048, 4}, {2, 8192, 4}, {4, 4096, 8}, {8, 16384, 4}, {4, 32768, 4}};
  for (const auto& s : shapes) {
    model::AnalyticInput truth = point(s[0], s[1], s[2]);
    apply_parameter(truth, CalibrationParameter::kGemmEfficiency, 0.7);
    apply_parameter(truth, CalibrationParameter::kAttentionEfficiency, 0.45);
    apply_parameter(truth, CalibrationParameter::kBandwidthFactor, 0.8);
    pts.push_back(CalibrationPoint{.label = "tp" + std::to_string(s[0]) + "_s" + std::to_string(s[1]),
                                   .input = point(s[0], s[1], s[2]),
                                   .measured_step_s = model::evaluate_mofa(truth).timing.step_time_s});
  }
  return pts;
}

TEST(Calibrate, RecoversKnownEfficienciesFromTheModelsOwnTimes) {
  const std::vector<CalibrationPoint> pts = synthetic_points();
  const CalibrationOptions options{
      .parameters = {{.parameter = CalibrationParameter::kGemmEfficiency, .lower = 0.3, .upper = 1.0, .initial = 0.5},
                     {.parameter = CalibrationParameter::kAttentionEfficiency, .lower = 0.2, .upper = 1.0, .initial = 0.6},
                     {.parameter = CalibrationParameter::kBandwidthFactor, .lower = 0.2, .upper = 2.0, .initial = 1.0}},
      .objective = CalibrationObjective::kMeanSquaredRelativeError,
      .max_evaluations = 6000,
      .tolerance = 1e-20};
  const CalibrationResult r = calibrate(pts, options);
  ASSERT_EQ(r.values.size(), 3u);
  EXPECT_NEAR(r.values[0], 0.7, 1e-3);
  EXPECT_NEAR(r.values[1], 0.45, 1e-3);
  EXPECT_NEAR(r.values[2], 0.8, 1e-3);
  EXPECT_LT(r.objective, 1e-10);
  ASSERT_EQ(r.residuals.size(), pts.size());
  for (const Residual& res : r.residuals) EXPECT_LT(std::abs(res.relative_error), 1e-4) << res.label;
}

TEST(Calibrate, IsDeterministicAndTakesAnyEvaluator) {
  // A stand-in evaluator (what the step simulation will plug in): t = 2 / gemm efficiency.
  const std::vector<CalibrationPoint> pts{{.label = "a", .input = point(1, 2048, 2), .measured_step_s = 4.0}};
  const StepEvaluator eval = [](const model::AnalyticInput& in) { return 2.0 / in.hardware.efficiency.gemm; };
  const CalibrationOptions options{
      .parameters = {{.parameter = CalibrationParameter::kGemmEfficiency, .lower = 0.1, .upper = 1.0, .initial = 0.9}},
      .objective = CalibrationObjective::kMeanAbsolutePercentageError,
      .max_evaluations = 2000,
      .tolerance = 1e-16};
  const CalibrationResult a = calibrate(pts, options, eval);
  const CalibrationResult b = calibrate(pts, options, eval);
  EXPECT_NEAR(a.values[0], 0.5, 1e-6);  // 2 / 0.5 = 4
  EXPECT_EQ(a.values[0], b.values[0]);
  EXPECT_EQ(a.evaluations, b.evaluations);
}

TEST(Calibrate, RejectsBadOptions) {
  const std::vector<CalibrationPoint> pts{{.label = "a", .input = point(1, 2048, 2), .measured_step_s = 1.0}};
  EXPECT_THROW(calibrate(pts, CalibrationOptions{}), std::invalid_argument);  // no parameters
  CalibrationOptions bad{.parameters = {{.parameter = CalibrationParameter::kGemmEfficiency, .lower = 1, .upper = 1}}};
  EXPECT_THROW(calibrate(pts, bad), std::invalid_argument);
  std::vector<CalibrationPoint> zero = pts;
  zero[0].measured_step_s = 0;
  CalibrationOptions ok{.parameters = {{.parameter = CalibrationParameter::kGemmEfficiency}}};
  EXPECT_THROW(calibrate(zero, ok), std::invalid_argument);
}

TEST(LoadMeasurements, ReadsRowsSkipsHeaderAndCommentsResolvesPaths) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "mofasim_calibrate_test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path csv = dir / "measured.csv";
  {
    std::ofstream out(csv);
    out << "scenario,step_time_s\n# measured on device B\n\nruns/a.yaml, 12.5\n/abs/b.yaml,3\n";
  }
  const std::vector<Measurement> rows = load_measurements(csv.string());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].scenario_path, (dir / "runs/a.yaml").string());
  EXPECT_DOUBLE_EQ(rows[0].step_time_s, 12.5);
  EXPECT_EQ(rows[0].line, 4);
  EXPECT_EQ(rows[1].scenario_path, "/abs/b.yaml");
  {
    std::ofstream out(csv);
    out << "a.yaml,1\nb.yaml,fast\n";
  }
  try {
    load_measurements(csv.string());
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("measured.csv:2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_measurements((dir / "missing.csv").string()), std::invalid_argument);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mofasim::analysis
