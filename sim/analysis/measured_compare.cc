// Row-by-row prediction against measurement, with the analytic and simulated step predictors.
#include "sim/analysis/measured_compare.h"

#include <stdexcept>
#include <string>

#include "model/analytic_model.h"
#include "sim/executor/simulate_step.h"

namespace mofasim::analysis {

StepPredictor analytic_step_predictor() {
  return [](const MeasuredCase& c) {
    return model::evaluate_mofa(model::AnalyticInput{.model = c.model,
                                                     .hardware = c.hardware,
                                                     .parallel = c.parallel,
                                                     .features = c.features,
                                                     .topology = c.topology})
        .timing.step_time_s;
  };
}

StepPredictor simulated_step_predictor() {
  return [](const MeasuredCase& c) {
    return executor::simulate_step(executor::SimulationInput{.model = c.model,
                                                             .hardware = c.hardware,
                                                             .parallel = c.parallel,
                                                             .features = c.features,
                                                             .topology = c.topology},
                                   executor::SimulateOptions{.fidelity = executor::Fidelity::kFolded})
        .step_time_s;
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
    double t = 0;
    try {
      t = predict(cases[i]);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(r.source + ":" + std::to_string(r.line) + ": " + e.what());
    }
    out.push_back({.row = r, .subset = measured_subset(r, gpus_per_node), .predicted_s = t});
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
