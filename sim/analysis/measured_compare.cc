// Row-by-row prediction against measurement, with the analytic and simulated step predictors.
#include "sim/analysis/measured_compare.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "model/analytic_model.h"
#include "sim/executor/simulate_step.h"

namespace mofasim::analysis {
namespace {

// A part within 1e-12 of the step from zero is the rounding residue of a difference (the closed
// form's bubble is the pipeline's length minus the busy time, equal without a pipeline, which
// leaves -4e-16 s): 0, so that no report shows a negative time. The sum moves by less than 1e-11
// of the step.
StepPrediction without_residue(StepPrediction p) {
  for (const BreakdownField& f : kBreakdownFields) {
    double& part = (*p.breakdown).*f.seconds;
    if (std::abs(part) < 1e-12 * p.step_s) part = 0;
  }
  return p;
}

}  // namespace

StepPredictor analytic_step_predictor() {
  return [](const MeasuredCase& c) {
    const model::StepTiming t = model::evaluate_mofa(model::AnalyticInput{.model = c.model,
                                                                          .hardware = c.hardware,
                                                                          .parallel = c.parallel,
                                                                          .features = c.features,
                                                                          .topology = c.topology})
                                    .timing;
    const model::StepBreakdown& b = t.breakdown;
    // The closed form has no recompute or offload category (step_prediction.h): both stay 0.
    return without_residue(StepPrediction{.step_s = t.step_time_s,
                                          .breakdown = PredictedBreakdown{.compute = b.compute,
                                                                          .optimizer = b.optimizer,
                                                                          .tp = b.tp_exposed,
                                                                          .cp = b.cp_exposed,
                                                                          .ep = b.ep_exposed,
                                                                          .pp_comm = b.pp_exposed,
                                                                          .dp = b.dp_exposed,
                                                                          .pp_bubble = b.pp_bubble}});
  };
}

StepPredictor simulated_step_predictor() {
  return [](const MeasuredCase& c) {
    const executor::StepResult r =
        executor::simulate_step(executor::SimulationInput{.model = c.model,
                                                          .hardware = c.hardware,
                                                          .parallel = c.parallel,
                                                          .features = c.features,
                                                          .topology = c.topology},
                                executor::SimulateOptions{.fidelity = executor::Fidelity::kFolded});
    return without_residue(StepPrediction{.step_s = r.step_time_s, .breakdown = r.breakdown});
  };
}

std::vector<MeasuredComparison> compare_measured(std::span<const MeasuredRow> rows, std::span<const MeasuredCase> cases,
                                                 int gpus_per_node, const StepPredictor& predict) {
  if (rows.size() != cases.size()) {
    throw std::invalid_argument("compare_measured: rows and cases must have the same length");
  }
  std::vector<MeasuredComparison> out;
  out.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const MeasuredRow& r = rows[i];
    StepPrediction t;
    try {
      t = predict(cases[i]);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(r.source + ":" + std::to_string(r.line) + ": " + e.what());
    }
    out.push_back(
        {.row = r, .subset = measured_subset(r, gpus_per_node), .predicted_s = t.step_s, .breakdown = t.breakdown});
  }
  return out;
}

std::vector<MeasuredComparison> compare_measured(std::span<const MeasuredRow> rows,
                                                 const MeasuredConditions& conditions, const StepPredictor& predict) {
  std::vector<MeasuredCase> cases;
  cases.reserve(rows.size());
  for (const auto& r : rows) cases.push_back(to_measured_case(r, conditions));
  return compare_measured(rows, cases, conditions.gpus_per_node, predict);
}

}  // namespace mofasim::analysis
