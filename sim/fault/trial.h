// One Monte Carlo trial: a whole training run under drawn failures, simulated event to event
// (from failure to failure, counting completed steps and checkpoints arithmetically in between),
// so its cost grows with the number of failures, not with the number of steps.
//
// Semantics (docs/ettr.md explains them with pictures):
//  - The run starts with the one-time init (init_time_s), then runs checkpoint segments: N steps
//    of step_time_s each, then a checkpoint; the last segment may be shorter, and the run ends
//    when the checkpoint of its final step is complete (the final weights are on disk).
//  - Blocking: the checkpoint stalls training for save_time_s and is complete at its end.
//  - Async: training stalls for snapshot_time_s plus drain_slowdown_s (what the write costs the
//    steps it runs beside, charged here: model::checkpoint_stall_s), then the write of save_time_s runs in the
//    background while the next segment trains; it completes save_time_s after the snapshot. A
//    snapshot that comes due while the previous write is still running waits for it (the wait is
//    checkpoint overhead). A failure before a write completes loses that checkpoint.
//  - A failure rolls training back to the last completed checkpoint: the partial step, the steps
//    since that checkpoint and any save in progress are lost. Then a class is drawn by weight and
//    a recovery time for it (or the fixed downtime); after the recovery, training resumes from the
//    checkpoint (the recovery includes re-initialisation; init_time_s is paid once).
//  - Failures strike only during failure-exposed time: step computation always; save, snapshot
//    and wait stalls only if failures_during_save; recoveries and the init only if
//    failures_during_recovery. A failure during a recovery restarts it with a new class and time;
//    one during the init restarts the init after the recovery. The failure process runs on the
//    exposed clock (non-exposed periods are simply skipped by it).
//  - Fail-slow (spec.fail_slow, fail_slow_timeline.h): episodes run on the wall clock, also during
//    stalls and recoveries. Work advances at the timeline's pace, so a step in an episode takes
//    longer and is exposed to failures for longer. A policy rollback (restart, hot spare) is due at
//    detection; it interrupts work like a failure (rolling back to the last checkpoint) and waits
//    for the end of a stall that is under way. One due when a fail-stop recovery completes is that
//    recovery: the job restarted anyway, without the slow part, and is charged once. Cordon stalls are paid when the next work period
//    starts (or at once inside one) and are failure-free.
#pragma once

#include <cstdint>
#include <limits>
#include <span>

#include "model/fault_spec.h"
#include "sim/fault/fail_slow_timeline.h"
#include "sim/fault/failure_sampler.h"
#include "sim/fault/rng.h"

namespace mofasim::fault {

struct TrialResult {
  double wall_s = 0;          // E2E wall time of the run
  double ettr = 0;            // useful step time / wall_s
  double lost_work_s = 0;     // step time computed and then rolled back (incl. partial steps)
  double checkpoint_s = 0;    // save, snapshot and wait stalls (incl. those cut short by failures)
  double downtime_s = 0;      // recovery time after failures (incl. interrupted recoveries)
  double init_s = 0;          // init time (incl. inits cut short by failures)
  std::int64_t failures = 0;  // all failures, = sum of failures_by_class
  // Fail-slow (0 when spec.fail_slow is off):
  double slow_s = 0;              // extra wall time of finished work periods run slow, and cordon stalls
  double mitigation_s = 0;        // restarts and spare swaps the policy ordered: their recovery and the work they rolled back
  std::int64_t episodes = 0;      // fail-slow onsets
  std::int64_t mitigations = 0;   // detections the policy acted on
};
// Invariant: wall_s = n_steps * step_time_s + lost_work_s + checkpoint_s + downtime_s + init_s
//                     + slow_s + mitigation_s.
// With fail-slow on, a finished work period's healthy part counts as committed (or as lost work when
// a later failure rolls it back) and its slow extra as slow_s; an interrupted one is lost work
// (mitigation_s when the policy interrupted it) at its wall time.

// Simulates one run. `failures_by_class` (size sampler.num_classes(), zeroed by the caller) gets
// the failure counts. Preconditions: spec and run validated, sampler built from spec.
// A trial that would meet more than `max_events` failures and fail-slow episodes together stops
// with EventBudgetExceeded (sim/fault/event_budget.h), so a trial always ends. `fail_slow_rng` is the
// trial's fail-slow episode stream (onsets, durations, position classes), required when
// spec.fail_slow.on() and unused otherwise; `restart_rng` the stream of the restart policy's own
// draws (the class and recovery time of each restart), required when that policy is on. Apart, a
// restart's draws never move the episodes: every policy meets the same episodes (common random
// numbers), and no episode length is a recovery time's sample.
TrialResult simulate_trial(const model::FaultSpec& spec, const model::RunSpec& run, const FailureSampler& sampler,
                           Rng& rng, std::span<std::int64_t> failures_by_class,
                           std::int64_t max_events = std::numeric_limits<std::int64_t>::max(),
                           Rng* fail_slow_rng = nullptr, Rng* restart_rng = nullptr);

}  // namespace mofasim::fault
