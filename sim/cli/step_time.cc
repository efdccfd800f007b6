#include "sim/cli/step_time.h"

#include "sim/scenario/scenario_specs.h"
#include "sim/executor/simulate_step.h"

namespace mofasim::cli {

StepTimeChoice resolve_step_time(const scenario::LoadedScenario& loaded, std::optional<double> command_line) {
  if (command_line) return {.seconds = *command_line, .source = "--step-time"};
  if (loaded.proto.fault_tolerance().has_step_time()) {
    return {.seconds = loaded.proto.fault_tolerance().step_time(), .source = "fault_tolerance.step_time"};
  }
  const executor::StepResult simulated = executor::simulate_step(simulation_input(loaded), executor::SimulateOptions{});
  return {.seconds = simulated.step_time_s, .source = "simulated"};
}

}  // namespace mofasim::cli
