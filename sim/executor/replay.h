// Replay: runs a Workload on the engine (EventQueue + FluidModel) over a Topology.
//
// Every simulated rank has a compute resource (capacity 1 device-second per second), D2H and H2D
// copy engines (the hardware's copy bandwidths), a host-CPU resource and a contention domain;
// every physical link of the topology is a resource with its capacity. A task instance starts as
// soon as all its predecessor instances have ended (stream order is part of the DAG):
//   compute      one activity on its rank's compute resource, in its rank's domain;
//   collective   the CollectivePlan of its real group (topology/), phase by phase: one activity
//                of S bytes using each link with weight bytes-per-byte, after the phase latency,
//                in the domain of the group's first simulated member, with the task's alpha/beta;
//   PP p2p       the send/recv plan between the two ranks, in the sender's domain;
//   copy         one activity on the rank's copy engine (communication kind, its alpha/beta);
//   host         one activity on the rank's host resource (no domain).
// Memory: a task allocates alloc_bytes on its rank when it starts and frees free_bytes when it
// ends; the live maximum per rank is recorded.
//
// NOTE: a collective's bytes run in one domain (its first simulated member's), whose overlap decides
// its beta; its alpha slows the compute of every simulated member (an interference marker in each
// other member's domain, replay.cc), as the kernel runs on every member GPU. With the alpha in the
// first member's domain only, a straggler outside replica 0 escaped the DP interference and could
// shorten the step. Folded fidelity loads only the real groups of replica 0: exact when no link carries
// traffic of two groups of one kind at once (rail-optimised NICs, the default); simulate_step()
// replays every rank instead when GPUs share NICs (folding_refusal, simulate_step.h). With
// perturbations, folded fidelity also simulates the replicas holding a perturbed GPU
// (extra_replicas), or simulate_step() replays every rank where that would not be exact
// (perturbed_folding.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/spec.h"
#include "sim/executor/instance_map.h"
#include "sim/executor/replay_background.h"
#include "sim/executor/workload.h"
#include "sim/executor/zeroed_array.h"
#include "sim/perturb/perturbation.h"
#include "topology/placement.h"
#include "topology/topology.h"

namespace mofasim::executor {

struct ReplayInput {
  const Workload* workload = nullptr;
  const topology::Topology* topology = nullptr;
  const topology::Placement* placement = nullptr;
  const model::HardwareSpec* hardware = nullptr;
  Fidelity fidelity = Fidelity::kFolded;
  // Overlap interference: a collective or p2p kernel occupies SMs, so compute of its rank that runs
  // at the same time is slowed by at least this factor (model::overlap_interference_alpha); the
  // task's own alpha applies when larger. 1 = overlap is free.
  double comm_interference_alpha = 1.0;
  // Stragglers and degraded links (sim/perturb): a slow GPU's compute resource has capacity
  // 1 / factor, a degraded link its capacity times the fraction. Null or empty: a healthy cluster.
  const perturb::ResolvedPerturbations* perturbations = nullptr;
  // Heterogeneous GPUs (sim/perturb/node_hardware.h): hardware class by GPU (empty: one class,
  // `hardware`). A rank of class c > 0 runs its compute and host tasks for the work priced on its
  // own hardware, class_work[c - 1][task] (the same workload generated from that class's plan),
  // and its copy engines at class_hardware[c - 1]'s bandwidths.
  std::span<const int> hardware_class{};
  const std::vector<std::vector<double>>* class_work = nullptr;
  std::span<const model::HardwareSpec> class_hardware{};
  // Folded fidelity: PP groups simulated besides replica 0 (ascending); see InstanceMap.
  std::vector<int> extra_replicas{};
  // Debug (style.md S9): permute same-time events with this seed; results must not change.
  std::optional<std::uint64_t> shuffle_ties_seed{};
  // If set: (instances finished, instances in all), every kProgressEvery instances and at the end.
  std::function<void(std::int64_t, std::int64_t)> progress{};
  // Links (indices into topology->links()) whose load is recorded into ReplayOutput::link_loads,
  // for the trace's link counters; null or empty: none (and no recording cost).
  const std::vector<std::uint32_t>* watched_links = nullptr;
  // Background traffic beside the step (a checkpoint drain, replay_background.h); null: none.
  const BackgroundEgress* background = nullptr;
};

// The load history of one watched link: bytes/s from t_ns[i] on (0 before the first sample).
struct LinkLoad {
  topology::LinkResource link{};
  int node = 0;  // the node the link belongs to (an NVLink's GPU's node)
  std::vector<std::int64_t> t_ns{};
  std::vector<double> bytes_per_s{};
};
inline constexpr std::uint64_t kProgressEvery = 1 << 16;  // a branch per instance, a call per 65536

struct ReplayOutput {
  explicit ReplayOutput(InstanceMap m) : map(std::move(m)) {}
  InstanceMap map;
  std::vector<std::uint64_t> base{};     // first global instance of each template task
  // End time by global instance; every entry is set when replay() returns (it throws otherwise).
  // Starts are not stored: an instance starts the moment its last predecessor instance ends (at 0
  // without one), so InstanceTimes (analyze.h) derives them; at full fidelity on 16,384 GPUs that
  // saves 1.7 GB.
  ZeroedArray<std::int64_t> end_ns{};
  std::vector<double> peak_bytes{};      // live dynamic memory maximum by rank slot
  std::int64_t step_ns = 0;            // the last task's end
  std::uint64_t events = 0;            // events the queue fired
  std::uint64_t activities = 0;        // engine activities completed
  std::vector<LinkLoad> link_loads{};  // the watched links, in ReplayInput::watched_links order
  BackgroundOutcome background{};      // when ReplayInput::background was given

  [[nodiscard]] std::uint32_t instances(TaskId t) const { return static_cast<std::uint32_t>(base[t + 1] - base[t]); }
};

// Throws std::runtime_error naming up to 8 waiting tasks when the DAG cannot finish (a cycle or a
// dependency that never resolves).
ReplayOutput replay(const ReplayInput& input);

}  // namespace mofasim::executor
