// Validation of the fault-tolerance inputs and the MoFa default failure-class mix.
#include "model/fault_spec.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace mofasim::model {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

bool finite_non_negative(double x) { return std::isfinite(x) && x >= 0; }

void validate_recovery(const RecoveryDistribution& r, const std::string& field) {
  switch (r.kind) {
    case RecoveryKind::kFixed:
    case RecoveryKind::kExponential:
      require(finite_non_negative(r.mean_s), field + ".mean_s must be a finite number >= 0");
      return;
    case RecoveryKind::kLognormal:
      require(std::isfinite(r.mean_s) && r.mean_s > 0, field + ".mean_s must be > 0 for a lognormal");
      require(std::isfinite(r.sigma) && r.sigma > 0, field + ".sigma must be > 0 for a lognormal");
      return;
    case RecoveryKind::kEmpirical:
      require(!r.samples_s.empty(), field + ".samples_s must not be empty for an empirical distribution");
      for (double s : r.samples_s) {
        require(finite_non_negative(s), field + ".samples_s must hold finite numbers >= 0");
      }
      return;
  }
  require(false, field + ".kind is not a known recovery distribution");
}

}  // namespace

std::vector<FailureClass> mofa_default_failure_classes() {
  return {
      {.name = "process", .weight = 3, .recovery = {.kind = RecoveryKind::kFixed, .mean_s = 141}},
      {.name = "pod", .weight = 6, .recovery = {.kind = RecoveryKind::kFixed, .mean_s = 262}},
      {.name = "job", .weight = 1, .recovery = {.kind = RecoveryKind::kFixed, .mean_s = 307}},
  };
}

void validate(const FaultSpec& spec) {
  require(finite_non_negative(spec.node_failure_rate_per_day),
          "fault.node_failure_rate_per_day must be a finite number >= 0");
  require(spec.failure_units >= 1, "fault.failure_units must be >= 1");
  if (spec.fixed_downtime_s) {
    require(finite_non_negative(*spec.fixed_downtime_s), "fault.fixed_downtime_s must be a finite number >= 0");
  } else {
    require(!spec.classes.empty(), "fault.classes must not be empty unless fault.fixed_downtime_s is set");
  }
  double total_weight = 0;
  for (std::size_t i = 0; i < spec.classes.size(); ++i) {
    const std::string field = "fault.classes[" + std::to_string(i) + "]";
    require(std::isfinite(spec.classes[i].weight) && spec.classes[i].weight >= 0, field + ".weight must be >= 0");
    total_weight += spec.classes[i].weight;
    validate_recovery(spec.classes[i].recovery, field + ".recovery");
  }
  require(spec.classes.empty() || total_weight > 0, "fault.classes: at least one weight must be > 0");
  const CheckpointPolicy& c = spec.checkpoint;
  require(c.interval_steps >= 1, "fault.checkpoint.interval_steps must be >= 1");
  require(finite_non_negative(c.save_time_s), "fault.checkpoint.save_time_s must be a finite number >= 0");
  require(finite_non_negative(c.snapshot_time_s), "fault.checkpoint.snapshot_time_s must be a finite number >= 0");
  require(finite_non_negative(c.restore_time_s), "fault.checkpoint.restore_time_s must be a finite number >= 0");
  require(finite_non_negative(c.drain_slowdown_s), "fault.checkpoint.drain_slowdown_s must be a finite number >= 0");
  require(c.mode == CheckpointMode::kBlocking || c.mode == CheckpointMode::kAsync,
          "fault.checkpoint.mode must be blocking or async");
  require(finite_non_negative(spec.init_time_s), "fault.init_time_s must be a finite number >= 0");
  const FailureProcess& p = spec.process;
  switch (p.kind) {
    case FailureProcessKind::kPoisson: break;
    case FailureProcessKind::kWeibull:
      require(std::isfinite(p.weibull_shape) && p.weibull_shape > 0, "fault.process.weibull_shape must be > 0");
      break;
    case FailureProcessKind::kEmpirical: {
      require(!p.inter_arrival_s.empty(), "fault.process.inter_arrival_s must not be empty for an empirical process");
      require(p.recorded_units >= 1, "fault.process.recorded_units must be >= 1 for an empirical process");
      double sum = 0;
      for (double g : p.inter_arrival_s) {
        require(finite_non_negative(g), "fault.process.inter_arrival_s must hold finite numbers >= 0");
        sum += g;
      }
      require(sum > 0, "fault.process.inter_arrival_s must not be all zero");
      break;
    }
    default: require(false, "fault.process.kind must be poisson, weibull or empirical");
  }
  validate(spec.fail_slow);
}

void validate(const FailSlowSpec& f) {
  require(finite_non_negative(f.rate_per_unit_per_day), "fault.fail_slow.rate_per_unit_per_day must be a finite number >= 0");
  if (!f.on()) return;
  require(f.units >= 1, "fault.fail_slow.units must be >= 1");
  validate_recovery(f.duration, "fault.fail_slow.duration");
  require(!f.slow_step_factor.empty(), "fault.fail_slow.slow_step_factor must not be empty");
  for (double x : f.slow_step_factor) {
    require(std::isfinite(x) && x > 0, "fault.fail_slow.slow_step_factor must hold finite numbers > 0");
  }
  require(finite_non_negative(f.detection_time_s), "fault.fail_slow.detection_time_s must be a finite number >= 0");
  require(finite_non_negative(f.action_time_s), "fault.fail_slow.action_time_s must be a finite number >= 0");
  require(f.policy == FailSlowPolicy::kNone || f.policy == FailSlowPolicy::kRestart ||
              f.policy == FailSlowPolicy::kCordon || f.policy == FailSlowPolicy::kHotSpare,
          "fault.fail_slow.policy must be none, restart, cordon or hot_spare");
  if (f.policy == FailSlowPolicy::kCordon) {
    require(std::isfinite(f.cordon_step_factor) && f.cordon_step_factor > 0,
            "fault.fail_slow.cordon_step_factor must be a finite number > 0");
    require(f.dp_replicas >= 2, "fault.fail_slow.dp_replicas must be >= 2 to cordon a replica");
  }
}

void validate(const RunSpec& run) {
  require(std::isfinite(run.step_time_s) && run.step_time_s > 0, "run.step_time_s must be a finite number > 0");
  require(run.n_steps >= 1, "run.n_steps must be >= 1");
  require(finite_non_negative(run.tokens_per_step), "run.tokens_per_step must be a finite number >= 0");
}

}  // namespace mofasim::model
