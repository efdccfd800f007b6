// Draws of the Monte Carlo injector: the time to the next job failure (in seconds of
// failure-exposed time), the class of a failure and its recovery time. Built once from a validated
// FaultSpec; every draw is allocation-free and the object is shared read-only across threads.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/fault_spec.h"
#include "sim/fault/rng.h"

namespace mofasim::fault {

class FailureSampler {
 public:
  explicit FailureSampler(const model::FaultSpec& spec);

  // Exposed seconds from one failure (or the start) to the next, +infinity if failures never happen.
  //  - Poisson: exponential with mean 1 / c, c = failure_units * lambda / 86400.
  //  - Weibull: the job's failures form a renewal process (not a superposition of per-unit
  //    processes) with Weibull(shape k, scale 1 / (c * Gamma(1 + 1/k))) gaps, i.e. the same mean
  //    rate c; k < 1 gives bursts of failures, k > 1 more regular ones.
  //  - Empirical: a recorded gap drawn uniformly, scaled by recorded_units / failure_units (gaps
  //    shrink in proportion as the cluster grows).
  double next_gap_s(Rng& rng) const {
    switch (process_) {
      case model::FailureProcessKind::kPoisson: return gap_scale_s_ * rng.exponential();
      case model::FailureProcessKind::kWeibull: return gap_scale_s_ * std::pow(rng.exponential(), inv_shape_);
      case model::FailureProcessKind::kEmpirical: return gap_scale_s_ * gaps_s_[pick(rng, gaps_s_.size())];
    }
    return gap_scale_s_ * rng.exponential();
  }

  // Index into class_names() by weight.
  int draw_class(Rng& rng) const {
    if (cumulative_.size() == 1) return 0;
    const double u = rng.uniform() * cumulative_.back();
    for (std::size_t i = 0; i + 1 < cumulative_.size(); ++i) {
      if (u <= cumulative_[i]) return static_cast<int>(i);
    }
    return static_cast<int>(cumulative_.size() - 1);
  }

  // Recovery time of a failure of class `cls`; the fixed downtime when the spec sets one.
  double draw_recovery_s(int cls, Rng& rng) const;

  [[nodiscard]] const std::vector<std::string>& class_names() const { return names_; }
  [[nodiscard]] int num_classes() const { return static_cast<int>(names_.size()); }

 private:
  struct Recovery {
    model::RecoveryKind kind;
    double a;  // fixed value, exponential mean, lognormal mu
    double b;  // lognormal sigma
    std::size_t first;  // empirical samples: [first, first + count) in samples_s_
    std::size_t count;
  };

  static std::size_t pick(Rng& rng, std::size_t n) {
    const auto i = static_cast<std::size_t>(rng.uniform() * static_cast<double>(n));
    return i < n ? i : n - 1;  // uniform() may return exactly 1
  }

  model::FailureProcessKind process_;
  double gap_scale_s_ = 0;
  double inv_shape_ = 1;
  std::vector<double> gaps_s_{};
  std::vector<double> cumulative_{};
  std::vector<std::string> names_{};
  std::vector<Recovery> recovery_{};
  std::vector<double> samples_s_{};
};

}  // namespace mofasim::fault
