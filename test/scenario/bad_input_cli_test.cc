// The bad-input catalogue (bad_input_cases.h) through the mofasim binary, plus the inputs that
// only exist as files (devices, FIFOs, directories, oversized files). Every run is a child
// process under a 10 s alarm and a 4 GiB address-space limit (RLIMIT_AS), so a hang or a runaway
// allocation fails the case instead of the machine; each must exit 2 with the exact first line.
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/scenario/bad_input_cases.h"
#include "test/scenario/limited_run.h"

namespace mofasim::scenario {
namespace {

namespace fs = std::filesystem;
using testing::BadInput;
using testing::Outcome;
using testing::run_limited;
using testing::scratch;

void expect_refused(const Outcome& run, const std::string& first_line) {
  ASSERT_TRUE(run.exited) << "ended by signal " << run.status << (run.status == SIGALRM ? " (time limit)" : "");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.first_line, first_line);
}

class BadInputCli : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputCli, ExitsTwoWithTheExpectedFirstLine) {
  const BadInput& c = GetParam();
  std::ofstream(scratch() / "bad.yaml", std::ios::binary) << c.yaml;
  std::vector<std::string> args{c.command, "bad.yaml"};
  for (const auto& o : c.overrides) {
    args.emplace_back("--set");
    args.push_back(o);
  }
  expect_refused(run_limited(args), c.first_line);
}

INSTANTIATE_TEST_SUITE_P(Cli, BadInputCli, ::testing::ValuesIn(testing::bad_inputs()),
                         [](const ::testing::TestParamInfo<BadInput>& param_info) { return param_info.param.name; });

TEST(BadInputFiles, DevZeroIsNeverRead) {
  expect_refused(run_limited({"simulate", "/dev/zero"}),
                 "/dev/zero: cannot read scenario file: not a regular file (a device, FIFO or socket is never read)");
}

TEST(BadInputFiles, DevUrandomIsNeverRead) {
  expect_refused(
      run_limited({"ettr", "/dev/urandom"}),
      "/dev/urandom: cannot read scenario file: not a regular file (a device, FIFO or socket is never read)");
}

TEST(BadInputFiles, AFifoWithoutWriterIsNotWaitedOn) {
  const fs::path fifo = scratch() / "pipe.yaml";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(run_limited({"memory", "pipe.yaml"}),
                 "pipe.yaml: cannot read scenario file: not a regular file (a device, FIFO or socket is never read)");
}

TEST(BadInputFiles, ADirectory) {
  fs::create_directories(scratch() / "dir.yaml");
  expect_refused(run_limited({"memory", "dir.yaml"}), "dir.yaml: cannot read scenario file: is a directory");
}

TEST(BadInputFiles, AMissingFile) {
  expect_refused(run_limited({"memory", "missing.yaml"}),
                 "missing.yaml: cannot read scenario file: No such file or directory");
}

TEST(BadInputFiles, FiftyMegabytesOfUnknownKeysAreRefusedBySize) {
  {
    std::ofstream out(scratch() / "huge.yaml");
    for (int i = 0; out.tellp() < 50'000'000; ++i) out << "unknown_key_" << i << ": 1\n";
  }
  const auto size = fs::file_size(scratch() / "huge.yaml");
  expect_refused(run_limited({"simulate", "huge.yaml"}),
                 "huge.yaml: cannot read scenario file: " + std::to_string(size) +
                     " bytes, more than the limit of 4194304 bytes (4 MiB)");
  fs::remove(scratch() / "huge.yaml");
}

TEST(BadInputFiles, AFileOfManyUnknownKeysEndsWithACount) {
  // About 1.2 MB, 60,000 unknown keys: linear work (about 1 s), 20 lines and a count.
  {
    std::ofstream out(scratch() / "keys.yaml");
    for (int i = 0; i < 60'000; ++i) out << "unknown_key_" << i << ": 1\n";
  }
  const Outcome run = run_limited({"memory", "keys.yaml"});
  expect_refused(run,
                 "keys.yaml:1:1: (top level): unknown field 'unknown_key_0'; expected one of name, description, "
                 "model, hardware, topology, parallelism, optimizations, fault_tolerance, training, perturbations");
  EXPECT_EQ(run.last_line, "... and 59980 more errors");
  fs::remove(scratch() / "keys.yaml");
}

}  // namespace
}  // namespace mofasim::scenario
