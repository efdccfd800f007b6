// The fail-slow episodes of one Monte Carlo trial on the wall clock (model::FailSlowSpec): Poisson
// onsets, drawn durations and position classes, detection and the policy's action. The trial
// (trial.cc) asks for the current pace and the time to the next change, and moves the clock.
// Draws come from the trial's own fail-slow stream, so turning fail-slow on leaves the fail-stop
// draws of every trial as they were (common random numbers across policies).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "model/fault_spec.h"
#include "sim/fault/rng.h"

namespace mofasim::fault {

class FailSlowTimeline {
 public:
  // `spec` must be validated and on(); `rng` outlives the timeline.
  FailSlowTimeline(const model::FailSlowSpec& spec, Rng& rng);

  // Healthy seconds of work done per wall second now: 1 when healthy, 1 / (slowest factor in
  // force) in an episode, times (dp - k) / dp with k parts cordoned.
  [[nodiscard]] double pace() const { return pace_; }
  [[nodiscard]] bool healthy() const { return episodes_.empty() && cordoned_ == 0; }
  // Healthy with nothing due: no rollback or stall waiting to be taken.
  [[nodiscard]] bool quiet() const { return healthy() && !rollback_ && stall_s_ == 0; }
  // Wall seconds from now to the next onset, end or detection.
  [[nodiscard]] double until_event() const { return next_at_ - now_; }

  // Moves the clock by dt < until_event() (no event in between).
  void pass(double dt) { now_ += dt; }
  // Moves the clock to the next event and applies it.
  void to_next_event();

  // A detection that calls for a rollback (restart, hot spare) since the last call: true once.
  bool take_rollback();
  // Seconds of cordon reconfiguration stalls due since the last call.
  double take_stall();

  [[nodiscard]] std::int64_t episodes() const { return onsets_; }
  [[nodiscard]] std::int64_t actions() const { return actions_; }

 private:
  struct Episode {
    double end_at;
    double detect_at;  // +inf when nothing acts on it or it has been acted on
    double factor;
    bool cordoned;
  };
  void update();

  const model::FailSlowSpec& spec_;
  Rng& rng_;
  double onset_scale_s_ = 0;  // mean wall seconds between onsets
  double now_ = 0;
  double next_onset_at_ = 0;
  double next_at_ = 0;
  double pace_ = 1;
  std::int64_t cordoned_ = 0;
  std::int64_t onsets_ = 0;
  std::int64_t actions_ = 0;
  bool rollback_ = false;
  double stall_s_ = 0;
  std::vector<Episode> episodes_{};
};

}  // namespace mofasim::fault
