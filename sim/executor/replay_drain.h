// The asynchronous checkpoint drain under training: the drain (BackgroundEgress,
// replay_background.h) replayed step after step in the same fluid replay as each step's own
// traffic, until the last byte is in storage. Reports the step time while draining, how long the
// drain takes, and the training time it costs: the effective cost of an asynchronous checkpoint
// is its snapshot stall plus that slowdown (model::CheckpointPolicy::drain_slowdown_s).
//
// Step k (k = 1, 2, ...) is replayed with the bytes step k-1 left, its flows starting at
// max(0, start_s - (the steps before)). While every flow runs through a whole step, the next steps
// replay identically (rates depend only on which activities run), so such steps are counted
// arithmetically, not replayed: a drain that spans 50 steps costs about three replays.
// After `max_steps` steps (the checkpoint interval: the next snapshot waits for the write), the
// rest drains on an idle network, as the fault model's wait for the write assumes.
#pragma once

#include <cstdint>
#include <functional>

#include "sim/executor/replay_background.h"
#include "sim/executor/simulate_step.h"
#include "sim/executor/step_result.h"

namespace mofasim::executor {

struct DrainUnderTraining {
  double healthy_step_s = 0;       // the step with no drain
  double first_step_s = 0;         // the step the drain starts in
  std::int64_t draining_steps = 0; // steps that start with bytes still to drain (>= 1)
  double drain_s = 0;              // from the snapshot's end (the first step's start) to the last byte
  double slowdown_s = 0;           // sum over the draining steps of (step - healthy step)
  bool outlived_interval = false;  // still draining after max_steps steps
};

// Runs one step with the options given (simulate_step or simulate_plan with their input bound).
using StepRunner = std::function<StepResult(const SimulateOptions&)>;

// `options` gives the fidelity (and tie shuffling); its trace, timeline and background are not
// used. Throws std::invalid_argument on max_steps < 1 or a malformed egress.
DrainUnderTraining simulate_drain(const StepRunner& run_step, const SimulateOptions& options,
                                  const BackgroundEgress& egress, std::int64_t max_steps);

}  // namespace mofasim::executor
