// One unit policy across commands: human durations and GiB in text (sim/units/format.h), seconds
// and bytes in --json, which every command that computes something accepts; --version; the
// pruning rules named in `tune --help`.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>

#include "sim/units/format.h"
#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

namespace fs = std::filesystem;

TEST(UnitPolicy, DurationsReadAsAPersonWouldSayThem) {
  EXPECT_EQ(format_duration(0), "0 s");
  EXPECT_EQ(format_duration(850e-6), "850 us");
  EXPECT_EQ(format_duration(0.01234), "12.3 ms");
  EXPECT_EQ(format_duration(5.7149), "5.71 s");
  EXPECT_EQ(format_duration(42.04), "42.0 s");
  EXPECT_EQ(format_duration(425), "7 min 05 s");               // 7 * 60 + 5
  EXPECT_EQ(format_duration(3 * 3600 + 12 * 60 + 10), "3 h 12 min");
  EXPECT_EQ(format_duration(3599.6), "1 h 00 min");             // rounds to 3600 s
  EXPECT_EQ(format_duration(64.2 * 86400), "64.2 d");
  EXPECT_EQ(format_duration(5940198.6), "68.8 d");              // 68.752 days
  EXPECT_EQ(format_duration(150 * 86400), "150 d");
  EXPECT_EQ(format_duration(-5.7149), "-5.71 s");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "inf s");
}

TEST(UnitPolicy, MemoryInBinaryUnits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(382.56 * 1024 * 1024), "382.56 MiB");
  EXPECT_EQ(format_bytes(37.19 * kBytesPerGiB), "37.19 GiB");
  EXPECT_EQ(format_bytes(80e9), "74.51 GiB");  // 80 GB is not 80 GiB
}

TEST(UnitPolicy, VersionNamesTheProjectVersion) {
  const CliRun a = run_mofasim("--version");
  const CliRun b = run_mofasim("version");
  ASSERT_EQ(a.exit_code, 0);
  EXPECT_TRUE(std::regex_match(a.out, std::regex(R"(mofasim \d+\.\d+\.\d+( \(git [0-9a-f]{12}\))?\n)"))) << a.out;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(run_mofasim("--help").out.find("version"), std::string::npos);
}

TEST(UnitPolicy, TuneHelpNamesEveryRule) {
  const CliRun help = run_mofasim("tune --help");
  ASSERT_EQ(help.exit_code, 0);
  for (const char* rule : {"tp-within-node", "microbatches-cover-pipeline", "vpp-needs-pipeline", "cp-needs-long-sequence",
                           "inert-feature", "overlap-dominates", "memory-saver-not-needed"}) {
    EXPECT_NE(help.out.find(std::string("\n  ") + rule + " "), std::string::npos) << rule << "\n" << help.out;
  }
  EXPECT_NE(help.out.find("  tp-within-node                TP no wider than a node's GPUs (MoFa rule 4)\n"),
            std::string::npos);
  const CliRun bad = run_mofasim("tune scenarios/small.yaml --no-rule tp-in-node");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "mofasim tune: --no-rule 'tp-in-node' is not a rule; allowed: tp-within-node, microbatches-cover-pipeline, "
            "vpp-needs-pipeline, cp-needs-long-sequence, inert-feature, overlap-dominates, memory-saver-not-needed, "
            "all\n");
}

// The text table's memory column is the JSON's bytes in GiB (at 70B the two units differ: the best
// layout's ~79 GB are ~74 GiB).
TEST(UnitPolicy, TuneTablePrintsGiB) {
  const std::string args = "tune scenarios/llama3-70b-h100-2048.yaml -q --rerank 0 --top 1";
  const CliRun text = run_mofasim(args);
  const CliRun json = run_mofasim(args + " --json");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(text.out.find(" mem_GiB "), std::string::npos);
  const double bytes = nlohmann::json::parse(json.out).at("top").at(0).at("peak_memory_bytes").get<double>();
  ASSERT_GT(bytes / 1e9 - bytes / kBytesPerGiB, 1.0);  // the units are told apart at this size
  EXPECT_NE(text.out.find(format_number(" %6.2f ", bytes / kBytesPerGiB)), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(format_number(" %6.2f ", bytes / 1e9)), std::string::npos) << text.out;
}

// ettr prints its time totals as durations; --json keeps the seconds they come from.
TEST(UnitPolicy, EttrTextDurationsAreTheJsonSeconds) {
  const std::string args = "ettr scenarios/llama3-70b-h100-2048.yaml -q --trials 50 --step-time 6.6";
  const CliRun text = run_mofasim(args);
  const CliRun json = run_mofasim(args + " --json");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const auto j = nlohmann::json::parse(json.out);
  // 894,070 steps / 50 per checkpoint = 17,881 saves of 0.49 s = 2 h 26 min (plus re-saves).
  const double checkpoint_s = j.at("analytic").at("checkpoint_s").get<double>();
  EXPECT_NEAR(checkpoint_s, 17881 * 0.49, 0.02 * 17881 * 0.49);
  const std::string row = "  checkpoint overhead" + std::string(13, ' ') + format_duration(checkpoint_s);
  EXPECT_NE(text.out.find(row), std::string::npos) << row << "\n" << text.out;
  EXPECT_NE(format_duration(checkpoint_s).find(" h "), std::string::npos);
  // End to end: 894,070 steps of 6.6 s = 68.3 d useful, ~68.7 d with failures; the interval as
  // its half-width (1.96 standard errors).
  const auto& mc = j.at("monte_carlo");
  const double half = 1.959963984540054 * mc.at("e2e_std_error_s").get<double>();
  EXPECT_NEAR((mc.at("e2e_ci95_s").at(1).get<double>() - mc.at("e2e_ci95_s").at(0).get<double>()) / 2, half, 1e-6 * half);
  const std::string e2e = "  E2E mean" + std::string(24, ' ') + format_duration(j.at("analytic").at("e2e_s").get<double>());
  EXPECT_NE(text.out.find(e2e), std::string::npos) << e2e << "\n" << text.out;
  EXPECT_NE(text.out.find(format_duration(mc.at("e2e_mean_s").get<double>()) + " (95 % CI: mean ± " +
                          format_duration((mc.at("e2e_ci95_s").at(1).get<double>() - mc.at("e2e_ci95_s").at(0).get<double>()) / 2) + ")\n"),
            std::string::npos) << text.out;
  // 894,070 x 6.6 s = 5,900,862 s useful / ETTR 0.9941 = 5.936e6 s = 68.7 d.
  EXPECT_EQ(format_duration(j.at("analytic").at("e2e_s").get<double>()), "68.7 d");
  EXPECT_EQ(text.out.find("E2E mean                        " + format_number("%.1f s", j.at("analytic").at("e2e_s").get<double>())),
            std::string::npos);
}

// sweep's text prints the best point's end-to-end times with the one duration formatter; the
// numbers are the --json seconds (150 steps per checkpoint is the shortest run on small.yaml).
TEST(UnitPolicy, SweepTextDurationsAreTheJsonSeconds) {
  const std::string out = (fs::temp_directory_path() / ("mofasim_sweep_text_" + std::to_string(::getpid()))).string();
  const std::string args = "sweep scenarios/small.yaml -q --trials 100 --out '" + out +
                           "' --param fault_tolerance.checkpoint.interval_steps=50:150:50";
  const CliRun text = run_mofasim(args);
  const CliRun json = run_mofasim(args + " --json");
  fs::remove(out + ".csv");
  fs::remove(out + ".svg");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const auto j = nlohmann::json::parse(json.out);
  const auto& best = j.at("points").at(j.at("best_index").get<std::size_t>());
  EXPECT_EQ(best.at("value").get<double>(), 150.0);
  const std::string line = "  E2E  " + format_duration(best.at("analytic_e2e_s").get<double>()) + " analytic, " +
                           format_duration(best.at("mc_e2e_mean_s").get<double>()) + " Monte Carlo mean (95 % CI: mean ± ";
  EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;
  EXPECT_EQ(text.out.find(" days"), std::string::npos) << text.out;
}

TEST(UnitPolicy, SweepJson) {
  const std::string out = (fs::temp_directory_path() / ("mofasim_sweep_json_" + std::to_string(::getpid()))).string();
  const CliRun run = run_mofasim("sweep scenarios/small.yaml -q --trials 100 --json --out '" + out +
                                 "' --param fault_tolerance.checkpoint.interval_steps=50:150:50");
  fs::remove(out + ".csv");
  fs::remove(out + ".svg");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j.at("parameter"), "fault_tolerance.checkpoint.interval_steps");
  ASSERT_EQ(j.at("points").size(), 3u);
  EXPECT_EQ(j.at("points").at(1).at("value").get<double>(), 100.0);
  EXPECT_EQ(j.at("csv"), out + ".csv");
  const auto best = j.at("best_index").get<std::size_t>();
  for (const auto& p : j.at("points")) {
    EXPECT_GE(p.at("analytic_e2e_s").get<double>(), j.at("points").at(best).at("analytic_e2e_s").get<double>());
  }
}

TEST(UnitPolicy, ValidateMeasuredJson) {
  const CliRun run = run_measured_two_rows(" --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j.at("predictor"), "analytic");
  ASSERT_EQ(j.at("rows").size(), 2u);
  const auto& r = j.at("rows").at(0);
  EXPECT_EQ(r.at("line"), 2);
  EXPECT_DOUBLE_EQ(r.at("measured_s").get<double>(), 0.37216);
  const double pred = r.at("predicted_s").get<double>();
  EXPECT_NEAR(r.at("error_percent").get<double>(), (pred - 0.37216) / 0.37216 * 100, 1e-9);
  // Where the predicted time goes, in seconds: ten parts that sum to it.
  ASSERT_EQ(r.at("breakdown").size(), 10u);
  double parts = 0;
  for (const auto& [name, seconds] : r.at("breakdown").items()) parts += seconds.get<double>();
  EXPECT_NEAR(parts, pred, 1e-9 * pred);
  EXPECT_GT(r.at("breakdown").at("compute_s").get<double>(), 0);
  EXPECT_EQ(r.at("breakdown").at("recompute_s").get<double>(), 0);  // the closed form keeps it in compute
  EXPECT_EQ(j.at("subsets").at(0).at("subset"), "all");
  EXPECT_EQ(j.at("subsets").at(0).at("rows"), 2);
}

}  // namespace
}  // namespace mofasim::test
