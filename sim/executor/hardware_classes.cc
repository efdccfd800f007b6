// Heterogeneous GPUs in the step simulation (see hardware_classes.h).
#include "sim/executor/hardware_classes.h"

#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "model/memory_reserve.h"
#include "sim/executor/trace_labels.h"

namespace mofasim::executor {
namespace {

std::string number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

// What of task t differs between the class's workload and the base one, "" when nothing that must
// match does. Only the time of compute and host tasks is the class's own (the replay takes it from
// HardwareClasses::work); everything else runs from the base workload, so it must be the same:
// the task's place in the step (kind, stream, stage, micro-batch, layer, op), the op's shape (its
// FLOPs), the bytes a collective, P2P or copy moves (every member of a group moves one size), and
// the memory the task allocates and frees (the memory check reads the base workload).
std::string task_mismatch(const Workload& w, const Workload& base, TaskId t) {
  if (w.kind(t) != base.kind(t)) return "task kind";
  if (w.category(t) != base.category(t) || w.stream(t) != base.stream(t) || w.scope(t) != base.scope(t) ||
      w.phase(t) != base.phase(t) || w.collective(t) != base.collective(t) || w.stage(t) != base.stage(t) ||
      w.peer_stage(t) != base.peer_stage(t) || w.chunk(t) != base.chunk(t) || w.microbatch(t) != base.microbatch(t) ||
      w.layer(t) != base.layer(t) || w.op_name(w.op(t)) != base.op_name(base.op(t))) {
    return "place in the step (" + w.describe(t) + ")";
  }
  if (w.flops(t) != base.flops(t)) return "FLOPs (op shape) " + number(w.flops(t)) + " vs " + number(base.flops(t));
  const bool own_time = w.kind(t) == TaskKind::kCompute || w.kind(t) == TaskKind::kHost;
  if (!own_time && w.work(t) != base.work(t)) return "bytes " + number(w.work(t)) + " vs " + number(base.work(t));
  if (w.alloc_bytes(t) != base.alloc_bytes(t) || w.free_bytes(t) != base.free_bytes(t)) {
    return "memory allocated or freed " + number(w.alloc_bytes(t)) + "/" + number(w.free_bytes(t)) + " vs " +
           number(base.alloc_bytes(t)) + "/" + number(base.free_bytes(t));
  }
  return "";
}

bool same_edges(const Workload& w, const Workload& base) {
  if (w.edges() != base.edges()) return false;
  for (std::size_t e = 0; e < w.edges(); ++e) {
    if (w.edge_sources()[e] != base.edge_sources()[e] || w.edge_targets()[e] != base.edge_targets()[e]) return false;
  }
  return true;
}

}  // namespace

HardwareClasses price_hardware_classes(const std::vector<perturb::NodeHardware>& entries,
                                       std::span<const StepPlan* const> plans, const GenerateInput& base,
                                       const Workload& base_workload, const topology::TopologySpec& topology) {
  HardwareClasses c;
  if (entries.empty()) return c;
  if (plans.size() != entries.size()) throw std::invalid_argument("node_hardware: one priced plan per entry is required");
  c.class_by_gpu = perturb::hardware_class_by_gpu(entries, topology);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    GenerateInput in = base;
    in.plan = plans[i];
    const Workload w = generate_workload(in);
    const std::string entry = "topology.node_hardware[" + std::to_string(i) + "].hardware: ";
    if (w.size() != base_workload.size() || !same_edges(w, base_workload)) {
      throw std::invalid_argument(entry + "its step has other tasks than the hardware section's (" +
                                  std::to_string(w.size()) + " vs " + std::to_string(base_workload.size()) +
                                  " tasks, " + std::to_string(w.edges()) + " vs " +
                                  std::to_string(base_workload.edges()) +
                                  " dependencies), so the two cannot run one step together");
    }
    for (TaskId t = 0; t < w.size(); ++t) {
      const std::string what = task_mismatch(w, base_workload, t);
      if (!what.empty()) {
        throw std::invalid_argument(entry + "its step differs from the hardware section's at " +
                                    base_workload.describe(t) + " in its " + what +
                                    ", so the two cannot run one step together");
      }
    }
    std::vector<double> work(w.size());
    for (TaskId t = 0; t < w.size(); ++t) work[t] = w.work(t);
    c.hardware.push_back(entries[i].hardware);
    c.work.push_back(std::move(work));
  }
  return c;
}

void scale_node_links(const std::vector<perturb::NodeHardware>& entries, const topology::Topology& topo,
                      double intra_node_bandwidth, perturb::ResolvedPerturbations& p) {
  for (const perturb::NodeHardware& e : entries) {
    if (!e.intra_node_bandwidth || !(intra_node_bandwidth > 0)) continue;
    const double factor = *e.intra_node_bandwidth / intra_node_bandwidth;
    if (p.link_fraction.empty()) p.link_fraction.assign(topo.links().size(), 1.0);
    for (int n : e.nodes) {
      for (int i = 0; i < topo.gpus_per_node(); ++i) {
        const int gpu = n * topo.gpus_per_node() + i;
        p.link_fraction[topology::index_of(topo.nvlink_tx(gpu))] *= factor;
        p.link_fraction[topology::index_of(topo.nvlink_rx(gpu))] *= factor;
      }
    }
  }
}

void set_device_reserve(const model::HardwareSpec& hw, StageMemory& m) {
  const model::DeviceReserve device = model::device_reserve(hw, m.static_bytes + m.peak_activation_bytes);
  m.allocated_bytes = device.allocated;
  m.fragmentation_bytes = device.fragmentation;
  m.cuda_context_bytes = device.cuda_context;
  m.reserved_bytes = device.other;
  m.peak_bytes = device.total();
  m.capacity_bytes = hw.gpu_memory_bytes;
}

void bind_stage_memory(const HardwareClasses& classes, const model::HardwareSpec& base, const topology::Placement& placement,
                       StageMemory& m) {
  const auto hw = [&](int cls) -> const model::HardwareSpec& {
    return cls == 0 ? base : classes.hardware[static_cast<std::size_t>(cls - 1)];
  };
  const int replicas = placement.group_count(topology::GroupKind::kPp);
  std::vector<char> present(classes.hardware.size() + 1, 0);
  for (int g = 0; g < replicas; ++g) {
    present[static_cast<std::size_t>(classes.of(placement.members(topology::GroupKind::kPp, g)[static_cast<std::size_t>(m.stage)]))] = 1;
  }
  double least_room = std::numeric_limits<double>::infinity();
  for (std::size_t cls = 0; cls < present.size(); ++cls) {
    if (present[cls] == 0) continue;
    const model::HardwareSpec& h = hw(static_cast<int>(cls));
    // Each class its own context, allocator and buffers: the reserved total differs by class.
    const double room = h.gpu_memory_bytes - model::device_reserve(h, m.static_bytes + m.peak_activation_bytes).total();
    if (room < least_room) {
      least_room = room;
      set_device_reserve(h, m);
      m.bound_hardware = h.name;
    }
  }
}

std::vector<HardwareUse> hardware_use(const HardwareClasses& classes, const model::HardwareSpec& base,
                                      const Workload& w, const InstanceMap& map, const CriticalPath& cp) {
  std::vector<HardwareUse> use(classes.hardware.size() + 1);
  use[0].name = base.name;
  for (std::size_t i = 0; i < classes.hardware.size(); ++i) use[i + 1].name = classes.hardware[i].name;
  for (int cls : classes.class_by_gpu) ++use[static_cast<std::size_t>(cls)].gpus;
  for (const CriticalStep& step : cp.steps) {
    if (w.kind(step.task) != TaskKind::kCompute) continue;
    const int rank = instance_rank(w, map, step.task, step.inst);
    use[static_cast<std::size_t>(classes.of(rank))].critical_path_compute_s +=
        static_cast<double>(step.end_ns - step.start_ns) * 1e-9;
  }
  return use;
}

}  // namespace mofasim::executor
