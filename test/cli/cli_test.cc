// The mofasim command end to end: every shipped scenario goes through `memory` and `simulate`, the
// JSON carries the documented keys with the numbers the formulas give, bad input exits 2 with its
// one-line error, the trace is Perfetto-shaped JSON and `schema` matches the committed reference.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "test/cli/run_cli.h"
#include "test/support/shipped_scenarios.h"

namespace mofasim::test {
namespace {

namespace fs = std::filesystem;

class ShippedScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedScenario, MemoryJsonHasEveryStage) {
  const CliRun run = run_mofasim("memory " + GetParam() + " --json");
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 3) << run.err;  // 3: a stage does not fit
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(run.exit_code == 0, j.at("fits").get<bool>());
  EXPECT_GT(j.at("parameters_total").get<double>(), 0);
  EXPECT_GT(j.at("flops_per_step").get<double>(), 0);
  EXPECT_GT(j.at("gpu_memory_bytes").get<double>(), 0);
  const auto& stages = j.at("stages");
  ASSERT_FALSE(stages.empty());
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const auto& s = stages[i];
    EXPECT_EQ(s.at("stage").get<int>(), static_cast<int>(i));
    // allocated = static + activation (MoFa(6)); the shipped scenarios keep the schema's
    // expandable_segments (fragmentation 0) and its 287,047,680 B CUDA context, so
    // peak (the reserved total) = allocated + 287,047,680 + reserved.
    EXPECT_NEAR(s.at("allocated_bytes").get<double>(),
                s.at("static_bytes").get<double>() + s.at("activation_bytes").get<double>(), 1.0);
    EXPECT_EQ(s.at("fragmentation_bytes").get<double>(), 0);
    EXPECT_EQ(s.at("cuda_context_bytes").get<double>(), 287'047'680.0);
    EXPECT_NEAR(s.at("peak_bytes").get<double>(),
                s.at("allocated_bytes").get<double>() + 287'047'680.0 + s.at("reserved_bytes").get<double>(), 1.0);
    // Out of memory is a result with its excess, not an error.
    if (!s.at("fits").get<bool>()) {
      EXPECT_NEAR(s.at("excess_bytes").get<double>(),
                  s.at("peak_bytes").get<double>() - j.at("gpu_memory_bytes").get<double>(), 1.0);
    }
  }
}

TEST_P(ShippedScenario, SimulatesWithABreakdownThatSumsToTheStep) {
  const CliRun run = run_mofasim("simulate " + GetParam() + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const double step = j.at("step_time_s").get<double>();
  ASSERT_TRUE(std::isfinite(step));
  ASSERT_GT(step, 0);
  double sum = 0;
  for (const auto& [key, value] : j.at("breakdown").items()) sum += value.get<double>();
  EXPECT_NEAR(sum, step, 1e-6 * step);
  EXPECT_GT(j.at("tflops_per_gpu").get<double>(), 0);
  EXPECT_GT(j.at("mfu").get<double>(), 0);
  EXPECT_LT(j.at("mfu").get<double>(), 1);
  EXPECT_GT(j.at("peak_memory_bytes").get<double>(), 0);
  EXPECT_GT(j.at("events").get<double>(), 0);
}

INSTANTIATE_TEST_SUITE_P(All, ShippedScenario, ::testing::ValuesIn(shipped_scenarios()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(CliMemory, Llama2ParametersAndFlopsMatchTheReferenceFormulas) {
  // reference-formulas.md §8.1: 68,976,648,192 parameters and 428,385,239,040 FLOPs per token;
  // Table 5 column 1 runs B = 256 sequences of s = 4096 tokens per step.
  const CliRun run = run_mofasim("memory scenarios/mofa/table5-llama2-70b-128.yaml --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j.at("parameters_total").get<double>(), 68976648192.0);
  EXPECT_EQ(j.at("flops_per_step").get<double>(), 428385239040.0 * 256 * 4096);
  EXPECT_EQ(j.at("stages").size(), 8u);
}

TEST(CliMemory, SetOverridesAFieldLikeTheFile) {
  // Doubling the global batch doubles the FLOPs of a step.
  const auto base = nlohmann::json::parse(run_mofasim("memory scenarios/small.yaml --json").out);
  const CliRun run = run_mofasim("memory scenarios/small.yaml --json --set parallelism.global_batch=32");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(run.out).at("flops_per_step").get<double>(),
                   2 * base.at("flops_per_step").get<double>());
}

TEST(CliErrors, BadScenarioExitsTwoWithOneLinePerProblem) {
  const CliRun run = run_mofasim("memory scenarios/small.yaml --set parallelism.tp=3");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("scenarios/small.yaml:20:3: parallelism: tp*cp*pp*dp = 3*1*2*2 = 12 but topology.gpus = 8\n"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("--set:1:16: parallelism.tp: 3 does not divide model.num_attention_heads = 8\n"),
            std::string::npos)
      << run.err;
}

TEST(CliErrors, LayerSpecErrorIsLocatedAtItsField) {
  // 8 GPUs are one node; 3 nodes per supernode cannot divide it. The topology validator names the
  // field and the command maps it to where the override wrote it.
  const CliRun run = run_mofasim("simulate scenarios/small.yaml --set topology.nodes_per_supernode=3");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "--set:1:30: topology.nodes_per_supernode: must divide the node count (1), got 3\n");
}

TEST(CliErrors, UnknownCommandAndMissingFileExitTwo) {
  EXPECT_EQ(run_mofasim("simulat scenarios/small.yaml").exit_code, 2);
  const CliRun missing = run_mofasim("memory no/such/file.yaml");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no/such/file.yaml"), std::string::npos) << missing.err;
  const CliRun fidelity = run_mofasim("simulate scenarios/small.yaml --fidelity medium");
  EXPECT_EQ(fidelity.exit_code, 2);
  EXPECT_EQ(fidelity.err, "mofasim simulate: --fidelity must be full or folded, got 'medium'\n");
}

TEST(CliSimulate, FullAndFoldedAgreeOnTheSmallScenario) {
  const auto folded = nlohmann::json::parse(run_mofasim("simulate scenarios/small.yaml --json").out);
  const auto full = nlohmann::json::parse(run_mofasim("simulate scenarios/small.yaml --json --fidelity full").out);
  EXPECT_EQ(folded.at("step_time_s").get<double>(), full.at("step_time_s").get<double>());
}

TEST(CliSimulate, TraceIsChromeTraceJson) {
  const fs::path trace = fs::temp_directory_path() / ("mofasim_trace_" + std::to_string(::getpid()) + ".json");
  const CliRun run = run_mofasim("simulate scenarios/small.yaml --trace '" + trace.string() + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(read_file(trace));
  fs::remove(trace);
  const auto& events = j.at("traceEvents");
  ASSERT_TRUE(events.is_array());
  int complete = 0;
  int named_processes = 0;
  for (const auto& e : events) {
    const std::string ph = e.at("ph");
    if (ph == "X") {
      ++complete;
      EXPECT_GE(e.at("dur").get<double>(), 0);
      EXPECT_TRUE(e.contains("pid") && e.contains("tid") && e.contains("ts") && e.contains("name"));
    } else if (ph == "M" && e.at("name") == "process_name") {
      ++named_processes;
    }
  }
  EXPECT_GT(complete, 0);
  EXPECT_EQ(named_processes, 2);  // small.yaml: pp = 2, one process per stage of the folded replica
}

TEST(CliSchema, PrintsTheCommittedScenarioReference) {
  const CliRun run = run_mofasim("schema");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, read_file(fs::path(MOFASIM_SOURCE_DIR) / "docs/scenario-reference.md"));
}

TEST(CliSweep, WritesCsvAndSvgWithOneRowPerValue) {
  const fs::path prefix = fs::temp_directory_path() / ("mofasim_sweep_" + std::to_string(::getpid()));
  const CliRun run = run_mofasim(
      "sweep scenarios/mofa/table5-llama2-70b-128.yaml --step-time 27.83 --trials 50 -q "
      "--param fault_tolerance.checkpoint.interval_steps=20:200:60 --out '" + prefix.string() + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string csv = read_file(prefix.string() + ".csv");
  const std::string svg = read_file(prefix.string() + ".svg");
  fs::remove(prefix.string() + ".csv");
  fs::remove(prefix.string() + ".svg");
  // 20, 80, 140, 200: four rows after the header.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace mofasim::test

namespace mofasim::test {
namespace {

TEST(CliSimulate, BandwidthScaleEqualsScalingEveryLink) {
  // MoFa(18): mu_b = 2 must be exactly the same run as doubling every link class's bandwidth
  // (and must be applied once: a double application would give the 4x run).
  const auto scaled = nlohmann::json::parse(
      run_mofasim("simulate scenarios/small.yaml --json --set optimizations.bandwidth_scale=2").out);
  const auto doubled = nlohmann::json::parse(
      run_mofasim("simulate scenarios/small.yaml --json --set 'topology.intra_node.bandwidth=740 GB/s' "
                  "--set 'topology.inter_node.bandwidth=92 GB/s'").out);
  const auto base = nlohmann::json::parse(run_mofasim("simulate scenarios/small.yaml --json").out);
  EXPECT_EQ(scaled.at("step_time_s").get<double>(), doubled.at("step_time_s").get<double>());
  EXPECT_LT(scaled.at("step_time_s").get<double>(), base.at("step_time_s").get<double>());
}

}  // namespace
}  // namespace mofasim::test

namespace mofasim::test {
namespace {

TEST(CliTune, ShardsMergedEqualTheUnshardedSearch) {
  const std::string base = "tune scenarios/small.yaml -q --rerank 0 --threads 1 --json --top 3";
  const auto whole = nlohmann::json::parse(run_mofasim(base).out);
  const fs::path dir = fs::temp_directory_path();
  const std::string a = (dir / ("mofasim_tune_a_" + std::to_string(::getpid()) + ".csv")).string();
  const std::string b = (dir / ("mofasim_tune_b_" + std::to_string(::getpid()) + ".csv")).string();
  ASSERT_EQ(run_mofasim(base + " --shard 0/2 --csv '" + a + "'").exit_code, 0);
  ASSERT_EQ(run_mofasim(base + " --shard 1/2 --csv '" + b + "'").exit_code, 0);
  const CliRun merged = run_mofasim(base + " --merge '" + a + "' '" + b + "'");
  fs::remove(a);
  fs::remove(b);
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  const auto m = nlohmann::json::parse(merged.out);
  ASSERT_EQ(whole.at("top").size(), 3u) << whole.dump();
  ASSERT_EQ(m.at("top").size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(m["top"][i].at("id"), whole["top"][i].at("id"));
    EXPECT_DOUBLE_EQ(m["top"][i].at("step_time_s").get<double>(), whole["top"][i].at("step_time_s").get<double>());
  }
}

TEST(CliTune, UnknownRuleIsAUsageError) {
  const CliRun run = run_mofasim("tune scenarios/small.yaml --no-rule fastest-first");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--no-rule 'fastest-first' is not a rule; allowed: tp-within-node"), std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace mofasim::test

namespace mofasim::test {
namespace {

TEST(CliValidate, JsonFieldsCarryTheirRelativeDifference) {
  const CliRun run = run_mofasim("validate scenarios/small.yaml --json --tolerance 0.5");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  bool saw_step = false;
  for (const auto& f : j.at("fields")) {
    const double a = f.at("analytic").get<double>();
    const double s = f.at("simulated").get<double>();
    if (f.at("name") == "step_time_s") {
      saw_step = true;
      // relative difference = (simulated - analytic) / analytic
      EXPECT_DOUBLE_EQ(f.at("relative_difference").get<double>(), (s - a) / a);
      EXPECT_FALSE(f.at("flagged").get<bool>());  // within the 50% tolerance asked for
    }
  }
  EXPECT_TRUE(saw_step);
}

TEST(CliCalibrate, OneColumnFitReproducesItsMeasuredStepTime) {
  // A single measurement and one free parameter: the fit must hit the measured 27.94 s.
  const CliRun run = run_mofasim("calibrate scenarios/mofa/measured-device-a.csv --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const double gemm = j.at("fitted").at("gemm").get<double>();
  EXPECT_GT(gemm, 0.05);
  EXPECT_LE(gemm, 1.0);
  ASSERT_EQ(j.at("residuals").size(), 1u);
  EXPECT_NEAR(j["residuals"][0].at("predicted_step_s").get<double>(), 27.94, 27.94 * 1e-6);
  // And the fitted value, set back through --set, predicts the same step with the analytic model.
  const CliRun check = run_mofasim("validate scenarios/mofa/table5-llama2-70b-128.yaml --json --set hardware.efficiency.gemm=" +
                                   std::to_string(gemm));
  ASSERT_EQ(check.exit_code, 0) << check.err;
  const auto check_json = nlohmann::json::parse(check.out);  // outlives the loop over its fields
  for (const auto& f : check_json.at("fields")) {
    if (f.at("name") == "step_time_s") {
      EXPECT_NEAR(f.at("analytic").get<double>(), 27.94, 27.94 * 1e-5);
    }
  }
}

TEST(CliValidate, MeasuredCsvIsReadWithItsColumnMapping) {
  // Two runs in a user's own column names, mapped onto the default fields.
  const CliRun run = run_measured_two_rows("");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("| all | 2 |"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace mofasim::test
