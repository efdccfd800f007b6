// Fitting device parameters to measured rows through the calibration path, applying a fit, and the
// validate command on a small file.
#include "sim/analysis/measured_calibration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "sim/analysis/measured_compare.h"
#include "sim/analysis/measured_validate.h"

namespace mofasim::analysis {
namespace {

model::HardwareSpec device(double gemm) {
  return model::HardwareSpec{.name = "test-a100",
                             .peak_flops_bf16 = 312e12,
                             .gpu_memory_bytes = 80e9,
                             .hbm_bandwidth = 2.0e12,
                             .efficiency = {.gemm = gemm, .attention = 0.5, .memory = 0.8, .small_gemm = 0.5}};
}

std::vector<MeasuredRow> three_rows() {
  const MeasuredRow base{.source = "fit.csv", .gpus = 4, .global_batch = 16, .micro_batch = 2, .hidden_size = 2048,
                         .attention_heads = 16, .layers = 8, .seq_length = 1024, .tp = 2, .dp = 2, .pp = 1,
                         .iteration_time_s = 1};
  std::vector<MeasuredRow> rows{base, base, base};
  rows[0].line = 2;
  rows[1].line = 3;
  rows[1].hidden_size = 4096;
  rows[1].attention_heads = 32;
  rows[2].line = 4;
  rows[2].tp = 1;
  rows[2].pp = 2;
  return rows;
}

TEST(MeasuredCalibration, AFitRecoversTheEfficiencyThatMadeTheMeasurements) {
  // "Measure" with gemm efficiency 0.55, then fit gemm alone from the preset's 0.8.
  std::vector<MeasuredRow> rows = three_rows();
  const MeasuredConditions truth = vtrain_a100_conditions(device(0.55));
  const auto made = compare_measured(rows, truth, analytic_step_predictor());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].iteration_time_s = made[i].predicted_s;

  const CalibrationOptions options{
      .parameters = {{.parameter = CalibrationParameter::kGemmEfficiency, .lower = 0.1, .upper = 0.95,
                      .initial = 0.8}},
      .max_evaluations = 400};
  const CalibrationResult r = fit_measured(rows, vtrain_a100_conditions(device(0.8)), options);
  ASSERT_EQ(r.values.size(), 1u);
  EXPECT_NEAR(r.values[0], 0.55, 1e-3);
  ASSERT_EQ(r.residuals.size(), 3u);
  EXPECT_EQ(r.residuals[1].label, "fit.csv:3");
  EXPECT_NEAR(r.residuals[1].relative_error, 0, 1e-3);
}

TEST(MeasuredCalibration, ApplyFitSetsEfficienciesAndScalesTheTopologyBandwidth) {
  const MeasuredConditions c = vtrain_a100_conditions(device(0.8));
  const std::vector<ParameterRange> params{{.parameter = CalibrationParameter::kAttentionEfficiency},
                                           {.parameter = CalibrationParameter::kBandwidthFactor},
                                           {.parameter = CalibrationParameter::kMemoryEfficiency}};
  const std::vector<double> values{0.3, 0.5, 0.6};
  const MeasuredConditions f = apply_fit(c, params, values);
  EXPECT_DOUBLE_EQ(f.hardware.efficiency.attention, 0.3);
  EXPECT_DOUBLE_EQ(f.hardware.efficiency.memory, 0.6);
  EXPECT_DOUBLE_EQ(f.hardware.efficiency.gemm, 0.8);  // untouched
  EXPECT_DOUBLE_EQ(f.bandwidth_scale, 0.5);
  // The factor reaches the topology of every row: 12.5 GB/s inter-node per GPU stays the link
  // figure, μ_b = 0.5 is what the collectives apply.
  const MeasuredCase mc = to_measured_case(three_rows()[0], f);
  EXPECT_DOUBLE_EQ(mc.topology.bandwidth_scale, 0.5);
  EXPECT_THROW((void)apply_fit(c, params, std::vector<double>{1.0}), std::invalid_argument);
}

TEST(MeasuredCalibration, TheStoredVtrainFitIsWhatTheCalibratedConditionsUse) {
  const DeviceFit fit = vtrain_a100_fit();
  const MeasuredConditions c = vtrain_a100_calibrated_conditions();
  EXPECT_DOUBLE_EQ(c.hardware.efficiency.gemm, fit.efficiency.gemm);
  EXPECT_DOUBLE_EQ(c.hardware.efficiency.attention, fit.efficiency.attention);
  EXPECT_DOUBLE_EQ(c.hardware.efficiency.memory, fit.efficiency.memory);
  EXPECT_DOUBLE_EQ(c.hardware.kernel_launch_seconds, fit.kernel_launch_seconds);
  EXPECT_DOUBLE_EQ(c.hardware.op_dispatch_seconds, fit.op_dispatch_seconds);
  EXPECT_DOUBLE_EQ(c.bandwidth_scale, fit.bandwidth_scale);
  EXPECT_EQ(c.hardware.compute_model, model::ComputeModelKind::kRoofline);  // the conditions' choice
  EXPECT_DOUBLE_EQ(c.hardware.efficiency.optimizer_memory, 0.91);  // hbm.csv, not fitted
  EXPECT_DOUBLE_EQ(c.hardware.peak_flops_bf16, 312e12);  // the preset's peak is not fitted
}

TEST(MeasuredValidate, TheCommandReadsAFileAndWritesCsvAndSvg) {
  const std::filesystem::path dir = std::filesystem::path(MOFASIM_BINARY_DIR) / "test-validation-measured";
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "runs.csv").string();
  {
    std::ofstream f(in);
    f << "GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,tensor parallelism,"
         "data parallelism,pipeline parallelism,ms\n"
         "4,16,2,2048,16,8,1024,2,2,1,250\n"
         "16,64,2,2048,16,8,1024,2,8,1,300\n";
  }
  const MeasuredValidateOptions options{.measured = {in},
                                        .mapping = {"GPUs=gpus", "ms=iteration_time_ms"},
                                        .predictor = MeasuredPredictorKind::kAnalytic,
                                        .conditions = vtrain_a100_conditions(device(0.7)),
                                        .csv_path = (dir / "out.csv").string(),
                                        .svg_path = (dir / "out.svg").string()};
  std::ostringstream out;
  EXPECT_EQ(validate_measured_command(options, out), 0);
  EXPECT_THAT(out.str(), ::testing::HasSubstr("| single-node | 1 |"));
  EXPECT_THAT(out.str(), ::testing::HasSubstr("| multi-node | 1 |"));
  std::ifstream csv(*options.csv_path);
  std::string header;
  std::getline(csv, header);
  EXPECT_THAT(header, ::testing::HasSubstr("measured_ms,analytic_ms,error_percent,compute_ms,"));
  EXPECT_THAT(header, ::testing::EndsWith(",pp_bubble_ms,optimizer_ms"));
  EXPECT_TRUE(std::filesystem::file_size(*options.svg_path) > 0);

  EXPECT_THROW((void)run_measured_validation({}), std::invalid_argument);  // no file
  EXPECT_THROW((void)run_measured_validation({.measured = {in}}), std::invalid_argument);  // '# GPUs' missing
}

}  // namespace
}  // namespace mofasim::analysis
