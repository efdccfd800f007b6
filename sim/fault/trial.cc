// Event-to-event simulation of one training run under failures; the semantics are in trial.h.
#include "sim/fault/trial.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "sim/fault/event_budget.h"

#include "sim/units/check.h"

namespace mofasim::fault {
namespace {

class TrialSimulator {
 public:
  TrialSimulator(const model::FaultSpec& spec, const model::RunSpec& run, const FailureSampler& sampler, Rng& rng,
                 std::span<std::int64_t> counts, std::int64_t max_events, Rng* slow_rng, Rng* restart_rng)
      : spec_(spec),
        sampler_(sampler),
        rng_(rng),
        counts_(counts),
        n_steps_(run.n_steps),
        interval_(spec.checkpoint.interval_steps),
        step_s_(run.step_time_s),
        save_s_(spec.checkpoint.save_time_s),
        snap_s_(model::checkpoint_stall_s(spec.checkpoint)),  // async: snapshot + drain slowdown
        save_exposed_(spec.failures_during_save),
        recovery_exposed_(spec.failures_during_recovery),
        max_events_(max_events),
        restart_rng_(restart_rng) {
    if (spec.fail_slow.on()) {
      MOFASIM_CHECK(slow_rng != nullptr, "fail-slow needs the trial's fail-slow stream");
      MOFASIM_CHECK(spec.fail_slow.policy != model::FailSlowPolicy::kRestart || restart_rng != nullptr,
                    "the restart policy needs the trial's restart stream");
      slow_.emplace(spec.fail_slow, *slow_rng);
    }
  }

  TrialResult run() {
    gap_ = sampler_.next_gap_s(rng_);
    for (;;) {  // the one-time init; a failure during it restarts it after the recovery
      double elapsed = 0;
      const bool ok = advance(spec_.init_time_s, recovery_exposed_, elapsed);
      r_.init_s += elapsed;
      if (ok) break;
      fail_and_recover();
    }
    const bool blocking = spec_.checkpoint.mode == model::CheckpointMode::kBlocking;
    while (committed_ < n_steps_) {
      if (blocking) {
        attempt_blocking();
      } else {
        attempt_async();
      }
    }
    if (slow_) {
      r_.episodes = slow_->episodes();
      r_.mitigations = slow_->actions();
    }
    r_.wall_s = wall_;
    r_.ettr = static_cast<double>(n_steps_) * step_s_ / wall_;
    return r_;
  }

 private:
  // Runs a period of `duration` seconds. If it is exposed and the next failure falls inside it,
  // advances to the failure, sets `elapsed` to the time spent and returns false.
  bool advance(double duration, bool exposed, double& elapsed) {
    if (slow_) return advance_slow(duration, false, exposed, elapsed);
    if (exposed && gap_ < duration) {
      elapsed = gap_;
      wall_ += gap_;
      gap_ = 0;
      return false;
    }
    if (exposed) gap_ -= duration;
    elapsed = duration;
    wall_ += duration;
    return true;
  }

  // A period of `duration` seconds of step computation (always failure-exposed). Without
  // fail-slow exactly advance(); with it, `duration` is healthy work done at the timeline's pace.
  bool advance_work(double duration, double& elapsed) {
    if (!slow_) return advance(duration, true, elapsed);
    return advance_slow(duration, true, true, elapsed);
  }

  // advance() under fail-slow: `amount` is healthy work (work) or wall seconds (a stall), walked
  // event by event. Returns false at a failure, or (work only) at a policy rollback, which sets
  // rollback_ so that the caller's lost work and the recovery are the policy's.
  bool advance_slow(double amount, bool work, bool exposed, double& elapsed) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    elapsed = 0;
    double left = amount;
    for (;;) {
      if (work) {
        if (slow_->take_rollback()) {
          rollback_ = true;
          return false;
        }
        const double stall = slow_->take_stall();
        if (stall > 0) {
          cordon_stall(stall);
          continue;
        }
      }
      const double pace = work ? slow_->pace() : 1.0;
      const double to_end = left / pace;
      const double to_fail = exposed ? gap_ : kInf;
      const double to_event = slow_->until_event();
      if (to_end <= to_fail && to_end < to_event) {
        wall_ += to_end;
        elapsed += to_end;
        if (exposed) gap_ -= to_end;
        slow_->pass(to_end);
        return true;
      }
      if (to_fail <= to_event) {
        wall_ += gap_;
        elapsed += gap_;
        slow_->pass(gap_);
        gap_ = 0;
        return false;
      }
      wall_ += to_event;
      elapsed += to_event;
      if (exposed) gap_ -= to_event;
      left = std::max(0.0, left - to_event * pace);
      next_slow_event();
    }
  }

  // Failures and fail-slow episodes so far: the events of the trial's budget (event_budget.h).
  [[nodiscard]] std::int64_t events() const { return r_.failures + (slow_ ? slow_->episodes() : 0); }

  // Applies the next fail-slow event; an onset past the budget stops the trial.
  void next_slow_event() {
    slow_->to_next_event();
    if (events() > max_events_) {
      throw EventBudgetExceeded("trial: more than " + std::to_string(max_events_) + " failures and fail-slow episodes");
    }
  }

  // A cordon's reconfiguration: failure-free wall time, episodes go on meanwhile.
  void cordon_stall(double seconds) {
    wall_ += seconds;
    r_.slow_s += seconds;
    for (;;) {
      const double until = slow_->until_event();
      if (until > seconds) break;
      seconds -= until;
      next_slow_event();
    }
    slow_->pass(seconds);
  }

  // Segments of `wall_per_segment` wall seconds that may be skipped arithmetically: all of them
  // without fail-slow; with it, those that end before the next fail-slow event, and none while
  // an episode is in force.
  [[nodiscard]] std::int64_t quiet_segments(double wall_per_segment) const {
    constexpr std::int64_t kAll = std::numeric_limits<std::int64_t>::max();
    if (!slow_) return kAll;
    if (!slow_->quiet()) return 0;
    const double q = std::floor(slow_->until_event() / wall_per_segment);
    return q < 1e18 ? static_cast<std::int64_t>(q) : kAll;
  }

  // Where work thrown away goes: lost work, or the policy's account when its rollback threw it away.
  double& lost() { return rollback_ ? r_.mitigation_s : r_.lost_work_s; }

  // The policy's rollback (restart: a recovery drawn like a fail-stop's; hot spare: the swap).
  // Returns true when it completed, false when a failure struck during it.
  bool recover_from_rollback() {
    rollback_ = false;
    const model::FailSlowSpec& f = spec_.fail_slow;
    const double recovery = (f.policy == model::FailSlowPolicy::kHotSpare
                                 ? f.action_time_s
                                 : sampler_.draw_recovery_s(sampler_.draw_class(*restart_rng_), *restart_rng_)) +
                            spec_.checkpoint.restore_time_s;
    double elapsed = 0;
    const bool ok = advance(recovery, recovery_exposed_, elapsed);
    r_.mitigation_s += elapsed;
    return ok;
  }

  // A fail-stop recovery has completed: the job restarted from the checkpoint and any part the
  // policy detected slow meanwhile was left out of that restart, so a rollback the policy ordered
  // during it (or during the stall the failure cut) is that recovery, not a second one. (A part
  // detected during the policy's own restart or swap of another part needs its own action.)
  void absorb_rollback() {
    if (slow_) static_cast<void>(slow_->take_rollback());
  }

  // A failure has struck at wall_ (or the policy rolled back: rollback_): count it, draw the next
  // one, and recover (restarting the recovery for each failure that strikes during it, if those
  // are enabled).
  void fail_and_recover() {
    if (rollback_ && recover_from_rollback()) return;
    for (;;) {
      if (events() >= max_events_) {
        throw EventBudgetExceeded("trial: more than " + std::to_string(max_events_) + " failures and fail-slow episodes");
      }
      const int cls = sampler_.draw_class(rng_);
      ++counts_[static_cast<std::size_t>(cls)];
      ++r_.failures;
      gap_ = sampler_.next_gap_s(rng_);
      double elapsed = 0;
      // The checkpoint read-back (0 unless the I/O model derived it) follows every recovery.
      const double recovery = sampler_.draw_recovery_s(cls, rng_) + spec_.checkpoint.restore_time_s;
      const bool ok = advance(recovery, recovery_exposed_, elapsed);
      r_.downtime_s += elapsed;
      if (ok) {
        absorb_rollback();
        return;
      }
    }
  }

  // Segments left from committed_: all of interval_ steps but the last. Rounded up without
  // adding interval_ - 1 first, which overflows when n_steps_ is near INT64_MAX.
  [[nodiscard]] std::int64_t segments_left() const {
    const std::int64_t steps = n_steps_ - committed_;
    return steps / interval_ + (steps % interval_ != 0 ? 1 : 0);
  }

  // Full segments (of exposed length `exposed`) that complete before the next failure, at most `limit`.
  [[nodiscard]] std::int64_t segments_before_failure(double exposed, std::int64_t limit) const {
    const double q = std::floor(gap_ / exposed);
    return q < static_cast<double>(limit) ? static_cast<std::int64_t>(q) : limit;
  }

  // Blocking checkpoints: skip the full segments that finish before the next failure, then run one
  // segment (the one the failure hits, or the last) phase by phase.
  void attempt_blocking() {
    const std::int64_t segments = segments_left();
    const double work = static_cast<double>(interval_) * step_s_;
    const double exposed = work + (save_exposed_ ? save_s_ : 0);
    const std::int64_t k = std::min(segments_before_failure(exposed, segments - 1), quiet_segments(work + save_s_));
    if (k > 0) {
      const double kd = static_cast<double>(k);
      wall_ += kd * (work + save_s_);
      gap_ = std::max(0.0, gap_ - kd * exposed);
      r_.checkpoint_s += kd * save_s_;
      committed_ += k * interval_;
      if (slow_) slow_->pass(kd * (work + save_s_));
    }
    const std::int64_t steps = std::min(interval_, n_steps_ - committed_);
    const double seg_work = static_cast<double>(steps) * step_s_;
    double elapsed = 0;
    if (!advance_work(seg_work, elapsed)) {
      lost() += elapsed;
      fail_and_recover();
      return;
    }
    if (slow_) r_.slow_s += elapsed - seg_work;
    if (!advance(save_s_, save_exposed_, elapsed)) {
      r_.checkpoint_s += elapsed;
      r_.lost_work_s += seg_work;
      fail_and_recover();
      return;
    }
    r_.checkpoint_s += save_s_;
    committed_ += steps;
  }

  // Asynchronous checkpoints. Cycle j of this attempt (from checkpoint c0, no write in flight):
  // compute work_j; if j >= 1 wait until the write of segment j-1 completes (it started at the
  // end of cycle j-1 and completes save_s_ into cycle j); snapshot; the last cycle then writes
  // its own checkpoint to the end. Before cycle j, segments 0..j-2 are committed.
  void attempt_async() {
    const std::int64_t c0 = committed_;
    const std::int64_t cycles = segments_left();
    const double full_work = static_cast<double>(interval_) * step_s_;
    std::int64_t j = 0;
    for (;;) {
      if (j >= 1 && j + 1 < cycles) {  // cycles 1..cycles-2 are identical: skip those that complete
        const double wait = std::max(0.0, save_s_ - full_work);
        const double exposed = full_work + (save_exposed_ ? wait + snap_s_ : 0);
        const std::int64_t m = std::min(segments_before_failure(exposed, cycles - 1 - j),
                                        quiet_segments(full_work + wait + snap_s_));
        if (m > 0) {
          const double md = static_cast<double>(m);
          wall_ += md * (full_work + wait + snap_s_);
          gap_ = std::max(0.0, gap_ - md * exposed);
          r_.checkpoint_s += md * (wait + snap_s_);
          if (slow_) slow_->pass(md * (full_work + wait + snap_s_));
          j += m;
          committed_ = c0 + (j - 1) * interval_;
        }
      }
      const bool last = j + 1 == cycles;
      const std::int64_t steps = last ? n_steps_ - c0 - j * interval_ : interval_;
      const double work = static_cast<double>(steps) * step_s_;
      const double prev_work = full_work;  // segment j-1 is never the last one
      double elapsed = 0;
      if (!advance_work(work, elapsed)) {
        const bool prev_committed = j >= 1 && elapsed >= save_s_;
        if (prev_committed) committed_ = c0 + j * interval_;
        lost() += elapsed + (j >= 1 && !prev_committed ? prev_work : 0);
        fail_and_recover();
        return;
      }
      // The background write ran for the work period's wall time (longer than `work` when slow).
      const double work_wall = slow_ ? elapsed : work;
      if (slow_) r_.slow_s += elapsed - work;
      if (j >= 1) {
        const double wait = std::max(0.0, save_s_ - work_wall);
        if (!advance(wait, save_exposed_, elapsed)) {
          r_.checkpoint_s += elapsed;
          r_.lost_work_s += work + prev_work;
          fail_and_recover();
          return;
        }
        r_.checkpoint_s += wait;
        committed_ = c0 + j * interval_;  // the write of segment j-1 is complete
      }
      const double stall = snap_s_ + (last ? save_s_ : 0);  // the last write is waited for
      if (!advance(stall, save_exposed_, elapsed)) {
        r_.checkpoint_s += elapsed;
        r_.lost_work_s += work;
        fail_and_recover();
        return;
      }
      r_.checkpoint_s += stall;
      if (last) {
        committed_ = n_steps_;
        return;
      }
      ++j;
    }
  }

  const model::FaultSpec& spec_;
  const FailureSampler& sampler_;
  Rng& rng_;
  std::span<std::int64_t> counts_;
  const std::int64_t n_steps_;
  const std::int64_t interval_;
  const double step_s_;
  const double save_s_;
  const double snap_s_;
  const bool save_exposed_;
  const bool recovery_exposed_;
  const std::int64_t max_events_;  // failures and fail-slow episodes together
  Rng* restart_rng_;  // the restart policy's draws, apart from the episode stream
  std::optional<FailSlowTimeline> slow_{};
  bool rollback_ = false;  // the period that just ended was cut by the policy's rollback

  double wall_ = 0;
  double gap_ = 0;  // exposed seconds until the next failure
  std::int64_t committed_ = 0;
  TrialResult r_;
};

}  // namespace

TrialResult simulate_trial(const model::FaultSpec& spec, const model::RunSpec& run, const FailureSampler& sampler,
                           Rng& rng, std::span<std::int64_t> failures_by_class, std::int64_t max_events,
                           Rng* fail_slow_rng, Rng* restart_rng) {
  MOFASIM_CHECK(failures_by_class.size() == static_cast<std::size_t>(sampler.num_classes()),
                "failures_by_class must have one slot per failure class");
  return TrialSimulator(spec, run, sampler, rng, failures_by_class, max_events, fail_slow_rng, restart_rng).run();
}

}  // namespace mofasim::fault
