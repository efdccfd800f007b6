// The step simulation (sim/executor, folded fidelity by default) as a StepFn for re-ranking the
// analytic model's best configurations (rerank.h).
#pragma once

#include "sim/executor/simulate_step.h"
#include "sim/tuner/evaluator.h"

namespace mofasim::tuner {

// Simulates one configuration of `problem` per call (the problem is copied into the function).
StepFn simulated_step(const TuneProblem& problem, executor::Fidelity fidelity = executor::Fidelity::kFolded);

// The replay's breakdown in the tuner's (MoFa Table 6) categories: recompute and offload stalls
// count as compute, as in the analytic model; PP communication as pp_exposed.
StepEvaluation to_step_evaluation(const executor::StepResult& result);

}  // namespace mofasim::tuner
