// Derived load-time bounds: sizes that no single field limit catches because they are products
// of several fields (tasks the simulator builds per step, the bytes of the replay's tables, the
// events of one Monte Carlo fault trial). Each is estimated from the scenario's counts and
// refused up front, with the estimate, when it exceeds its budget.
#pragma once

#include <cstdint>

#include "proto/scenario.pb.h"
#include "sim/scenario/diagnostics.h"

namespace mofasim::scenario {

// Budgets, documented in the scenario reference.
inline constexpr double kMaxTasksPerStep = 2e7;   // simulator tasks (ops and transfers) per step
inline constexpr double kBytesPerTask = 128;      // replay-table bytes per task (for the message)
inline constexpr double kMaxTrialEvents = 1e8;    // checkpoints + expected failures in one trial
inline constexpr double kMaxTrainingSteps = 1e9;  // as training.steps (max)

// Estimated simulator tasks of one step: micro-batches x (layers + MTP modules) x 2 passes
// x ops per layer (a fixed 32, plus 8 per TP-overlap chunk and 4 per MemFine chunk).
double estimated_tasks_per_step(const proto::Scenario& scenario);

// Checks the derived budgets of a scenario that passed validation; one located line each.
void check_budgets(const proto::Scenario& scenario, const SourceMap& sources, Diagnostics& diagnostics);

}  // namespace mofasim::scenario
