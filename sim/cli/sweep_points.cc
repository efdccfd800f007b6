// Loading, budget-checking and pricing the points of `mofasim sweep` (see sweep_points.h).
#include "sim/cli/sweep_points.h"

#include <utility>

#include "sim/cli/step_time.h"
#include "sim/fault/event_budget.h"
#include "sim/scenario/scenario_specs.h"
#include "sim/scenario/scenario_specs_fail_slow.h"

namespace mofasim::cli {

SweepPoints load_sweep_points(const std::string& path, const std::vector<std::string>& sets, const SweepRange& range,
                              const EttrOptions& ettr, const FailSlowPricer& price) {
  SweepPoints points;
  std::vector<scenario::LoadedScenario> loaded_points;
  for (double v : range.values) {
    std::vector<std::string> point_sets = sets;
    point_sets.push_back(range.override_for(v));
    scenario::LoadedScenario loaded = load_checked(path, point_sets, true);
    const StepTimeChoice step = resolve_step_time(loaded, ettr.step_time);
    fault::EttrStudyInputs in{.spec = to_fault_spec(loaded),
                              .run = {.step_time_s = step.seconds, .n_steps = scenario::training_steps(loaded.proto)}};
    try {
      fault::check_event_budget(in.spec, in.run, ettr.trials, ettr.max_events);
    } catch (const fault::EventBudgetExceeded& e) {
      throw located_budget_error(loaded, e);
    }
    if (!points.first) points.first = loaded;
    points.inputs.push_back(std::move(in));
    loaded_points.push_back(std::move(loaded));
  }
  // Every point is within its budget: now the slow steps, one simulation per stage and point.
  for (std::size_t i = 0; i < loaded_points.size(); ++i) price(loaded_points[i], points.inputs[i].spec.fail_slow);
  return points;
}

FailSlowPricer simulated_fail_slow_pricer() {
  return [](const scenario::LoadedScenario& loaded, model::FailSlowSpec& spec) {
    static_cast<void>(price_fail_slow(loaded, spec));
  };
}

}  // namespace mofasim::cli
