// The tuner's default cost model: the closed-form MoFa step model (model/analytic_model.h) for the
// step, and the same memory model it reports (model/memory.h with the schedule's in-flight
// activations and DualPipe's second weight copy) for the cheap pre-check.
#pragma once

#include "model/analytic_model.h"
#include "sim/tuner/evaluator.h"

namespace mofasim::tuner {

// Evaluator over evaluate_mofa(). The problem is copied into the callbacks.
Evaluator analytic_evaluator(const TuneProblem& problem);

// The memory verdict evaluate_mofa() would give, without timing the step.
MemoryVerdict analytic_memory(const TuneProblem& problem, const ConfigView& config);

// Field-by-field copy of an analytic result into the tuner's view.
StepEvaluation to_step_evaluation(const model::AnalyticResult& result);

}  // namespace mofasim::tuner
