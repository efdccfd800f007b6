// What a step model predicts for one measured row: the step time and where it goes. One struct for
// the step simulation and the closed form, so the per-row reports of `validate --measured` (CSV,
// JSON) show both alike.
#pragma once

#include <array>
#include <optional>

#include "sim/executor/step_result.h"

namespace mofasim::analysis {

// The predicted step by category, in seconds; the categories sum to the step time: the step
// simulation's own breakdown type (executor::StepResult::breakdown, the critical stage's timeline
// with every instant under one category; communication hidden under compute counts as compute).
// The closed form's model::StepBreakdown fills the same fields but does not split out recompute or
// offload: recompute is inside compute, the offload stalls inside compute and the CPU optimizer's
// copies inside optimizer, so recompute and offload are 0 there. tp / cp / ep / pp_comm / dp are
// the exposed parts.
using PredictedBreakdown = executor::Breakdown;

// The fields in report order with their column / key names (those of `simulate --json`'s breakdown).
struct BreakdownField {
  const char* name;
  double PredictedBreakdown::*seconds;
};
inline constexpr std::array<BreakdownField, 10> kBreakdownFields{{
    {"compute_s", &PredictedBreakdown::compute},
    {"recompute_s", &PredictedBreakdown::recompute},
    {"tp_s", &PredictedBreakdown::tp},
    {"cp_s", &PredictedBreakdown::cp},
    {"ep_s", &PredictedBreakdown::ep},
    {"pp_comm_s", &PredictedBreakdown::pp_comm},
    {"dp_s", &PredictedBreakdown::dp},
    {"offload_s", &PredictedBreakdown::offload},
    {"pp_bubble_s", &PredictedBreakdown::pp_bubble},
    {"optimizer_s", &PredictedBreakdown::optimizer},
}};

struct StepPrediction {
  double step_s = 0;
  // Set by both step models; absent where a predictor gives a step time alone.
  std::optional<PredictedBreakdown> breakdown{};
};

}  // namespace mofasim::analysis
