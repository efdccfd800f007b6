// Fuzz target for the open-set CSV reader and its row -> scenario mapping (validate --measured).
// The reader must either return rows (a bad row carrying its file:line reason) or throw
// std::invalid_argument for the file as a whole; every row it returns must map to a scenario or to
// its reasons without throwing (measured_open_mapping.h), and every scenario it maps to must be
// priced by the analytic model or refused with std::invalid_argument (which validate --measured
// lists as the row's reason). Any other exception, crash, hang or sanitizer report is a bug. Built
// as a libFuzzer target under clang, or linked with fuzz_replay_main.cc (seed corpus +
// deterministic mutations) under other compilers.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/analysis/measured_compare.h"
#include "sim/analysis/measured_open_mapping.h"
#include "sim/analysis/measured_open_reader.h"
#include "sim/analysis/measured_open_stack.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<mofasim::analysis::OpenRun> rows;
  try {
    rows = mofasim::analysis::parse_open_runs_csv(text, "fuzz.csv");
  } catch (const std::invalid_argument&) {
    return 0;  // the expected outcome for a bad file
  }
  static const mofasim::analysis::StepPredictor predict = mofasim::analysis::analytic_step_predictor();
  for (const auto& row : rows) {
    (void)mofasim::analysis::open_stack(row);
    const mofasim::analysis::OpenCase mapped = mofasim::analysis::map_open_run(row);
    if (!mapped.spec) continue;
    try {
      (void)predict(*mapped.spec);
    } catch (const std::invalid_argument&) {
      // a row the model refuses: listed with the reason by run_open_validation
    }
  }
  return 0;
}
