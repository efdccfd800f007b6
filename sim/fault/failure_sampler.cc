// Construction of the FailureSampler and the recovery-time draw.
#include "sim/fault/failure_sampler.h"

#include <cmath>
#include <limits>

#include "model/fault_analytic.h"
#include "sim/units/check.h"

namespace mofasim::fault {

FailureSampler::FailureSampler(const model::FaultSpec& spec) : process_(spec.process.kind) {
  model::validate(spec);
  const double c = model::job_failure_rate_per_s(spec);
  const double inf = std::numeric_limits<double>::infinity();
  switch (process_) {
    case model::FailureProcessKind::kPoisson: gap_scale_s_ = c > 0 ? 1 / c : inf; break;
    case model::FailureProcessKind::kWeibull:
      inv_shape_ = 1 / spec.process.weibull_shape;
      gap_scale_s_ = c > 0 ? 1 / (c * std::tgamma(1 + inv_shape_)) : inf;
      break;
    case model::FailureProcessKind::kEmpirical:
      gaps_s_ = spec.process.inter_arrival_s;
      gap_scale_s_ = static_cast<double>(spec.process.recorded_units) / static_cast<double>(spec.failure_units);
      break;
  }
  if (spec.classes.empty()) {
    names_ = {"failure"};
    cumulative_ = {1};
  } else {
    double sum = 0;
    for (const model::FailureClass& fc : spec.classes) {
      names_.push_back(fc.name);
      sum += fc.weight;
      cumulative_.push_back(sum);
    }
  }
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (spec.fixed_downtime_s || spec.classes.empty()) {
      recovery_.push_back({model::RecoveryKind::kFixed, spec.fixed_downtime_s.value_or(0), 0, 0, 0});
      continue;
    }
    const model::RecoveryDistribution& r = spec.classes[i].recovery;
    switch (r.kind) {
      case model::RecoveryKind::kFixed:
      case model::RecoveryKind::kExponential: recovery_.push_back({r.kind, r.mean_s, 0, 0, 0}); break;
      case model::RecoveryKind::kLognormal:
        // mean = exp(mu + sigma^2 / 2)  =>  mu = ln(mean) - sigma^2 / 2.
        recovery_.push_back({r.kind, std::log(r.mean_s) - r.sigma * r.sigma / 2, r.sigma, 0, 0});
        break;
      case model::RecoveryKind::kEmpirical:
        recovery_.push_back({r.kind, 0, 0, samples_s_.size(), r.samples_s.size()});
        samples_s_.insert(samples_s_.end(), r.samples_s.begin(), r.samples_s.end());
        break;
    }
  }
}

double FailureSampler::draw_recovery_s(int cls, Rng& rng) const {
  const Recovery& r = recovery_[static_cast<std::size_t>(cls)];
  switch (r.kind) {
    case model::RecoveryKind::kFixed: return r.a;
    case model::RecoveryKind::kExponential: return r.a * rng.exponential();
    case model::RecoveryKind::kLognormal: return std::exp(r.a + r.b * rng.normal());
    case model::RecoveryKind::kEmpirical: return samples_s_[r.first + pick(rng, r.count)];
  }
  MOFASIM_UNREACHABLE("unknown RecoveryKind");
}

}  // namespace mofasim::fault
