// Tests of the bounded input-file read and of the measurement readers' refusals: every bad file is
// an InputError naming the file (and line), so the command line exits 2.
#include "sim/analysis/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/analysis/calibrate.h"
#include "sim/analysis/measured_reader.h"

namespace mofasim::analysis {
namespace {

namespace fs = std::filesystem;

class InputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mofasim_input_file_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  template <typename F>
  static std::string error_of(F f) {
    try {
      f();
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no InputError)";
  }
  fs::path dir_;
};

TEST_F(InputFiles, ReadsARegularFileWithinTheCap) {
  const std::string p = write("a.csv", "x,y\n1,2\n");
  EXPECT_EQ(read_input_file(p, "test file"), "x,y\n1,2\n");
  EXPECT_EQ(error_of([&] { (void)read_input_file(p, "test file", 7); }),
            p + ": cannot read the test file: it is 8 bytes, over the limit of 7 bytes");
}

TEST_F(InputFiles, RefusesMissingFoldersDevicesAndFifos) {
  const std::string missing = (dir_ / "missing.csv").string();
  EXPECT_EQ(error_of([&] { (void)read_input_file(missing, "test file"); }),
            missing + ": cannot read the test file: No such file or directory");
  EXPECT_EQ(error_of([&] { (void)read_input_file(dir_.string(), "test file"); }),
            dir_.string() + ": cannot read the test file: it is a folder");
  EXPECT_EQ(error_of([&] { (void)read_input_file("/dev/zero", "test file"); }),
            "/dev/zero: cannot read the test file: it is not a regular file");
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { (void)read_input_file(fifo, "test file"); }),
            fifo + ": cannot read the test file: it is not a regular file");
}

TEST_F(InputFiles, CalibrationMeasurementsRefuseNanInfZeroAndEmpty) {
  const std::string nan = write("nan.csv", "scenario_path,step_time_s\nsmall.yaml,nan\n");
  EXPECT_EQ(error_of([&] { (void)load_measurements(nan); }), nan + ":2: step_time_s must be a finite number > 0, got nan");
  const std::string inf = write("inf.csv", "small.yaml,1.0\nsmall.yaml,inf\n");
  EXPECT_EQ(error_of([&] { (void)load_measurements(inf); }), inf + ":2: step_time_s must be a finite number > 0, got inf");
  const std::string zero = write("zero.csv", "# header comment\nsmall.yaml,0\n");
  EXPECT_EQ(error_of([&] { (void)load_measurements(zero); }), zero + ":2: step_time_s must be a finite number > 0, got 0");
  const std::string empty = write("empty.csv", "scenario_path,step_time_s\n");
  EXPECT_EQ(error_of([&] { (void)load_measurements(empty); }),
            empty + ":1: no measurement rows (expected 'scenario_path,step_time_s' lines)");
  EXPECT_EQ(error_of([&] { (void)load_measurements("/dev/zero"); }),
            "/dev/zero: cannot read the measurements file: it is not a regular file");
}

TEST_F(InputFiles, MeasuredCsvErrorsAreInputErrors) {
  const std::string header =
      "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,tensor parallelism,"
      "data parallelism,pipeline parallelism,iteration time (ms)\n";
  const std::string nan = write("m.csv", header + "8,16,1,1024,16,24,2048,2,4,1,nan\n");
  EXPECT_EQ(error_of([&] { (void)read_measured_csv(nan); }),
            nan + ":2: column 'iteration time (ms)': expected a number, got 'nan'");
  const std::string zero = write("z.csv", header + "8,16,1,1024,16,24,2048,2,4,1,0\n");
  EXPECT_EQ(error_of([&] { (void)read_measured_csv(zero); }),
            zero + ":2: column 'iteration time (ms)': expected a positive time, got '0'");
  const std::string missing = (dir_ / "none.csv").string();
  EXPECT_EQ(error_of([&] { (void)read_measured_csv(missing); }),
            missing + ": cannot read the measured-iteration file: No such file or directory");
  EXPECT_EQ(error_of([&] { (void)ColumnMapping::with_overrides({"foo"}); }),
            "--mapping: 'foo': expected column=field, field one of: gpus, global_batch, micro_batch, hidden_size, "
            "attention_heads, layers, seq_length, tp, dp, pp, iteration_time_ms, iteration_time_s, parameters_billion");
}

}  // namespace
}  // namespace mofasim::analysis
