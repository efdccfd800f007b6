// What each perturbation costs: the step is simulated healthy and with each perturbation alone
// (1 + n extra replays, no trace), and the differences go into the perturbed StepResult.
#pragma once

#include "sim/executor/simulate_step.h"
#include "sim/executor/step_result.h"

namespace mofasim::executor {

// Fills result.healthy_step_time_s and result.perturbation_costs for input.perturbations (nothing
// when there are none). `result` is the step simulated with all of them. Costs are taken alone,
// not as marginal shares: two stragglers in one DP group cost about what one does, and each
// reports that cost.
void add_perturbation_costs(const SimulationInput& input, const SimulateOptions& options, StepResult& result);

}  // namespace mofasim::executor
