// The step simulation's entry point: model + hardware + parallelism + features + topology in, a
// StepResult out (and optionally a Chrome trace). Generates the workload DAG (generate.h) from the
// StepPlan model/ prices (plan_from_model.h), checks it is acyclic (schedules::TaskGraph), replays
// it on the engine (replay.h) and analyses the timeline (analyze.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/spec.h"
#include "schedules/schedule.h"
#include "sim/executor/generate.h"
#include "sim/executor/instance_map.h"
#include "sim/executor/step_plan.h"
#include "sim/executor/step_result.h"
#include "sim/executor/trace_filter.h"
#include "topology/topology_spec.h"

namespace mofasim::executor {

struct SimulationInput {
  model::ModelSpec model{};
  model::HardwareSpec hardware{};
  model::ParallelSpec parallel{};
  model::FeatureSpec features{};
  topology::TopologySpec topology{};
  std::string rank_order = "tp-cp-ep-dp-pp";  // Megatron's default (topology/rank_order.h)
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
  // Fill StepResult::critical_path_tasks. Off by default: at 2,048 GPUs the chain is ~10^5 tasks
  // (about 19 MB of JSON), which scripts asking for the step time should not have to read.
  bool critical_path_tasks = false;
};

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
};
StepResult simulate_plan(const PlanSimulation& input, const SimulateOptions& options);

// Throws std::runtime_error naming tasks on a cycle (via schedules::TaskGraph) if `w` is not a DAG.
void check_acyclic(const Workload& w);

}  // namespace mofasim::executor
