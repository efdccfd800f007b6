// The bindings from a loaded Scenario to the plain specs of topology/ and the fault model, and the
// per-stage in-flight micro-batches of the scenario's schedule (what the memory model needs).
// sim/scenario/to_spec.h covers model, hardware, parallelism and features; this file covers the
// rest so every command builds its inputs the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "model/fault_spec.h"
#include "model/spec.h"
#include "proto/scenario.pb.h"
#include "sim/scenario/loader.h"
#include "model/analytic_model.h"
#include "sim/executor/simulate_step.h"
#include "topology/placement.h"
#include "topology/topology_spec.h"

namespace mofasim::cli {

struct CheckpointIoResult;  // scenario_specs_checkpoint.h

// topology.* with bandwidth_scale 1: mu_b (MoFa(18)) travels in FeatureSpec::bandwidth_scale, which
// both the step simulation and the analytic model apply (applying it here too would count it twice).
topology::TopologySpec to_topology_spec(const proto::Scenario& scenario);

// The scenario's rank placement: its layout (expert TP for an MoE model) in its rank order.
topology::Placement scenario_placement(const scenario::LoadedScenario& loaded);

// fault_tolerance.* with the failure-unit count from topology.gpus; a failure_records CSV (a path
// relative to the scenario file's folder) is fitted here, its records taken as recorded on a
// cluster of this scenario's size. Throws std::invalid_argument when the scenario has no
// fault_tolerance section.
// With fault_tolerance.checkpoint.storage the checkpoint times are simulated (scenario_specs_checkpoint.h),
// an async drain beside the scenario's own steps included.
model::FaultSpec to_fault_spec(const scenario::LoadedScenario& loaded);
// The same with the checkpoint I/O already simulated (simulate_checkpoint), to report and use one run.
model::FaultSpec to_fault_spec(const scenario::LoadedScenario& loaded, const CheckpointIoResult& io);

// Runs the validators of the layer specs that the loader's own rules do not cover (e.g. topology's
// supernode shape) and turns their std::invalid_argument into a ScenarioError located at the field
// the message names ("topology.nodes_per_supernode: ..." -> file:line:col of that field), so every
// bad scenario exits 2 with a file:line error. `with_faults` also checks fault_tolerance.
void check_scenario_specs(const scenario::LoadedScenario& loaded, bool with_faults = false);

// load_scenario + check_scenario_specs: what every command uses to read its scenario.
scenario::LoadedScenario load_checked(const std::string& path, const std::vector<std::string>& overrides,
                                      bool with_faults = false);

// Everything the step simulation needs, from one loaded scenario.
executor::SimulationInput simulation_input(const scenario::LoadedScenario& loaded);

// Throws a located ScenarioError when the scenario mixes GPUs (topology.node_hardware): `what`
// (the analytic model, tune's search) prices one GPU for every rank.
void refuse_node_hardware(const scenario::LoadedScenario& loaded, const std::string& what);

// Everything the analytic MoFa model needs, from one loaded scenario (refused for mixed GPUs).
model::AnalyticInput analytic_input(const scenario::LoadedScenario& loaded);

}  // namespace mofasim::cli
