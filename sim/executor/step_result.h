// StepResult: what a replayed training step reports — step time, a MoFa-Table-6-style breakdown,
// throughput (TFLOPS/GPU, MFU, HFU, tokens/s), memory per stage, the critical path by category,
// and engine counters — with its JSON and human-table renderings.
//
// Breakdown ("exposed" time). Take the critical stage's timeline (the stage with the least idle
// time; ties: the lowest stage; in full fidelity its replica-0 rank). Every instant of [0, step]
// is attributed to exactly one category, by the first rule that holds:
//   compute (a forward/backward compute task runs) > recompute > optimizer (update or its copies)
//   > TP > CP > EP > PP comm > DP > offload (that kind of communication runs, no compute does)
//   > PP bubble (nothing of this rank runs).
// So "exposed TP" is the time TP communication runs while no compute runs, and the parts sum to
// the step time. Communication hidden under compute counts as compute.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/executor/instance_map.h"
#include "sim/executor/replay_background.h"
#include "sim/executor/task.h"

namespace mofasim::executor {

struct Breakdown {
  double compute = 0;
  double recompute = 0;
  double optimizer = 0;
  double tp = 0;
  double cp = 0;
  double ep = 0;
  double pp_comm = 0;
  double dp = 0;
  double offload = 0;
  double pp_bubble = 0;
  [[nodiscard]] double total() const {
    return compute + recompute + optimizer + tp + cp + ep + pp_comm + dp + offload + pp_bubble;
  }
};

struct StageMemory {
  int stage = 0;
  double static_bytes = 0;             // weights + grads + optimizer state (memory model)
  double peak_activation_bytes = 0;    // live maximum tracked during replay
  double model_activation_bytes = 0;   // the memory model's M_act for this stage (the check)
  double allocated_bytes = 0;          // static + peak activation (max_memory_allocated)
  double fragmentation_bytes = 0;      // the allocator's reserve beyond it (model/memory_reserve.h)
  double cuda_context_bytes = 0;
  double reserved_bytes = 0;           // hardware.memory_reserved
  double peak_bytes = 0;               // the reserved total: allocated + fragmentation + context + reserved
  double capacity_bytes = 0;
  std::string bound_hardware{};        // heterogeneous GPUs: the GPU with the least room holding the stage
  // The pipeline stages this row's rank holds under DualPipe (rank i runs stage i and its mirror
  // p-1-i, and `stage` is then the rank), as `mofasim memory` lists them; empty otherwise.
  std::vector<int> stages_held{};
  [[nodiscard]] bool fits() const { return capacity_bytes <= 0 || peak_bytes <= capacity_bytes; }
};

// One task instance on the critical path (analyze.h), as `simulate --json` lists it.
struct CriticalTask {
  std::string name;    // "F mb 3 L12 attention" (trace_labels.h)
  int stage = 0;
  int rank = 0;        // the rank that runs it (a group task: its first simulated member)
  double start_s = 0;
  double duration_s = 0;
};

// What one perturbation (sim/perturb) costs: the step simulated with it alone against the healthy
// step, and how long the critical path of that run spends on the GPUs it touches.
struct PerturbationCost {
  std::string name;
  double step_time_s = 0;       // the step with only this perturbation
  double cost_s = 0;            // step_time_s - healthy step
  double critical_path_s = 0;   // critical-path seconds on its GPUs (0: off the critical path)
};

// Heterogeneous GPUs: one hardware class of the job and the critical path's compute on it.
struct HardwareUse {
  std::string name;
  int gpus = 0;
  double critical_path_compute_s = 0;
};

struct StepResult {
  Fidelity fidelity = Fidelity::kFolded;  // the fidelity replayed (full when folding was refused)
  std::string fidelity_note{};            // why folded was asked for and full replayed; else empty
  int gpus = 0;
  int simulated_ranks = 0;
  double step_time_s = 0;
  int critical_stage = 0;
  Breakdown breakdown{};  // seconds on the critical stage; sums to step_time_s
  double tflops_per_gpu = 0;  // model FLOPs / (step * gpus) / 1e12   (MoFa(15))
  double mfu = 0;             // tflops_per_gpu / peak
  double hfu = 0;             // hardware FLOPs (with recompute) / (step * gpus * peak)
  double tokens_per_s = 0;
  std::vector<StageMemory> memory{};
  double peak_memory_bytes = 0;  // max over stages
  // Share of the critical path's length per category: sums to 1.
  std::array<double, kCategoryCount> critical_path_share{};
  std::vector<CriticalTask> critical_path_tasks{};  // the critical path, first task first
  // Perturbed runs only: critical-path seconds on perturbed GPUs, and (add_perturbation_costs)
  // the healthy step and what each perturbation costs alone.
  double critical_path_perturbed_s = 0;
  std::optional<double> healthy_step_time_s{};
  std::vector<PerturbationCost> perturbation_costs{};
  std::optional<BackgroundOutcome> background{};  // SimulateOptions::background given
  // Heterogeneous GPUs only (topology.node_hardware): every hardware class, the scenario's first;
  // the step is bound by the one with the most critical-path compute.
  std::vector<HardwareUse> hardware{};
  std::uint64_t events = 0;
  std::uint64_t tasks = 0;      // template tasks (one replica)
  std::uint64_t instances = 0;  // simulated task instances
};

// Keys: step_time_s, tflops_per_gpu, mfu, hfu, tokens_per_s, breakdown{compute_s, ...},
// peak_memory_bytes, memory[...], critical_path{category: share},
// critical_path_tasks[{task, stage, rank, start_s, duration_s}], events, tasks, instances,
// fidelity, gpus, critical_stage; perturbed runs add perturbations{healthy_step_time_s, cost_s,
// critical_path_s, each[{name, step_time_s, cost_s, critical_path_s, on_critical_path}]};
// heterogeneous GPUs add hardware{bound_by, each[{name, gpus, critical_path_compute_s}]} and
// memory[...].bound_by.
nlohmann::json to_json(const StepResult& r);
std::string to_table(const StepResult& r);

}  // namespace mofasim::executor
