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

// What the job does about a fail-slow episode once it is detected (detection_time_s after onset),
// in the vocabulary of Megatron's straggler detection and ByteDance's fault-tolerance reports.
enum class FailSlowPolicy {
  kNone,      // ride it out: the slow steps run until the episode ends by itself
  kRestart,   // restart the job without the slow part: a rollback and a recovery drawn like a fail-stop's
  kCordon,    // drop the slow part's DP replica and go on with dp - 1 replicas until the episode ends
  kHotSpare,  // swap in a warm spare: a rollback and a recovery of action_time_s
};

// Fail-slow episodes (issue 17): a GPU, node or link that keeps working but slowly. Onsets are
// Poisson on the wall clock, rate_per_unit_per_day per unit over `units`; each episode lasts a
// drawn duration and slows the part at one position class, drawn uniformly (the CLI makes the
// classes the pipeline stages, whose slow steps differ). A step in an episode takes
// step_time_s * slow_step_factor[class]; steps are timed fluidly (a step in progress when an
// episode starts or ends finishes at the new rate). With several episodes in force the slowest
// sets the pace (an approximation: two slow stages cost about what the slower does).
struct FailSlowSpec {
  double rate_per_unit_per_day = 0;  // 0 = no fail-slow: the trial is today's, bit for bit
  std::int64_t units = 0;            // GPUs, nodes or links the onsets are counted over
  RecoveryDistribution duration{};   // how long an episode lasts (fixed, exponential, lognormal, empirical)
  std::vector<double> slow_step_factor{};  // by position class: slow step / healthy step
  FailSlowPolicy policy = FailSlowPolicy::kNone;
  double detection_time_s = 0;  // onset to action (restart, cordon, hot spare)
  double action_time_s = 0;     // cordon: the reconfiguration stall; hot spare: the swap
  // Cordon: the step with one DP replica fewer (at the smaller global batch) / the healthy step, and
  // the healthy replica count. With k parts cordoned a step does (dp - k) / dp of a healthy
  // step's samples (k at most dp - 1; more cordons share that pace).
  double cordon_step_factor = 1;
  std::int64_t dp_replicas = 1;

  [[nodiscard]] bool on() const { return rate_per_unit_per_day > 0; }
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
  FailSlowSpec fail_slow{};              // off unless its rate is > 0
};

// The run being protected.
struct RunSpec {
  double step_time_s = 0;   // T_step
  std::int64_t n_steps = 0; // N_steps
  double tokens_per_step = 0;  // for the goodput distribution (tokens per wall second); 0 = not reported
};

// The default class mix of MoFa(41): process / pod / job restarts in the ratio 3:6:1 with
// fixed recovery times of 141 s, 262 s and 307 s.
std::vector<FailureClass> mofa_default_failure_classes();

// Throw std::invalid_argument naming the first offending field and what is allowed.
void validate(const FaultSpec& spec);
void validate(const FailSlowSpec& spec);
void validate(const RunSpec& run);

}  // namespace mofasim::model
