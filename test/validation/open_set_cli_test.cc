// `mofasim validate --measured` on open-set files, end to end: the format is detected, the report,
// --json, --csv and --svg come out, two runs give the same bytes, and bad input is one line with
// exit status 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "test/cli/run_cli.h"
#include "test/validation/open_rows_for_test.h"

namespace mofasim::analysis {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class OpenSetCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("mofasim_open_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    csv_ = (dir_ / "runs.csv").string();
    std::ofstream(csv_) << test::open_csv({{{"id", "O-ILM-01"}},
                                           {{"id", "O-ILM-02"}, {"precision", "fp8"}},
                                           {{"id", "O-FA-01"}, {"measured_quantity", "step_s"}, {"measured_value", "3"}}});
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string csv_;
};

TEST_F(OpenSetCli, ReportsTablesAndTheRowsNotExpressed) {
  const mofasim::test::CliRun run = mofasim::test::run_mofasim("validate -q --measured '" + csv_ + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, StartsWith("Open set: 3 rows, 2 predicted, predictor: simulated, shipped presets\n"));
  EXPECT_THAT(run.out, HasSubstr("| fit | 1 |"));
  EXPECT_THAT(run.out, HasSubstr("| test | 1 |"));
  EXPECT_THAT(run.out, HasSubstr("Not expressible yet: 1 of 3 rows"));
  EXPECT_THAT(run.out, HasSubstr("| 1 | O-ILM-02 |"));
}

TEST_F(OpenSetCli, JsonCsvAndSvgAreWrittenAndDeterministic) {
  const std::string rows = (dir_ / "rows.csv").string();
  const std::string svg = (dir_ / "scatter.svg").string();
  const std::string args = "validate -q --measured '" + csv_ + "' --predictor analytic --json --csv '" + rows +
                           "' --svg '" + svg + "'";
  const mofasim::test::CliRun first = mofasim::test::run_mofasim(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const nlohmann::json j = nlohmann::json::parse(first.out);
  EXPECT_EQ(j["format"], "open-set");
  EXPECT_EQ(j["predictor"], "analytic");
  EXPECT_EQ(j["predicted_rows"], 2);
  EXPECT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["csv"], rows);
  const std::string csv_text = mofasim::test::read_file(rows);
  EXPECT_THAT(csv_text, StartsWith("id,split,source,gpu,kind,gpus,quantity,measured,predicted,error_percent,"));
  EXPECT_EQ(std::count(csv_text.begin(), csv_text.end(), '\n'), 4);
  EXPECT_THAT(mofasim::test::read_file(svg), StartsWith("<svg"));
  const mofasim::test::CliRun second = mofasim::test::run_mofasim(args);
  EXPECT_EQ(second.out, first.out);
  EXPECT_EQ(mofasim::test::read_file(rows), csv_text);
}

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (char c : line) {
    if (c == ',') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  cells.push_back(cell);
  return cells;
}

// The predicted step's breakdown in --csv (both predictors) and --json: ten columns between
// predicted_step_s and not_expressible whose values sum to predicted_step_s (each printed to 6
// significant digits, so to 1e-5 of it); empty for the row not expressed.
TEST_F(OpenSetCli, EveryPredictedRowHasItsBreakdownSummingToItsStep) {
  const std::vector<std::string> parts = {"compute_s", "recompute_s", "tp_s",   "cp_s",        "ep_s",
                                          "pp_comm_s", "dp_s",        "offload_s", "pp_bubble_s", "optimizer_s"};
  for (const std::string predictor : {"simulated", "analytic"}) {
    SCOPED_TRACE(predictor);
    const std::string rows = (dir_ / ("rows_" + predictor + ".csv")).string();
    const mofasim::test::CliRun run = mofasim::test::run_mofasim("validate -q --measured '" + csv_ +
                                                                 "' --predictor " + predictor + " --json --csv '" +
                                                                 rows + "'");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::istringstream csv(mofasim::test::read_file(rows));
    std::string line;
    ASSERT_TRUE(std::getline(csv, line));
    const std::vector<std::string> header = split_cells(line);
    ASSERT_EQ(header.size(), 23u);
    EXPECT_EQ(header[11], "predicted_step_s");
    for (std::size_t i = 0; i < parts.size(); ++i) EXPECT_EQ(header[12 + i], parts[i]);
    EXPECT_EQ(header[22], "not_expressible");
    int predicted = 0;
    while (std::getline(csv, line)) {
      const std::vector<std::string> cells = split_cells(line);
      ASSERT_EQ(cells.size(), 23u) << line;
      if (cells[11].empty()) {  // O-ILM-02: FP8 on the A100, not expressed
        for (std::size_t i = 12; i < 22; ++i) EXPECT_EQ(cells[i], "") << line;
        EXPECT_NE(cells[22], "");
        continue;
      }
      ++predicted;
      const double step = std::stod(cells[11]);
      double sum = 0;
      for (std::size_t i = 12; i < 22; ++i) {
        sum += std::stod(cells[i]);
        // No negative time: O-ILM-01 has no pipeline, where the closed form's bubble (its length
        // minus the busy time) leaves a -4e-16 s residue that the predictor writes as 0.
        EXPECT_GE(std::stod(cells[i]), 0) << header[i] << " in " << line;
      }
      EXPECT_GT(step, 0);
      EXPECT_NEAR(sum, step, 1e-5 * step) << line;
      EXPECT_GT(std::stod(cells[12]), 0.5 * step) << line;  // compute dominates these dense rows
      EXPECT_EQ(cells[22], "");
    }
    EXPECT_EQ(predicted, 2);
    const nlohmann::json j = nlohmann::json::parse(run.out);
    for (const nlohmann::json& r : j["rows"]) {
      if (!r.contains("predicted_step_s")) {
        EXPECT_FALSE(r.contains("breakdown"));
        continue;
      }
      ASSERT_EQ(r["breakdown"].size(), parts.size());
      double sum = 0;
      for (const std::string& part : parts) sum += r["breakdown"].at(part).get<double>();
      const double step = r["predicted_step_s"].get<double>();
      EXPECT_NEAR(sum, step, 1e-9 * step);
    }
  }
}

TEST_F(OpenSetCli, BadInputIsOneLineWithExitStatus2) {
  const std::string bad = (dir_ / "bad.csv").string();
  std::ofstream(bad) << test::open_csv({{{"gpus", "12"}}, {{"id", "O-ILM-03"}}});
  mofasim::test::CliRun run = mofasim::test::run_mofasim("validate -q --measured '" + bad + "'");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, bad + ":2: column 'gpus': tp*pp*cp*dp = 16 but gpus = 12\n");
  // The report still covers the file: the good row is compared, the bad one listed with its reason.
  EXPECT_THAT(run.out, ::testing::HasSubstr("Open set: 2 rows, 1 predicted"));
  EXPECT_THAT(run.out, ::testing::HasSubstr("column 'gpus': tp*pp*cp*dp = 16 but gpus = 12 | 1 | O-ILM-02"));

  run = mofasim::test::run_mofasim("validate -q --measured '" + csv_ + "' --mapping a=gpus");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim validate: --mapping: the open-set format is read as it is\n");

  run = mofasim::test::run_mofasim("validate -q --measured '" + csv_ + "' --shard 0/2");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim validate: --shard/--merge: not available for the open-set format\n");

  const std::string vtrain = (dir_ / "vtrain.csv").string();
  std::ofstream(vtrain) << "# GPUs,global batch\n1,1\n";
  run = mofasim::test::run_mofasim("validate -q --measured '" + csv_ + "' --measured '" + vtrain + "'");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "--measured: " + csv_ + " is in the open-set format but " + vtrain +
                         " is not; give files of one format\n");
}

}  // namespace
}  // namespace mofasim::analysis
