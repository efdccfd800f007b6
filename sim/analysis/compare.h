// Validation of the closed-form MoFa model against the step simulation: both results are mapped
// onto one set of common fields, compared field by field (relative difference, flag beyond a
// tolerance), and rendered as a side-by-side table or JSON. `mofasim validate` is a thin wrapper
// over validate_scenario() and the renderers.
//
// Common fields and how each side maps onto them:
//   step_time_s                 AnalyticResult.timing.step_time_s | StepResult.step_time_s
//   compute_s                   breakdown.compute                 | compute + recompute + offload
//   tp_exposed_s, cp_exposed_s, ep_exposed_s                      | tp, cp, ep
//   pp_bubble_s                 breakdown.pp_bubble               | pp_bubble
//   pp_exposed_s                breakdown.pp_exposed              | pp_comm
//   dp_exposed_s                breakdown.dp_exposed              | dp
//   optimizer_s                 breakdown.optimizer               | optimizer
//   tflops_per_gpu, mfu, hfu, tokens_per_s
//   peak_memory_gib[k]          memory.stages[k].peak_bytes       | memory[k].peak_bytes (2^30 B)
// The simulator's recompute category (the re-run forward before a backward, MoFa(29) MoFa(30) MoFa(31)
// MoFa(32)) and its
// offload category (D2H/H2D copies that run while no compute does, MoFa(33) MoFa(34) MoFa(35)) fold into compute,
// because the analytic model reports both inside T_B / T_F of a layer ("recompute and offload
// stalls included" in StepBreakdown::compute).
//
// NOTE: the two breakdowns are taken on different ranks when stages are uneven: the analytic
// model's is the busiest pipeline rank's, the simulator's the stage with the least idle time.
// They are the same rank on uniform pipelines.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/analytic_model.h"
#include "sim/executor/simulate_step.h"
#include "sim/scenario/loader.h"

namespace mofasim::analysis {

struct CompareOptions {
  // A field is flagged when |simulated − analytic| > tolerance · max(|analytic|, |simulated|).
  double tolerance = 0.01;
  // Breakdown fields whose difference is below this share of the analytic step time are never
  // flagged (a 0 s vs 3 ns exposed-TP entry is not a disagreement worth a flag).
  double breakdown_floor_share = 1e-4;
};

struct ValidateOptions {
  CompareOptions compare{};
  executor::Fidelity fidelity = executor::Fidelity::kFolded;
  // The simulated side's replay progress (done, total tasks): seconds at thousands of GPUs with
  // full fidelity. Empty: none.
  std::function<void(std::int64_t, std::int64_t)> progress{};
};

enum class FieldGroup { kHeadline, kBreakdown, kThroughput, kMemory };

struct FieldComparison {
  std::string name;   // "step_time_s", "compute_s", ..., "peak_memory_gib[3]"
  FieldGroup group = FieldGroup::kHeadline;
  double analytic = 0;
  double simulated = 0;
  // (simulated − analytic) / |analytic|; 0 when both are 0; ±inf when only the analytic side is 0.
  double relative_difference = 0;
  bool flagged = false;
};

struct ValidationReport {
  std::string scenario;  // LoadedScenario::path, or the label given to compare_results
  CompareOptions options{};
  std::vector<FieldComparison> fields;
  model::AnalyticResult analytic;
  executor::StepResult simulated;

  [[nodiscard]] int flagged_count() const;
  [[nodiscard]] bool ok() const { return flagged_count() == 0; }
  // The field called `name`; throws std::invalid_argument when there is none.
  [[nodiscard]] const FieldComparison& field(const std::string& name) const;
};

// Maps both results onto the common fields and compares them. Throws std::invalid_argument when
// options.tolerance or options.breakdown_floor_share is negative or not finite.
ValidationReport compare_results(const model::AnalyticResult& analytic, const executor::StepResult& simulated,
                                 const CompareOptions& options, std::string label = {});

// Builds both inputs from one loaded scenario (cli::analytic_input, cli::simulation_input), runs
// the analytic model and the step simulation, and compares them.
ValidationReport validate_scenario(const scenario::LoadedScenario& loaded, const ValidateOptions& options);

// The step simulation's input for the same run as an analytic input (the two carry the same specs).
executor::SimulationInput to_simulation_input(const model::AnalyticInput& input);

// The step simulation (folded) as a calibration evaluator (sim/analysis/calibrate.h): the step
// time of simulate_step for the given input.
std::function<double(const model::AnalyticInput&)> simulated_step_evaluator();

// Human side-by-side table: one row per field (analytic, simulated, relative difference, a "!"
// where flagged), then a one-line verdict.
std::string to_table(const ValidationReport& report);
// One line per scenario: step time both ways, difference and flagged-field count.
std::string summary_table(std::span<const ValidationReport> reports);
// {"scenario", "tolerance", "ok", "flagged", "fields": [{"name", "group", "analytic", "simulated",
//  "relative_difference" (null when infinite), "flagged"}]}
nlohmann::json to_json(const ValidationReport& report);

const char* field_group_name(FieldGroup group);

}  // namespace mofasim::analysis
