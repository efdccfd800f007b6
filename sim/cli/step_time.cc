#include "sim/cli/step_time.h"

#include <stdexcept>

namespace mofasim::cli {

StepTimeChoice resolve_step_time(const scenario::LoadedScenario& loaded, std::optional<double> command_line) {
  if (command_line) return {.seconds = *command_line, .source = "--step-time"};
  if (loaded.proto.fault_tolerance().has_step_time()) {
    return {.seconds = loaded.proto.fault_tolerance().step_time(), .source = "fault_tolerance.step_time"};
  }
  throw std::invalid_argument("no step time: pass --step-time SECONDS or set fault_tolerance.step_time");
}

}  // namespace mofasim::cli
