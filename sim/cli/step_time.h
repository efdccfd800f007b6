// Which step time a fault-tolerance study uses, in order: --step-time on the command line (a time
// measured on real hardware), fault_tolerance.step_time in the scenario, then the step time the
// simulator computes for the scenario.
#pragma once

#include <optional>
#include <string>

#include "sim/scenario/loader.h"

namespace mofasim::cli {

struct StepTimeChoice {
  double seconds = 0;
  std::string source;  // "--step-time", "fault_tolerance.step_time", "simulated"
};

StepTimeChoice resolve_step_time(const scenario::LoadedScenario& loaded, std::optional<double> command_line);

}  // namespace mofasim::cli
