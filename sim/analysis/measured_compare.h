// Predicting every measured row with a step model and pairing the prediction with the measurement.
// The step model is a callback (MeasuredCase -> step time and its breakdown), so the closed-form
// MoFa model and the step simulation are compared against the same rows by the same code.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "sim/analysis/measured_specs.h"
#include "sim/analysis/measured_stats.h"
#include "sim/analysis/step_prediction.h"

namespace mofasim::analysis {

// Predicted iteration time in seconds for one row's specs, with where it goes.
using StepPredictor = std::function<StepPrediction(const MeasuredCase&)>;

// The closed-form MoFa step model (model::evaluate_mofa), MoFa(14).
StepPredictor analytic_step_predictor();
// The step simulation (executor::simulate_step) at folded fidelity.
StepPredictor simulated_step_predictor();

// Each row mapped to specs under `conditions` and predicted by `predict`, in input order, with its
// subset (measured_subset with conditions.gpus_per_node). Throws std::invalid_argument naming the
// row (file:line) when the row cannot be mapped or the predictor rejects it.
std::vector<MeasuredComparison> compare_measured(std::span<const MeasuredRow> rows,
                                                 const MeasuredConditions& conditions, const StepPredictor& predict);

// The same with the specs mapped already (cases[i] belongs to rows[i]); what calibration loops use.
std::vector<MeasuredComparison> compare_measured(std::span<const MeasuredRow> rows,
                                                 std::span<const MeasuredCase> cases, int gpus_per_node,
                                                 const StepPredictor& predict);

}  // namespace mofasim::analysis
