// Fail-slow episodes of one trial: onsets, ends, detections and the pace they leave.
#include "sim/fault/fail_slow_timeline.h"

#include <algorithm>
#include <cmath>

namespace mofasim::fault {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double draw_duration(const model::RecoveryDistribution& d, Rng& rng) {
  switch (d.kind) {
    case model::RecoveryKind::kFixed: return d.mean_s;
    case model::RecoveryKind::kExponential: return d.mean_s * rng.exponential();
    case model::RecoveryKind::kLognormal:  // mean = exp(mu + sigma^2 / 2)
      return std::exp(std::log(d.mean_s) - d.sigma * d.sigma / 2 + d.sigma * rng.normal());
    case model::RecoveryKind::kEmpirical: {
      const std::size_t n = d.samples_s.size();
      const auto i = static_cast<std::size_t>(rng.uniform() * static_cast<double>(n));
      return d.samples_s[i < n ? i : n - 1];
    }
  }
  return d.mean_s;
}

}  // namespace

FailSlowTimeline::FailSlowTimeline(const model::FailSlowSpec& spec, Rng& rng) : spec_(spec), rng_(rng) {
  onset_scale_s_ = 86400.0 / (spec.rate_per_unit_per_day * static_cast<double>(spec.units));
  next_onset_at_ = onset_scale_s_ * rng_.exponential();
  update();
}

void FailSlowTimeline::to_next_event() {
  now_ = next_at_;
  if (next_onset_at_ <= now_) {
    ++onsets_;
    const double length = draw_duration(spec_.duration, rng_);
    const std::size_t classes = spec_.slow_step_factor.size();
    const auto c = static_cast<std::size_t>(rng_.uniform() * static_cast<double>(classes));
    const bool acts = spec_.policy != model::FailSlowPolicy::kNone && spec_.detection_time_s < length;
    episodes_.push_back({.end_at = now_ + length,
                         .detect_at = acts ? now_ + spec_.detection_time_s : kInf,
                         .factor = spec_.slow_step_factor[c < classes ? c : classes - 1],
                         .cordoned = false});
    next_onset_at_ = now_ + onset_scale_s_ * rng_.exponential();
  } else {
    // The earliest end or detection (ties: the first in the list; each call applies one event).
    auto it = std::min_element(episodes_.begin(), episodes_.end(), [](const Episode& a, const Episode& b) {
      return std::min(a.end_at, a.detect_at) < std::min(b.end_at, b.detect_at);
    });
    if (it->detect_at <= it->end_at) {
      ++actions_;
      it->detect_at = kInf;
      if (spec_.policy == model::FailSlowPolicy::kCordon) {
        it->cordoned = true;
        ++cordoned_;
        stall_s_ += spec_.action_time_s;
      } else {  // restart or hot spare: the job rolls back and comes back without the slow part
        rollback_ = true;
        episodes_.erase(it);
      }
    } else {
      if (it->cordoned) --cordoned_;  // the part is healthy again and rejoins
      episodes_.erase(it);
    }
  }
  update();
}

bool FailSlowTimeline::take_rollback() {
  const bool r = rollback_;
  rollback_ = false;
  return r;
}

double FailSlowTimeline::take_stall() {
  const double s = stall_s_;
  stall_s_ = 0;
  return s;
}

void FailSlowTimeline::update() {
  next_at_ = next_onset_at_;
  double factor = cordoned_ > 0 ? spec_.cordon_step_factor : 1.0;
  for (const Episode& e : episodes_) {
    next_at_ = std::min({next_at_, e.end_at, e.detect_at});
    if (!e.cordoned) factor = std::max(factor, e.factor);
  }
  pace_ = 1 / factor;
  if (cordoned_ > 0) {
    const double dp = static_cast<double>(spec_.dp_replicas);
    const double k = static_cast<double>(std::min(cordoned_, spec_.dp_replicas - 1));
    pace_ *= (dp - k) / dp;
  }
}

}  // namespace mofasim::fault
