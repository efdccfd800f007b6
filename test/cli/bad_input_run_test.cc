// Bad input at run time, end to end: every class ends with exit 2 and its one located line before
// any work (or exit 1 on a failed write), never a hang, an abort or a silent loss of data.
// Classes: Monte Carlo runs over their event budget, thread counts over the cap, outputs that are
// inputs, unwritable outputs, a full standard output, measurement files with NaN / zero / missing,
// simulated-time overflow, integer overflow in derived counts, and tune with every rule off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

namespace fs = std::filesystem;

const std::string kSmall = "scenarios/small.yaml";

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

class RunTimeBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mofasim_bad_input_run_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return path(name);
  }
  fs::path dir_;
};

// --- Work that always ends -------------------------------------------------------------------

TEST_F(RunTimeBadInput, MonteCarloOverItsEventBudgetIsRefusedUpFront) {
  // 1e5 failures per unit per day: mean time between failures 0.864 s against 101 s segments.
  const CliRun run = run_mofasim("ettr " + kSmall +
                                 " -q --step-time 1 --set fault_tolerance.node_failure_rate_per_day=100000");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(first_line(run.err),
            "scenarios/small.yaml:38:33: fault_tolerance.checkpoint.interval_steps: monte carlo: a trial is expected "
            "to meet 5.86e+52 failures (a checkpoint segment is 101 s of exposed time against a mean time between "
            "failures of 0.864 s), so 10000 trials need 5.86e+56 failure events, over the budget of 100000000; "
            "shorten fault_tolerance.checkpoint.interval_steps or the run, lower the failure rate, or use fewer "
            "--trials or a larger --max-events");
}

TEST_F(RunTimeBadInput, TheShippedLongIntervalCaseEndsAtOnce) {
  // The realistic hang of the issue: 65536-step segments on 2048 GPUs (a step time given, so the
  // test does not simulate the step).
  const CliRun run = run_mofasim("ettr scenarios/llama3-405b-h100-2048.yaml -q --step-time 30 --set "
                                 "fault_tolerance.checkpoint.interval_steps=65536");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.starts_with("--set:1:43: fault_tolerance.checkpoint.interval_steps: monte carlo: a trial is "
                                  "expected to meet 5.75e+10 failures (a checkpoint segment is 1.97e+06 s"))
      << run.err;
}

TEST_F(RunTimeBadInput, StepsNearInt64MaxAreRefusedNotWrapped) {
  const CliRun run = run_mofasim("ettr " + kSmall + " -q --step-time 1 --set training.steps=9223372036854775807");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.err.starts_with("scenarios/small.yaml:38:33: fault_tolerance.checkpoint.interval_steps: monte carlo: "
                                  "a trial is expected to meet 5.39e+11 failures"))
      << run.err;
}

TEST_F(RunTimeBadInput, MaxEventsIsAGuardTheUserSets) {
  // The default budget lets this run (about 2.4 failures a trial at 20 per unit per day);
  // --max-events 1000 over 1000 trials does not.
  const std::string rate = " -q --step-time 1 --trials 1000 --set fault_tolerance.node_failure_rate_per_day=20";
  EXPECT_EQ(run_mofasim("ettr " + kSmall + rate).exit_code, 0);
  const CliRun run = run_mofasim("ettr " + kSmall + rate + " --max-events 1000");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(first_line(run.err).find("so 1000 trials need 2.37e+03 failure events, over the budget of 1000;"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(first_line(run_mofasim("ettr " + kSmall + " --max-events 0").err),
            "mofasim ettr: --max-events: must be in [1, 1000000000000000], got 0");
  // Other counts that drive loops or allocations have caps too.
  EXPECT_EQ(first_line(run_mofasim("ettr " + kSmall + " --trials 100000000").err),
            "mofasim ettr: --trials: must be in [1, 10000000], got 100000000");
  EXPECT_EQ(first_line(run_mofasim("calibrate x.csv --evaluations 2000000000").err),
            "mofasim calibrate: --evaluations: must be in [1, 1000000], got 2000000000");
}

// --- Thread counts ---------------------------------------------------------------------------

TEST_F(RunTimeBadInput, ThreadCountsOverTheCapAreRefused) {
  CliRun run = run_mofasim("ettr " + kSmall + " --threads 40000");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim ettr: --threads: must be in [0, 1024] (0 = all cores), got 40000\n");
  run = run_mofasim("sweep " + kSmall + " --threads 100000 --param fault_tolerance.checkpoint.interval_steps=10:20:10");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim sweep: --threads: must be in [0, 1024] (0 = all cores), got 100000\n");
  run = run_mofasim("tune " + kSmall + " --threads 5000");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim tune: --threads: must be in [0, 1024] (0 = all cores), got 5000\n");
  // The cap itself runs (fewer trials than threads: the extra threads have nothing to do).
  run = run_mofasim("ettr " + kSmall + " -q --step-time 1 --trials 300 --threads 1024 --json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST_F(RunTimeBadInput, RefusedThreadsAreNotACrash) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit this test sets";
#else
  // Under a 3 GB address-space limit the system refuses most of 1024 thread stacks (8 MB each).
  // That used to abort ("terminate called without an active exception"); now the threads that
  // started do the work, with the same result as one thread.
  const std::string ettr = "'" MOFASIM_BINARY_DIR "/mofasim' ettr " + kSmall + " -q --step-time 1 --trials 300000 --json";
  const std::string limited = path("limited.json");
  const std::string single = path("single.json");
  const std::string command = std::string("cd '") + MOFASIM_SOURCE_DIR + "' && (ulimit -v 3000000 && " + ettr +
                              " --threads 1024 >'" + limited + "') && " + ettr + " --threads 1 >'" + single + "'";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_GT(read_file(single).size(), 100u);
  EXPECT_EQ(read_file(limited), read_file(single));
  // tune gives each worker a fixed share; the calling thread runs the shares of refused threads
  // (this used to fail with "Resource temporarily unavailable", exit 1).
  const std::string tune = "'" MOFASIM_BINARY_DIR "/mofasim' tune " + kSmall + " -q --rerank 0 --json";
  const std::string tune_command = std::string("cd '") + MOFASIM_SOURCE_DIR + "' && (ulimit -v 3000000 && " + tune +
                                   " --threads 1024 >'" + limited + "') && " + tune + " --threads 1 >'" + single + "'";
  ASSERT_EQ(std::system(tune_command.c_str()), 0);
  EXPECT_GT(read_file(single).size(), 100u);
  EXPECT_EQ(read_file(limited), read_file(single));
#endif
}

// --- Outputs ---------------------------------------------------------------------------------

TEST_F(RunTimeBadInput, AnOutputThatIsAnInputIsRefused) {
  const std::string scenario = path("s.yaml");
  fs::copy_file(fs::path(MOFASIM_SOURCE_DIR) / kSmall, scenario);
  const std::string before = read_file(scenario);
  CliRun run = run_mofasim("simulate " + scenario + " --trace " + scenario);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim simulate: --trace: " + scenario + " is an input of this command; refusing to overwrite it\n");
  EXPECT_EQ(read_file(scenario), before);
  // The same file through another name (a hard link) is found by its inode.
  const std::string alias = path("alias.json");
  fs::create_hard_link(scenario, alias);
  run = run_mofasim("ettr " + scenario + " --csv " + alias);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim ettr: --csv: " + alias + " is an input of this command (the same file as " + scenario +
                         "); refusing to overwrite it\n");
  EXPECT_EQ(read_file(scenario), before);
  // validate --csv onto the measurements it reads.
  const std::string measured = write("m.csv", "a,b\n1,2\n");
  run = run_mofasim("validate --measured " + measured + " --csv " + measured);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim validate: --csv: " + measured + " is an input of this command; refusing to overwrite it\n");
  EXPECT_EQ(read_file(measured), "a,b\n1,2\n");
  // Two outputs on one file.
  run = run_mofasim("simulate " + kSmall + " --trace " + path("t") + " --timeline " + path("t"));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim simulate: --timeline: " + path("t") + " is also the output of --trace\n");
}

TEST_F(RunTimeBadInput, UnwritableOutputsAreRefusedBeforeAnyWork) {
  struct Case {
    std::string args;
    std::string error;
  };
  const Case cases[] = {
      {"simulate " + kSmall + " --trace /nonexistent/t.json",
       "mofasim simulate: --trace: cannot write /nonexistent/t.json: folder /nonexistent: No such file or directory"},
      {"simulate " + kSmall + " --timeline scenarios",
       "mofasim simulate: --timeline: cannot write scenarios: it is a folder"},
      {"ettr " + kSmall + " --csv /nonexistent/t.csv",
       "mofasim ettr: --csv: cannot write /nonexistent/t.csv: folder /nonexistent: No such file or directory"},
      {"tune " + kSmall + " --csv /nonexistent/t.csv",
       "mofasim tune: --csv: cannot write /nonexistent/t.csv: folder /nonexistent: No such file or directory"},
      {"sweep " + kSmall + " --param fault_tolerance.checkpoint.interval_steps=10:20:10 --out /nonexistent/p",
       "mofasim sweep: --out: cannot write /nonexistent/p.csv: folder /nonexistent: No such file or directory"},
      {"validate --measured " + kSmall + " --svg /nonexistent/s.svg",
       "mofasim validate: --svg: cannot write /nonexistent/s.svg: folder /nonexistent: No such file or directory"},
  };
  for (const Case& c : cases) {
    const CliRun run = run_mofasim(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args;
    EXPECT_EQ(run.out, "") << c.args;  // refused before the computation printed anything
    EXPECT_EQ(run.err, c.error + "\n") << c.args;
  }
}

TEST_F(RunTimeBadInput, AFullStandardOutputFailsTheCommand) {
  for (const std::string cmd : {"memory", "simulate"}) {
    const CliRun run = run_mofasim(cmd + " " + kSmall + " >/dev/full");
    EXPECT_EQ(run.exit_code, 1) << cmd;
    EXPECT_EQ(run.err, "mofasim " + cmd + ": error writing standard output: No space left on device\n") << cmd;
  }
}

TEST_F(RunTimeBadInput, AFullOutputFileFailsTheCommand) {
  struct Case {
    std::string args;
    std::string error;
  };
  const std::string measured = write("m.csv",
                                     "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence "
                                     "length,tensor parallelism,data parallelism,pipeline parallelism,iteration time "
                                     "(ms)\n8,16,1,1024,16,24,2048,2,4,1,100\n");
  const Case cases[] = {
      {"simulate " + kSmall + " --trace /dev/full", "mofasim simulate: error: failed writing trace file /dev/full"},
      {"ettr " + kSmall + " -q --trials 100 --csv /dev/full",
       "mofasim ettr: error: cannot write /dev/full: short write (disk full?)"},
      {"tune " + kSmall + " -q --rerank 0 --csv /dev/full",
       "mofasim tune: error: cannot write /dev/full: short write (disk full?)"},
      {"validate --measured " + measured + " --csv /dev/full", "mofasim validate: error: /dev/full: write failed"},
  };
  for (const Case& c : cases) {
    const CliRun run = run_mofasim(c.args + " >/dev/null");
    EXPECT_EQ(run.exit_code, 1) << c.args;
    EXPECT_EQ(run.err, c.error + "\n") << c.args;
  }
}

// --- Measurement files -----------------------------------------------------------------------

TEST_F(RunTimeBadInput, MeasurementFilesWithNanZeroOrMissingExitTwo) {
  const std::string nan = write("nan.csv", "scenario_path,step_time_s\nsmall.yaml,nan\n");
  CliRun run = run_mofasim("calibrate " + nan);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, nan + ":2: step_time_s must be a finite number > 0, got nan\n");
  const std::string zero = write("zero.csv", "small.yaml,0\n");
  run = run_mofasim("calibrate " + zero);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, zero + ":1: step_time_s must be a finite number > 0, got 0\n");
  run = run_mofasim("calibrate " + path("missing.csv"));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, path("missing.csv") + ": cannot read the measurements file: No such file or directory\n");
  run = run_mofasim("calibrate /dev/zero");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "/dev/zero: cannot read the measurements file: it is not a regular file\n");

  const std::string header =
      "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,tensor parallelism,"
      "data parallelism,pipeline parallelism,iteration time (ms)\n";
  const std::string measured_nan = write("m_nan.csv", header + "8,16,1,1024,16,24,2048,2,4,1,nan\n");
  run = run_mofasim("validate --measured " + measured_nan);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, measured_nan + ":2: column 'iteration time (ms)': expected a number, got 'nan'\n");
  const std::string measured_zero = write("m_zero.csv", header + "8,16,1,1024,16,24,2048,2,4,1,0\n");
  run = run_mofasim("validate --measured " + measured_zero);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, measured_zero + ":2: column 'iteration time (ms)': expected a positive time, got '0'\n");
  run = run_mofasim("validate --measured " + path("none.csv"));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, path("none.csv") + ": cannot read the measured-iteration file: No such file or directory\n");
}

TEST_F(RunTimeBadInput, FailureRecordsMustBeARegularFileAndAreLocated) {
  const CliRun run = run_mofasim("ettr " + kSmall +
                                 " -q --set fault_tolerance.process=empirical --set fault_tolerance.failure_records=/dev/zero");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "--set:2:33: fault_tolerance.failure_records: /dev/zero: failure records must be a regular file\n");
}

TEST_F(RunTimeBadInput, TuneMergeInputsAreBoundedAndChecked) {
  CliRun run = run_mofasim("tune " + kSmall + " --merge /dev/zero");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim tune: --merge: /dev/zero: cannot read the shard output: it is not a regular file\n");
  const std::string bad = write("bad.json", "{\"stats\": 1}");
  run = run_mofasim("tune " + kSmall + " --merge " + bad);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "mofasim tune: --merge: tuner merge: JSON needs 'stats' and 'top'\n");
}

// --- Arithmetic on extreme inputs ------------------------------------------------------------

TEST_F(RunTimeBadInput, APeakOfOneFlopsOverflowsTheClockAsBadInput) {
  const CliRun run = run_mofasim("simulate " + kSmall + " --set 'hardware.peak_bf16=1 FLOPS'");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "mofasim simulate: simulated time overflow: an activity would end at t = 9.23e+09 s, past the clock's "
            "range of 2^63 ns (292 years); a rate in the scenario (hardware peak FLOPS or a link bandwidth) is far too "
            "small\n");
}

TEST_F(RunTimeBadInput, RatesOutOfDoubleRangeAreBadInputNotInternalErrors) {
  // A peak of 1e-320 FLOPS makes a compute activity's work infinite; a bandwidth of 1e308 B/s an
  // infinite rate (it used to trip the internal check "fluid: activity rate is zero or not finite").
  CliRun run = run_mofasim("simulate " + kSmall + " --set 'hardware.peak_bf16=1e-320 FLOPS'");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "mofasim simulate: simulated work out of range: an activity's work is infinite; a rate in the scenario "
            "(hardware peak FLOPS or a link bandwidth) is too small for double precision\n");
  run = run_mofasim("simulate " + kSmall + " --set 'topology.intra_node.bandwidth=1e308 B/s'");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "mofasim simulate: simulated rate out of range: an activity's rate is inf work units per second; a rate in "
            "the scenario (hardware peak FLOPS or a link bandwidth) is too small or too large for double precision\n");
  // A denormal bandwidth: the duration is infinite ("from_seconds: duration too large inf" before).
  run = run_mofasim("simulate " + kSmall + " --set 'topology.intra_node.bandwidth=1e-310 B/s'");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(first_line(run.err), "mofasim simulate: simulated time overflow: an activity would end at t = inf s, past "
                                 "the clock's range of 2^63 ns (292 years); a rate in the scenario (hardware peak FLOPS "
                                 "or a link bandwidth) is far too small");
}

TEST_F(RunTimeBadInput, AFailureUnitNear2To31GpusIsOneUnit) {
  // ceil(8 / (2^31 - 1)) = 1; the rounding used to add 2^31 - 2 to 8 in int first.
  const CliRun run = run_mofasim("ettr " + kSmall +
                                 " -q --step-time 1 --trials 10 --set fault_tolerance.gpus_per_failure_unit=2147483647");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("  failure units                   1\n"), std::string::npos) << run.out;
}

TEST_F(RunTimeBadInput, TuneRefusesASearchSpaceOverItsBound) {
  // 735134400 = 2^6 3^3 5^2 7 11 13 17 has 1344 divisors: 4.3 million (t, c, p, d) factorisations.
  const CliRun run = run_mofasim("tune " + kSmall +
                                 " -q --rerank 0 --set topology.gpus=735134400 --set parallelism.dp=183783600 --set "
                                 "parallelism.global_batch=367567200");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "--set:1:15: topology.gpus: tune: the search space has 550502400 layouts (4300800 (t, c, p, d) "
            "factorisations of 735134400 GPUs x 128 ep/micro-batch/schedule choices), over the limit of 100000000; "
            "use fewer GPUs or fix some axes of the search\n");
}

// --- One error path --------------------------------------------------------------------------

TEST_F(RunTimeBadInput, TuneWithEveryRuleOffNeverSimulatesInterleavedAtPp1) {
  // Interleaved 1F1B at p = 1 used to rank first and fail in the re-ranking simulation with
  // "communicator: GPU 0 is listed twice" (exit 1).
  const CliRun run = run_mofasim("tune " + kSmall + " --no-rule all -q --threads 2 --rerank 200");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find(" p1 v"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("re-ranked by the step simulation"), std::string::npos);
}

}  // namespace
}  // namespace mofasim::test
