// Runs the built mofasim binary and captures its exit code, stdout and stderr (test helper).
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace mofasim::test {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `args` is appended to the binary path as shell words; run from the source root so scenario
// paths are the ones a user types.
inline CliRun run_mofasim(const std::string& args) {
  const std::filesystem::path err_file =
      std::filesystem::temp_directory_path() / ("mofasim_cli_err_" + std::to_string(::getpid()) + ".txt");
  const std::string command = std::string("cd '") + MOFASIM_SOURCE_DIR + "' && '" + MOFASIM_BINARY_DIR +
                              "/mofasim' " + args + " 2>'" + err_file.string() + "'";
  CliRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) run.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.err = read_file(err_file);
  std::filesystem::remove(err_file);
  return run;
}

// `mofasim validate --measured` on two small runs written in a user's own column names and mapped
// onto the default fields with --mapping; `extra` adds options (e.g. " --json").
inline CliRun run_measured_two_rows(const std::string& extra) {
  const std::filesystem::path csv =
      std::filesystem::temp_directory_path() / ("mofasim_measured_" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream out(csv);
    out << "gpus,gbs,mbs,h,heads,layers,seq,tp,dp,pp,ms\n"
           "2,16,8,1024,16,24,1024,1,1,2,372.16\n"
           "8,32,4,1024,16,24,1024,2,2,2,219.73\n";
  }
  std::string mapping;
  for (const char* m : {"gpus=gpus", "gbs=global_batch", "mbs=micro_batch", "h=hidden_size", "heads=attention_heads",
                        "layers=layers", "seq=seq_length", "tp=tp", "dp=dp", "pp=pp", "ms=iteration_time_ms"}) {
    mapping += std::string(" --mapping '") + m + "'";
  }
  CliRun run = run_mofasim("validate --measured '" + csv.string() + "'" + mapping + " --predictor analytic" + extra);
  std::filesystem::remove(csv);
  return run;
}

}  // namespace mofasim::test
