// Inputs of the fault-tolerance model (MoFa §3.4): failure rate and classes, recovery-time
// distributions, checkpoint policy and the failure process, plus the run being protected (step
// time, number of steps). Plain structs in SI units (seconds, failures per unit per day); both the
// analytic model (model/fault_analytic.h) and the Monte Carlo injector (sim/fault/) read them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mofasim::model {

enum class RecoveryKind {
  kFixed,        // always mean_s
  kExponential,  // exponential with mean mean_s
  kLognormal,    // lognormal with mean mean_s and log-space standard deviation sigma
  kEmpirical,    // uniform resampling of samples_s
};

struct RecoveryDistribution {
  RecoveryKind kind = RecoveryKind::kFixed;
  double mean_s = 0;               // kFixed, kExponential, kLognormal
  double sigma = 0;                // kLognormal only (> 0)
  std::vector<double> samples_s{};   // kEmpirical only (non-empty, each >= 0)
};

// One kind of failure (e.g. process restart, pod replacement, job restart) with its share of all
// failures and its recovery time (detection + recovery + re-initialisation).
struct FailureClass {
  std::string name{};
  double weight = 1;  // relative frequency; weights need not sum to 1
  RecoveryDistribution recovery{};
};

enum class CheckpointMode {
  kBlocking,  // training stalls for save_time_s after every interval
  kAsync,     // training stalls for snapshot_time_s, then save_time_s is written in the background
};

struct CheckpointPolicy {
  std::int64_t interval_steps = 0;  // N_ckpt >= 1
  double save_time_s = 0;           // t_save: one blocking save, or the background write (async)
  CheckpointMode mode = CheckpointMode::kBlocking;
  double snapshot_time_s = 0;       // async only: the device-to-host snapshot stall
  // Reading the last checkpoint back after a failure, added to every recovery. 0 when the scenario
  // gives save_time (its class recovery times are taken to include the reload); the checkpoint
  // I/O model (sim/fault/checkpoint_io.h) sets it from the storage tier's read path.
  double restore_time_s = 0;
  // Async only: the training time the background write costs while it runs, summed over the steps
  // it spans (each step's time while draining minus the step alone). 0 unless the checkpoint I/O
  // model replays the drain beside the step's traffic (sim/executor/replay_drain.h). Charged like
  // the snapshot: once per checkpoint, right after it.
  double drain_slowdown_s = 0;
};

// The training time one checkpoint costs at the step: the blocking save, or an async checkpoint's
// snapshot stall plus its drain's slowdown of the steps that follow (its write itself overlaps).
inline double checkpoint_stall_s(const CheckpointPolicy& c) {
  return c.mode == CheckpointMode::kBlocking ? c.save_time_s : c.snapshot_time_s + c.drain_slowdown_s;
}

enum class FailureProcessKind {
  kPoisson,    // job failures are Poisson with rate failure_units * lambda / 86400 per second
  kWeibull,    // job-level renewal process with Weibull inter-arrival times of that mean rate
  kEmpirical,  // job-level renewal process resampling historical inter-arrival times
};

struct FailureProcess {
  FailureProcessKind kind = FailureProcessKind::kPoisson;
  double weibull_shape = 1;              // kWeibull: k > 0 (k < 1 bursty, k = 1 Poisson)
  std::vector<double> inter_arrival_s{};   // kEmpirical: gaps between failures as recorded
  std::int64_t recorded_units = 0;       // kEmpirical: failure units of the recorded cluster
};

struct FaultSpec {
  double node_failure_rate_per_day = 0;  // lambda, failures per failure unit per day
  std::int64_t failure_units = 0;        // nodes = gpus / gpus_per_failure_domain
  std::vector<FailureClass> classes{};     // the class mix; may be empty if fixed_downtime_s is set
  std::optional<double> fixed_downtime_s{};  // D per failure; overrides the class recovery times
  CheckpointPolicy checkpoint{};
  double init_time_s = 0;                // one-time start-up before the first step (T_init)
  bool failures_during_save = true;      // if false, save/snapshot stalls are failure-free
  bool failures_during_recovery = false; // if false, recoveries (and the init) are failure-free
  FailureProcess process{};
};

// The run being protected.
struct RunSpec {
  double step_time_s = 0;   // T_step
  std::int64_t n_steps = 0; // N_steps
};

// The default class mix of MoFa(41): process / pod / job restarts in the ratio 3:6:1 with
// fixed recovery times of 141 s, 262 s and 307 s.
std::vector<FailureClass> mofa_default_failure_classes();

// Throw std::invalid_argument naming the first offending field and what is allowed.
void validate(const FaultSpec& spec);
void validate(const RunSpec& run);

}  // namespace mofasim::model
