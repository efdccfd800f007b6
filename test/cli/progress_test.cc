// The progress line: its exact text and throttling when forced on with a fake clock, silence when
// off, terminal detection on a pipe and a pseudo-terminal, and no stderr from long commands when
// stderr is not a terminal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <sstream>

#include "sim/progress/progress_reporter.h"
#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

using progress::ProgressReporter;

TEST(ProgressReporter, DrawsThrottledLinesWithRateAndEta) {
  std::ostringstream out;
  double now = 0;
  ProgressReporter r("monte carlo", "trials", 100,
                     {.enabled = true, .out = &out, .min_interval_s = 0.1, .clock = [&] { return now; }});
  now = 1.0;
  r.update(10);  // 10 trials in 1 s: 10/s, 90 left -> 9 s
  now = 1.05;
  r.update(20);  // 0.05 s after the last draw: throttled
  now = 1.2;
  r.update(30);  // 30 / 1.2 s = 25/s; 70 left -> 2.8 s -> "3 s"
  now = 4.0;
  r.update(100);  // 100 / 4 s = 25/s; done: no ETA; 8 blanks cover the longer last line; newline
  EXPECT_EQ(out.str(),
            "\rmonte carlo   10%  10/100 trials  10 trials/s  ETA 9 s"
            "\rmonte carlo   30%  30/100 trials  25 trials/s  ETA 3 s"
            "\rmonte carlo  100%  100/100 trials  25 trials/s        \n");
  r.update(100);  // after the end: nothing more
  r.finish();
  EXPECT_EQ(out.str().back(), '\n');
  EXPECT_EQ(out.str().find('\n'), out.str().size() - 1);
}

TEST(ProgressReporter, EtaInMinutesAndHoursAndLargeRates) {
  const ProgressReporter r("replay", "tasks", 10'000'000, {.enabled = false, .out = nullptr, .min_interval_s = 0.1,
                                                            .clock = [] { return 0.0; }});
  // 1,000 tasks in 1 s: 9,999,000 left -> 9999 s = 2 h 46 min 39 s.
  EXPECT_EQ(r.line(1000, 1.0), "replay    0%  1000/10000000 tasks  1000 tasks/s  ETA 2 h 46 min");
  // 2,500,000 in 10 s = 250 k/s; 7.5 M left -> 30 s.
  EXPECT_EQ(r.line(2'500'000, 10.0), "replay   25%  2500000/10000000 tasks  250.0 k tasks/s  ETA 30 s");
  // 5,000,000 in 25,000 s = 200/s; 5 M left -> 25,000 s = 6 h 56 min 40 s (minutes truncated).
  EXPECT_EQ(r.line(5'000'000, 25'000.0), "replay   50%  5000000/10000000 tasks  200 tasks/s  ETA 6 h 56 min");
  // 1 task/s with 95 left -> "1 min 35 s"; 99.99905% prints as 100%.
  EXPECT_EQ(r.line(9'999'905, 9'999'905.0), "replay  100%  9999905/10000000 tasks  1 tasks/s  ETA 1 min 35 s");
  // In the first 0.2 s a rate is mostly noise (1 chunk in 1 ms would claim millions per second).
  EXPECT_EQ(r.line(256, 0.001), "replay    0%  256/10000000 tasks");
}

TEST(ProgressReporter, TotalKnownOnlyOnceStarted) {
  std::ostringstream out;
  double now = 0;
  ProgressReporter r("monte carlo", "trials", 1,
                     {.enabled = true, .out = &out, .min_interval_s = 0.1, .clock = [&] { return now; }});
  now = 2.0;  // the clock started with the reporter, before the size was known
  r.set_total(400);
  r.update(100);  // 100 in 2 s = 50/s; 300 left -> 6 s
  EXPECT_EQ(out.str(), "\rmonte carlo   25%  100/400 trials  50 trials/s  ETA 6 s");
}

TEST(ProgressReporter, DisabledPrintsNothing) {
  std::ostringstream out;
  {
    ProgressReporter r("sweep", "points", 3, {.enabled = false, .out = &out, .min_interval_s = 0, .clock = {}});
    r.update(1);
    r.update(3);
  }
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressReporter, StoppedEarlyEndsTheLine) {
  std::ostringstream out;
  {
    ProgressReporter r("tune", "layouts", 10,
                       {.enabled = true, .out = &out, .min_interval_s = 0.1, .clock = [] { return 0.0; }});
    r.update(4);
  }  // destroyed before 10/10 (e.g. an exception): the line still ends
  EXPECT_EQ(out.str(), "\rtune   40%  4/10 layouts\n");
}

TEST(ProgressReporter, TerminalDetection) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_FALSE(progress::is_terminal(fds[1]));
  ::close(fds[0]);
  ::close(fds[1]);
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0) GTEST_SKIP() << "no pseudo-terminals here";
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  EXPECT_TRUE(progress::is_terminal(slave));
  ::close(slave);
  ::close(master);
}

// ctest runs the binary with stderr on a file: no progress line, although not quiet.
TEST(ProgressReporter, LongCommandsAreSilentWhenStderrIsNotATerminal) {
  for (const char* args : {"ettr scenarios/small.yaml --trials 3000", "simulate scenarios/small.yaml --fidelity full",
                           "sweep scenarios/small.yaml --trials 200 --param fault_tolerance.checkpoint.interval_steps=50:100:50 "
                           "--out /tmp/mofasim_progress_sweep",
                           "tune scenarios/small.yaml --rerank 2 --top 1",
                           "calibrate scenarios/mofa/measured-device-a.csv --evaluations 20",
                           "validate scenarios/small.yaml"}) {
    const CliRun run = run_mofasim(args);
    EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.err;
    EXPECT_EQ(run.err, "") << args;
  }
  std::remove("/tmp/mofasim_progress_sweep.csv");
  std::remove("/tmp/mofasim_progress_sweep.svg");
}

// What `mofasim ARGS` writes to stderr when stderr is a pseudo-terminal (stdout to /dev/null);
// nullopt where the machine has no pseudo-terminals. The pty turns "\n" into "\r\n".
std::optional<std::string> stderr_on_terminal(const std::string& args) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0) return std::nullopt;
  if (::grantpt(master) != 0 || ::unlockpt(master) != 0) return std::nullopt;
  const std::string slave_path = ::ptsname(master);
  const int slave = ::open(slave_path.c_str(), O_RDWR | O_NOCTTY);  // kept open: reads after exit see the data
  const std::string command = std::string("cd '") + MOFASIM_SOURCE_DIR + "' && '" + MOFASIM_BINARY_DIR +
                              "/mofasim' " + args + " >/dev/null 2>'" + slave_path + "'";
  const int status = std::system(command.c_str());
  std::string out;
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(master, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
  ::close(slave);
  ::close(master);
  if (status != 0) return "exit status " + std::to_string(status);
  return out;
}

// validate's simulated side (25 s for llama3-70b-h100-2048 at full fidelity) shows the replay line,
// one per scenario, ended by a newline; -q silences it. small.yaml's folded step has 806 tasks.
TEST(ProgressReporter, ValidateShowsTheReplayLineOnATerminal) {
  const auto two = stderr_on_terminal("validate scenarios/small.yaml scenarios/small.yaml");
  if (!two) GTEST_SKIP() << "no pseudo-terminals here";
  EXPECT_EQ(*two, "\rreplay  100%  806/806 tasks\r\n\rreplay  100%  806/806 tasks\r\n");
  EXPECT_EQ(stderr_on_terminal("validate -q scenarios/small.yaml"), "");
}

}  // namespace
}  // namespace mofasim::test
