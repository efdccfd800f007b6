// mofasim._core: runs one mofasim sub-command in-process, exactly as the command line would, and
// returns (exit status, stdout, error lines). The Python layer (mofasim/__init__.py) passes --json
// and parses stdout, so every field the module returns is built by the same C++ code as the CLI's
// --json output. Errors are mapped as main.cc maps them: bad input (ScenarioError, UsageError) ->
// status 2 with one line per problem; anything else -> status 1 with the message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/scenario/diagnostics.h"
#include "sim/units/check.h"

namespace {

using Outcome = std::tuple<int, std::string, std::vector<std::string>>;

// Swaps std::cout's buffer for a string buffer for as long as it lives.
class CaptureStdout {
 public:
  CaptureStdout() : saved_(std::cout.rdbuf(buffer_.rdbuf())) {}
  ~CaptureStdout() { std::cout.rdbuf(saved_); }
  CaptureStdout(const CaptureStdout&) = delete;
  CaptureStdout& operator=(const CaptureStdout&) = delete;
  [[nodiscard]] std::string text() const { return buffer_.str(); }

 private:
  std::ostringstream buffer_;
  std::streambuf* saved_;
};

int (*find_command(const std::string& name))(const mofasim::cli::Args&) {
  using namespace mofasim::cli;
  if (name == "simulate") return run_simulate;
  if (name == "memory") return run_memory;
  if (name == "ettr") return run_ettr;
  if (name == "sweep") return run_sweep;
  if (name == "tune") return run_tune;
  if (name == "validate") return run_validate;
  if (name == "calibrate") return run_calibrate;
  return nullptr;
}

Outcome run(const std::string& command, const std::vector<std::string>& args) {
  auto* fn = find_command(command);
  if (fn == nullptr) return {2, "", {"mofasim: unknown command '" + command + "'"}};
  // The GIL stays held: std::cout is process-wide, so two commands must not run at once.
  CaptureStdout capture;
  try {
    const int status = fn(args);
    return {status, capture.text(), {}};
  } catch (const mofasim::scenario::ScenarioError& e) {
    return {2, capture.text(), e.errors()};
  } catch (const mofasim::cli::UsageError& e) {
    return {2, capture.text(), {e.what()}};
  } catch (const mofasim::InternalError& e) {
    return {1, capture.text(), {"mofasim " + command + ": " + e.what()}};
  } catch (const std::exception& e) {
    return {1, capture.text(), {"mofasim " + command + ": error: " + e.what()}};
  }
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "mofasim sub-commands run in-process (see mofasim/__init__.py for the API)";
  m.def("run", &run, pybind11::arg("command"), pybind11::arg("args"),
        "Runs `mofasim COMMAND ARGS...`; returns (exit status, stdout, error lines).");
}
