#include "sim/executor/perturbation_costs.h"

namespace mofasim::executor {

void add_perturbation_costs(const SimulationInput& input, const SimulateOptions& options, StepResult& result) {
  if (input.perturbations.empty()) return;
  SimulateOptions quiet{.fidelity = options.fidelity, .shuffle_ties_seed = options.shuffle_ties_seed};
  SimulationInput healthy = input;
  healthy.perturbations = {};
  const double base = simulate_step(healthy, quiet).step_time_s;
  result.healthy_step_time_s = base;
  result.perturbation_costs.clear();
  for (std::size_t i = 0; i < input.perturbations.size(); ++i) {
    PerturbationCost c{.name = input.perturbations.name(i)};
    if (input.perturbations.size() == 1) {
      c.step_time_s = result.step_time_s;
      c.critical_path_s = result.critical_path_perturbed_s;
    } else {
      SimulationInput one = input;
      one.perturbations = input.perturbations.only(i);
      const StepResult r = simulate_step(one, quiet);
      c.step_time_s = r.step_time_s;
      c.critical_path_s = r.critical_path_perturbed_s;
    }
    c.cost_s = c.step_time_s - base;
    result.perturbation_costs.push_back(c);
  }
}

}  // namespace mofasim::executor
