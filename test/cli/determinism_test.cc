// Every command's output is bit-identical run to run and, where the command has --threads, for one
// and two threads: simulate, memory, ettr, sweep (its CSV and SVG), tune, validate and calibrate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

namespace fs = std::filesystem;

const std::string kSmall = "scenarios/small.yaml";

class Determinism : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mofasim_determinism_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs `args` and returns its stdout, asserting success.
  static std::string output_of(const std::string& args) {
    const CliRun run = run_mofasim(args);
    EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.err;
    EXPECT_FALSE(run.out.empty()) << args;
    return run.out;
  }
  // Two runs of `args` give the same bytes.
  static void same_twice(const std::string& args) { EXPECT_EQ(output_of(args), output_of(args)) << args; }

  fs::path dir_;
};

TEST_F(Determinism, Simulate) {
  same_twice("simulate " + kSmall + " --json");
  same_twice("simulate " + kSmall + " --fidelity full");
}

TEST_F(Determinism, Memory) { same_twice("memory " + kSmall + " --json"); }

TEST_F(Determinism, EttrForAnyThreadCount) {
  const std::string args = "ettr " + kSmall + " -q --trials 3000 --json --set fault_tolerance.node_failure_rate_per_day=2";
  const std::string one = output_of(args + " --threads 1");
  EXPECT_EQ(one, output_of(args + " --threads 1"));
  EXPECT_EQ(one, output_of(args + " --threads 2"));
  const std::string csv1 = path("one.csv");
  const std::string csv2 = path("two.csv");
  (void)output_of(args + " --threads 1 --csv " + csv1);
  (void)output_of(args + " --threads 2 --csv " + csv2);
  EXPECT_EQ(read_file(csv1), read_file(csv2));
  EXPECT_GT(read_file(csv1).size(), 3000u * 20);  // one row per trial
}

TEST_F(Determinism, SweepForAnyThreadCount) {
  const std::string args = "sweep " + kSmall + " -q --trials 500 --param fault_tolerance.checkpoint.interval_steps=50:200:50";
  std::string first_csv;
  std::string first_svg;
  std::string first_out;
  int run = 0;
  for (int threads : {1, 1, 2}) {
    const std::string prefix = path("sweep" + std::to_string(run++));
    const std::string out = output_of(args + " --threads " + std::to_string(threads) + " --out " + prefix);
    const std::string csv = read_file(prefix + ".csv");
    const std::string svg = read_file(prefix + ".svg");
    if (first_csv.empty()) {
      first_csv = csv;
      first_svg = svg;
      first_out = out.substr(out.find('\n'));  // the first line names the output prefix
      continue;
    }
    EXPECT_EQ(csv, first_csv) << threads;
    EXPECT_EQ(svg, first_svg) << threads;
    EXPECT_EQ(out.substr(out.find('\n')), first_out) << threads;
  }
  EXPECT_FALSE(first_csv.empty());
}

TEST_F(Determinism, TuneForAnyThreadCount) {
  const std::string args = "tune " + kSmall + " -q --rerank 4 --json";
  const std::string one = output_of(args + " --threads 1");
  EXPECT_EQ(one, output_of(args + " --threads 1"));
  EXPECT_EQ(one, output_of(args + " --threads 2"));
  const std::string csv1 = path("one.csv");
  const std::string csv2 = path("two.csv");
  (void)output_of("tune " + kSmall + " -q --rerank 0 --threads 1 --csv " + csv1);
  (void)output_of("tune " + kSmall + " -q --rerank 0 --threads 2 --csv " + csv2);
  EXPECT_EQ(read_file(csv1), read_file(csv2));
}

TEST_F(Determinism, Validate) { same_twice("validate " + kSmall + " --json"); }

TEST_F(Determinism, Calibrate) {
  const std::string csv = path("measured.csv");
  std::ofstream(csv) << "scenario_path,step_time_s\n" << MOFASIM_SOURCE_DIR << "/" << kSmall << ",0.002\n";
  same_twice("calibrate " + csv + " --json --evaluations 60");
}

}  // namespace
}  // namespace mofasim::test
