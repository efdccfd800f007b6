// Heterogeneous GPUs in the step simulation (sim/perturb/node_hardware.h): the per-class work of
// every task, the NVLink capacity of nodes whose entry gives another bandwidth, the memory check
// per GPU against its own capacity, and which hardware the critical path computed on.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "model/spec.h"
#include "sim/executor/analyze.h"
#include "sim/executor/generate.h"
#include "sim/executor/step_result.h"
#include "sim/perturb/node_hardware.h"
#include "sim/perturb/perturbation.h"
#include "topology/placement.h"
#include "topology/topology.h"

namespace mofasim::executor {

struct HardwareClasses {
  std::vector<int> class_by_gpu{};                  // empty: one class
  std::vector<model::HardwareSpec> hardware{};       // class c > 0 at c - 1
  std::vector<std::vector<double>> work{};           // class c > 0 at c - 1, by template task

  [[nodiscard]] bool empty() const { return class_by_gpu.empty(); }
  [[nodiscard]] int of(int gpu) const { return class_by_gpu.empty() ? 0 : class_by_gpu[static_cast<std::size_t>(gpu)]; }
};

// Generates the workload of every class plan (plans[i] priced on entries[i].hardware) with the
// base generation input and keeps the work (time) of each compute and host task. Everything else
// runs from the base workload, so it must match: the tasks and their dependencies, each task's
// place in the step, FLOPs (op shape), bytes moved and memory allocated and freed. Throws
// std::invalid_argument naming the entry, and the first task that differs and how, when it does
// not (it cannot today: one model and layout, priced on two GPUs, differ only in time).
HardwareClasses price_hardware_classes(const std::vector<perturb::NodeHardware>& entries,
                                       std::span<const StepPlan* const> plans, const GenerateInput& base,
                                       const Workload& base_workload, const topology::TopologySpec& topology);

// Multiplies the NVLink capacity fraction of the GPUs of each entry that gives an intra_node
// bandwidth by bandwidth / topology.intra_node.bandwidth (the links exist once per GPU).
void scale_node_links(const std::vector<perturb::NodeHardware>& entries, const topology::Topology& topo,
                      double intra_node_bandwidth, perturb::ResolvedPerturbations& p);

// A stage row's reserved total on `hw` from its static and peak activation bytes
// (model/memory_reserve.h): sets allocated, fragmentation, CUDA context, reserved, peak and capacity.
void set_device_reserve(const model::HardwareSpec& hw, StageMemory& m);

// Memory per stage against the GPU that binds: the class with the least room among the GPUs that
// hold the stage (capacity - reserved total); sets the fields set_device_reserve sets and bound_hardware.
void bind_stage_memory(const HardwareClasses& classes, const model::HardwareSpec& base, const topology::Placement& placement,
                       StageMemory& m);

// The hardware in the job and the seconds of critical-path compute on each (StepResult::hardware).
std::vector<HardwareUse> hardware_use(const HardwareClasses& classes, const model::HardwareSpec& base,
                                      const Workload& w, const InstanceMap& map, const CriticalPath& cp);

}  // namespace mofasim::executor
