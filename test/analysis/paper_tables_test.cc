// MoFa §5.2 / §5.7 reproduction: calibrate the unknown GEMM efficiency of device A on ONE Table 5
// column (LLaMA2-70B, 128 GPUs) and of device B on ONE column (LLaMA3-405B, 64 GPUs), then predict
// every Table 5 column and the Table 6 top-1 rows (LLaMA3-405B on device B at 64 / 2048 / 8192
// GPUs, built by --set overrides on the 405B column) with no per-row tuning, by the analytic
// model and by the step simulation. Prints the tables of docs/validation.md:
//   build/test/analysis/analysis_paper_tables_test
// The assertions check the calibration itself (the fitted column is reproduced) and that the
// predictions stay in a wide band around the paper's measurements; the numbers are the report.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/analysis/calibrate.h"
#include "sim/analysis/compare.h"
#include "sim/scenario/scenario_specs.h"
#include "sim/executor/simulate_step.h"
#include "sim/scenario/loader.h"

namespace mofasim::analysis {
namespace {

std::string scenario_path(const std::string& name) {
  return std::string(MOFASIM_SOURCE_DIR) + "/scenarios/mofa/" + name + ".yaml";
}

struct Column {
  std::string file;
  char device;  // 'A' or 'B'
  double paper_pred_step, paper_pred_tflops, paper_meas_step, paper_meas_tflops;
};

// Table 5 (the paper's predicted and measured step time and TFLOPS per GPU; also in each file).
const std::vector<Column>& table5() {
  static const std::vector<Column> cols = {
      {"table5-llama2-70b-128", 'A', 27.83, 123.6, 27.94, 123.1},
      {"table5-llama2-70b-256", 'A', 27.99, 122.9, 28.1, 122.4},
      {"table5-llama2-70b-512", 'A', 28.33, 121.4, 28.54, 120.5},
      {"table5-llama2-70b-1024", 'A', 28.83, 119.3, 29.52, 116.5},
      {"table5-llama3-405b-64", 'B', 24.46, 213.01, 24.77, 210.3},
      {"table5-deepseek-v3-128", 'B', 74.5, 105.4, 76.24, 103.1},
  };
  return cols;
}

// Table 6 top-1 rows (the paper's modelled values: memory GB, TFLOPS, step, compute, TP, PP, DP,
// optimizer). Only the layout and features change from the Table 5 405B column.
struct Row {
  std::string label;
  std::vector<std::string> overrides;
  double memory_gb, tflops, step, compute, tp, pp, dp, optimizer;
};

std::vector<std::string> table6_layout(int gpus, int dp, int batch, bool dp_overlap, bool distributed) {
  // v = 2 (interleaved 1F1B): 16 virtual stages of 126 layers, one fewer on the first and the last
  // (embedding, head) as in the Table 5 column's choice.
  std::vector<std::string> o = {
      "topology.gpus=" + std::to_string(gpus),
      "parallelism.dp=" + std::to_string(dp),
      "parallelism.global_batch=" + std::to_string(batch),
      "parallelism.vpp=2",
      "parallelism.schedule=interleaved-1f1b",
      "parallelism.stage_layers=[7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7]",
      std::string("optimizations.dp_overlap.enabled=") + (dp_overlap ? "true" : "false"),
  };
  if (distributed) {
    o.push_back("optimizations.optimizer.placement=gpu");
    o.push_back("optimizations.optimizer.distributed=true");
  }
  return o;
}

const std::vector<Row>& table6() {
  static const std::vector<Row> rows = {
      {"64 GPUs, GBS 16 (t8 p8 d1 v2, CPU opt)", table6_layout(64, 1, 16, false, false), 34.46, 241.18, 22.86, 17.40, 0.50,
       2.72, 0.00, 2.25},
      {"64 GPUs, GBS 64 (t8 p8 d1 v2, CPU opt)", table6_layout(64, 1, 64, false, false), 34.46, 313.33, 70.40, 63.59, 1.83,
       2.72, 0.00, 2.25},
      {"2048 GPUs, GBS 512 (d32 v2, DP ov, CPU opt)", table6_layout(2048, 32, 512, true, false), 37.59, 260.60, 21.16,
       17.40, 0.50, 2.72, 0.53, 0.02},
      {"2048 GPUs, GBS 2048 (d32 v2, DP ov, dist opt)", table6_layout(2048, 32, 2048, true, true), 37.59, 321.10, 68.70,
       63.59, 1.83, 2.72, 0.53, 0.02},
      {"8192 GPUs, GBS 2048 (d128 v2, DP ov, CPU opt)", table6_layout(8192, 128, 2048, true, false), 35.25, 258.73,
       21.31, 17.40, 0.50, 2.72, 0.69, 0.02},
      {"8192 GPUs, GBS 8192 (d128 v2, DP ov, CPU opt)", table6_layout(8192, 128, 8192, true, false), 35.25, 320.39,
       68.85, 63.59, 1.83, 2.72, 0.69, 0.02},
  };
  return rows;
}

void set_gemm(scenario::LoadedScenario& s, double gemm) { s.hardware.efficiency.gemm = gemm; }

double fit_gemm(const std::string& file, double measured, const StepEvaluator& evaluator, int evaluations) {
  const scenario::LoadedScenario s = scenario::load_scenario(scenario_path(file));
  const std::vector<CalibrationPoint> points = {
      {.label = file, .input = cli::analytic_input(s), .measured_step_s = measured}};
  const CalibrationOptions options{
      .parameters = {{.parameter = CalibrationParameter::kGemmEfficiency, .lower = 0.3, .upper = 1.0, .initial = 0.75}},
      .max_evaluations = evaluations,
      .tolerance = 1e-12};
  const CalibrationResult r = calibrate(points, options, evaluator);
  return r.values.at(0);
}

struct Prediction {
  double step = 0, tflops = 0;
};

Prediction analytic(const scenario::LoadedScenario& s) {
  const model::AnalyticResult r = model::evaluate_mofa(cli::analytic_input(s));
  return {r.timing.step_time_s, r.timing.tflops_per_gpu};
}
Prediction simulated(const scenario::LoadedScenario& s) {
  const executor::StepResult r = executor::simulate_step(cli::simulation_input(s), {});
  return {r.step_time_s, r.tflops_per_gpu};
}

double accuracy(double predicted, double measured) { return 100 * (1 - std::abs(predicted - measured) / measured); }

TEST(AnalysisPaperTables, CalibrateOneColumnPerDeviceThenPredictTables5And6) {
  // Preset efficiencies (before calibration).
  const double preset_a = scenario::load_scenario(scenario_path("table5-llama2-70b-128")).hardware.efficiency.gemm;
  const double preset_b = scenario::load_scenario(scenario_path("table5-llama3-405b-64")).hardware.efficiency.gemm;
  // Calibration on one column per device (MoFa §5.7), analytic evaluator and simulator evaluator.
  const double a_ana = fit_gemm("table5-llama2-70b-128", 27.94, analytic_step_evaluator(), 200);
  const double b_ana = fit_gemm("table5-llama3-405b-64", 24.77, analytic_step_evaluator(), 200);
  // One parameter: 40 simulated steps pin it to ~1e-4 (each LLaMA2-70B step replays in ~1 s).
  const double a_sim = fit_gemm("table5-llama2-70b-128", 27.94, analysis::simulated_step_evaluator(), 40);
  const double b_sim = fit_gemm("table5-llama3-405b-64", 24.77, analysis::simulated_step_evaluator(), 40);
  std::printf("\nGEMM efficiency: device A preset %.3f, fitted %.4f (analytic) / %.4f (simulated) on "
              "LLaMA2-70B 128 GPUs (27.94 s measured)\n",
              preset_a, a_ana, a_sim);
  std::printf("                 device B preset %.3f, fitted %.4f (analytic) / %.4f (simulated) on "
              "LLaMA3-405B 64 GPUs (24.77 s measured)\n\n",
              preset_b, b_ana, b_sim);

  std::printf("| column | paper predicted | paper measured | analytic, preset | simulated, preset | analytic, "
              "calibrated | simulated, calibrated | accuracy vs measured (analytic / simulated) |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  double worst = 100;
  for (const Column& c : table5()) {
    scenario::LoadedScenario s = scenario::load_scenario(scenario_path(c.file));
    const Prediction ap = analytic(s);
    const Prediction sp = simulated(s);
    set_gemm(s, c.device == 'A' ? a_ana : b_ana);
    const Prediction ac = analytic(s);
    set_gemm(s, c.device == 'A' ? a_sim : b_sim);
    const Prediction sc = simulated(s);
    const double acc_a = accuracy(ac.step, c.paper_meas_step);
    const double acc_s = accuracy(sc.step, c.paper_meas_step);
    worst = std::min({worst, acc_a, acc_s});
    std::printf("| %s | %.2f s, %.1f | %.2f s, %.1f | %.2f s, %.1f | %.2f s, %.1f | %.2f s, %.1f | %.2f s, %.1f | "
                "%.2f%% / %.2f%% |\n",
                c.file.c_str(), c.paper_pred_step, c.paper_pred_tflops, c.paper_meas_step, c.paper_meas_tflops, ap.step,
                ap.tflops, sp.step, sp.tflops, ac.step, ac.tflops, sc.step, sc.tflops, acc_a, acc_s);
    if (c.file == "table5-llama2-70b-128" || c.file == "table5-llama3-405b-64") {
      // The calibration column is reproduced by its own evaluator.
      EXPECT_NEAR(ac.step, c.paper_meas_step, 1e-3 * c.paper_meas_step) << c.file;
      EXPECT_NEAR(sc.step, c.paper_meas_step, 1e-3 * c.paper_meas_step) << c.file;
    }
  }
  // Wide band: every other column predicted without tuning within 25% of the paper's measurement.
  EXPECT_GT(worst, 75.0);

  std::printf("\n| Table 6 row | paper: step, TFLOPS, mem GB; compute/TP/PP/DP/opt s | analytic (device B "
              "calibrated): step, TFLOPS, mem GB; compute/TP/PP/DP/opt s | simulated: step, TFLOPS, mem GB |\n");
  std::printf("| --- | --- | --- | --- |\n");
  for (const Row& row : table6()) {
    scenario::LoadedScenario s = scenario::load_scenario(scenario_path("table5-llama3-405b-64"), row.overrides);
    set_gemm(s, b_ana);
    const model::AnalyticResult a = model::evaluate_mofa(cli::analytic_input(s));
    const model::StepBreakdown& b = a.timing.breakdown;
    set_gemm(s, b_sim);
    const executor::StepResult r = executor::simulate_step(cli::simulation_input(s), {});
    std::printf("| %s | %.2f s, %.2f, %.2f; %.2f/%.2f/%.2f/%.2f/%.2f | %.2f s, %.2f, %.2f; %.2f/%.2f/%.2f/%.2f/%.2f | "
                "%.2f s, %.2f, %.2f |\n",
                row.label.c_str(), row.step, row.tflops, row.memory_gb, row.compute, row.tp, row.pp, row.dp,
                row.optimizer, a.timing.step_time_s, a.timing.tflops_per_gpu, a.memory.peak_bytes() / 1e9,
                b.compute + b.pp_bubble, b.tp_exposed, b.pp_exposed, b.dp_exposed, b.optimizer, r.step_time_s,
                r.tflops_per_gpu, r.peak_memory_bytes / 1e9);
    EXPECT_GT(a.timing.step_time_s, 0.5 * row.step) << row.label;
    EXPECT_LT(a.timing.step_time_s, 1.5 * row.step) << row.label;
  }
}

}  // namespace
}  // namespace mofasim::analysis
