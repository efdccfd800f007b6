// Runs the built mofasim binary as a child process under a 10 s alarm and a 4 GiB address-space
// limit (RLIMIT_AS), so a hang or a runaway allocation fails a test case instead of the machine
// (test helper shared by the bad-input and mutation-soak tests).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace mofasim::scenario::testing {

constexpr unsigned kTimeLimitSeconds = 10;
constexpr rlim_t kAddressSpaceBytes = rlim_t{4} << 30;

struct Outcome {
  bool exited = false;
  int status = -1;  // exit status, or the signal that ended the run
  std::string first_line;
  std::string last_line;
  std::string out;  // stdout, kept only when run_limited is asked for it
  std::string err;  // all of stderr
  double seconds = 0;
};

// A scratch directory per test process; runs refer to their files by relative name.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d =
        std::filesystem::temp_directory_path() / ("mofasim_bad_input_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline Outcome run_limited(const std::vector<std::string>& args, bool keep_stdout = false) {
  const std::filesystem::path err = scratch() / "stderr.txt";
  const std::filesystem::path out_path = scratch() / "stdout.txt";
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(scratch().c_str()) != 0) ::_exit(120);
#if !defined(__SANITIZE_ADDRESS__)  // ASan reserves terabytes of address space up front
    const rlimit as{kAddressSpaceBytes, kAddressSpaceBytes};
    ::setrlimit(RLIMIT_AS, &as);
#endif
    ::alarm(kTimeLimitSeconds);  // survives exec: SIGALRM ends a hung run
    const int out_fd = keep_stdout ? ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644)
                                   : ::open("/dev/null", O_WRONLY);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    std::vector<char*> argv;
    std::string binary = std::string(MOFASIM_BINARY_DIR) + "/mofasim";
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  Outcome out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.exited = WIFEXITED(status);
  out.status = out.exited ? WEXITSTATUS(status) : WTERMSIG(status);
  {
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    out.err = ss.str();
  }
  std::istringstream lines(out.err);
  std::string line;
  while (std::getline(lines, line)) {
    if (out.first_line.empty()) out.first_line = line;
    out.last_line = line;
  }
  if (keep_stdout) {
    std::ifstream in(out_path);
    std::stringstream ss;
    ss << in.rdbuf();
    out.out = ss.str();
  }
  return out;
}

}  // namespace mofasim::scenario::testing
