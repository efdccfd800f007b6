// The Monte Carlo trial charges an asynchronous checkpoint's drain slowdown (the steps it runs
// beside take longer, model::CheckpointPolicy::drain_slowdown_s) like its snapshot stall, once per
// checkpoint, so the simulated and closed-form ETTR see the same cost.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "model/fault_analytic.h"
#include "model/fault_spec.h"
#include "sim/fault/failure_sampler.h"
#include "sim/fault/rng.h"
#include "sim/fault/trial.h"

namespace mofasim::fault {
namespace {

// No failures: 100 steps of 10 s in 10 segments. Each checkpoint stalls for the 0.5 s snapshot
// plus the 2 s its drain costs the following steps; the 30 s write overlaps the next 100 s of
// steps, and the last one is waited for: wall = 1000 + 10 * 2.5 + 30 = 1055 s.
TEST(CheckpointDrainTrial, AsyncChargesSnapshotPlusDrainSlowdownPerCheckpoint) {
  const model::FaultSpec spec{.node_failure_rate_per_day = 0, .failure_units = 1, .fixed_downtime_s = 0.0,
                              .checkpoint = {.interval_steps = 10, .save_time_s = 30,
                                             .mode = model::CheckpointMode::kAsync, .snapshot_time_s = 0.5,
                                             .drain_slowdown_s = 2}};
  const model::RunSpec run{.step_time_s = 10, .n_steps = 100};
  const FailureSampler sampler(spec);
  Rng rng(1, 0);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(sampler.num_classes()), 0);
  const TrialResult t = simulate_trial(spec, run, sampler, rng, counts);
  EXPECT_EQ(t.failures, 0);
  EXPECT_DOUBLE_EQ(t.checkpoint_s, 55.0);
  EXPECT_DOUBLE_EQ(t.wall_s, 1055.0);
  // The closed form charges the same 25 s of stalls (it does not wait for the last write).
  EXPECT_DOUBLE_EQ(model::analytic_e2e(spec, run).checkpoint_s, 25.0);
}

}  // namespace
}  // namespace mofasim::fault
