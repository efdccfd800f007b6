// The step simulation's entry point: model + hardware + parallelism + features + topology in, a
// StepResult out (and optionally a Chrome trace). Generates the workload DAG (generate.h) from the
// StepPlan model/ prices (plan_from_model.h), checks it is acyclic (schedules::TaskGraph), replays
// it on the engine (replay.h) and analyses the timeline (analyze.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/spec.h"
#include "schedules/schedule.h"
#include "sim/executor/generate.h"
#include "sim/executor/instance_map.h"
#include "sim/executor/replay_background.h"
#include "sim/executor/step_plan.h"
#include "sim/executor/step_result.h"
#include "sim/executor/trace_filter.h"
#include "sim/perturb/node_hardware.h"
#include "sim/perturb/perturbation.h"
#include "topology/topology_spec.h"

namespace mofasim::executor {

struct SimulationInput {
  model::ModelSpec model{};
  model::HardwareSpec hardware{};
  model::ParallelSpec parallel{};
  model::FeatureSpec features{};
  topology::TopologySpec topology{};
  std::string rank_order = "tp-cp-ep-dp-pp";  // Megatron's default (topology/rank_order.h)
  perturb::PerturbationSpec perturbations{};   // stragglers and degraded links; empty = healthy
  std::vector<perturb::NodeHardware> node_hardware{};  // heterogeneous GPUs; empty = every node `hardware`
};

struct SimulateOptions {
  Fidelity fidelity = Fidelity::kFolded;
  std::optional<std::string> trace_path{};  // write a trace here: Chrome JSON for *.json, else Perfetto (trace.h)
  // What the trace shows (trace_filter.h); null: everything. A pointer keeps SimulateOptions
  // trivially destructible (GCC 12 warns falsely on designated initialisers that skip a vector).
  const TraceFilter* trace_filter = nullptr;
  std::optional<std::string> timeline_path{};  // write a binary proto::Timeline here (timeline_writer.h)
  std::string scenario_name{};  // the name the timeline records
  std::optional<std::uint64_t> shuffle_ties_seed{};  // debug: permute same-time events (style.md S9)
  std::function<void(std::int64_t, std::int64_t)> progress{};  // replay progress (ReplayInput::progress)
  // Fill StepResult::critical_path_tasks. Off by default: at 2,048 GPUs the chain is ~10^5 tasks
  // (about 19 MB of JSON), which scripts asking for the step time should not have to read.
  bool critical_path_tasks = false;
  // Background traffic replayed beside the step (a checkpoint drain, replay_background.h); null:
  // none. StepResult::background reports it.
  const BackgroundEgress* background = nullptr;
};

// One step before its replay: the schedule, the features with MemFine's chunk count resolved, the
// priced plan and the layers at each pipeline position. simulate_step replays it; the Chakra
// writer (sim/interop) expands the very same step, so the two cannot drift apart.
struct PreparedStep {
  schedules::Schedule schedule;
  model::FeatureSpec features;
  StepPlan plan;
  std::vector<LayerRange> position_layers;
};
PreparedStep prepare_step(const SimulationInput& input);

StepResult simulate_step(const SimulationInput& input, const SimulateOptions& options);

// Lower door, for callers that bring their own StepPlan (tests with closed-form costs, the
// analytic model's cross-checks): the same generate / check / replay / analyse pipeline.
struct PlanSimulation {
  const StepPlan* plan = nullptr;
  const schedules::Schedule* schedule = nullptr;
  std::vector<LayerRange> position_layers{};
  model::HardwareSpec hardware{};
  model::ParallelSpec parallel{};
  model::FeatureSpec features{};
  topology::TopologySpec topology{};
  std::string rank_order = "tp-cp-ep-dp-pp";
  double load_imbalance = 1.0;
  perturb::PerturbationSpec perturbations{};
  // Heterogeneous GPUs: entry i's nodes run class_plans[i] (the step priced on its hardware).
  std::vector<perturb::NodeHardware> node_hardware{};
  std::vector<const StepPlan*> class_plans{};
  bool fold_experts = false;  // a MoE model: expert groups from the folded layout with parallel.etp (placement.h)
};
StepResult simulate_plan(const PlanSimulation& input, const SimulateOptions& options);

// Folded replay loads only replica 0's communication groups onto the links (replay.h). That is
// exact only when no link carries two groups of one kind at once: with GPUs sharing a NIC, the
// DP/PP traffic of the other replicas on that NIC would be missing and the step too fast (1-2% at
// 256 GPUs with 2 or 4 NICs per node, and fewer NICs looked faster). For such topologies this
// returns why folding is refused and simulate_step() replays every rank instead; "" = fold.
std::string folding_refusal(const topology::TopologySpec& topology);

// Throws std::runtime_error naming tasks on a cycle (via schedules::TaskGraph) if `w` is not a DAG.
void check_acyclic(const Workload& w);

}  // namespace mofasim::executor
