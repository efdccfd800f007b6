#include "sim/fault/checkpoint_io.h"

#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/fluid_model.h"

namespace mofasim::fault {
namespace {

// Nodes by the shard sizes of their GPUs (local order), with how many nodes share them.
using NodeClasses = std::map<std::vector<double>, int>;

NodeClasses node_classes(const CheckpointIoSpec& spec) {
  NodeClasses classes;
  const auto per_node = static_cast<std::size_t>(spec.gpus_per_node);
  for (std::size_t first = 0; first < spec.shard_bytes.size(); first += per_node) {
    const std::vector<double> shards(spec.shard_bytes.begin() + static_cast<std::ptrdiff_t>(first),
                                     spec.shard_bytes.begin() + static_cast<std::ptrdiff_t>(first + per_node));
    ++classes[shards];
  }
  return classes;
}

// The bandwidths one phase's flows cross; 0 = that stage is not on the path (or not a limit).
struct PhasePath {
  double pcie = 0;
  double nic = 0;
  double node = 0;
  double storage = 0;
};

// Simulated seconds until every GPU's shard has crossed `path`, flows max-min fair.
double run_phase(const NodeClasses& classes, const PhasePath& path) {
  sim::EventQueue queue;
  sim::FluidModel fluid(queue);
  std::optional<sim::ResourceId> storage;
  if (path.storage > 0) storage = fluid.add_resource({.name = "storage", .capacity = path.storage});
  std::vector<sim::ResourceUse> uses;
  for (const auto& [shards, count] : classes) {
    std::optional<sim::ResourceId> nic;
    std::optional<sim::ResourceId> node;
    if (path.nic > 0) nic = fluid.add_resource({.name = "nic", .capacity = path.nic});
    if (path.node > 0) node = fluid.add_resource({.name = "node", .capacity = path.node});
    for (double bytes : shards) {
      if (bytes <= 0) continue;
      uses.clear();
      if (path.pcie > 0) uses.push_back({.resource = fluid.add_resource({.name = "pcie", .capacity = path.pcie})});
      if (nic) uses.push_back({.resource = *nic});
      if (node) uses.push_back({.resource = *node});
      // `count` identical nodes each send this flow: weight count on the one shared resource.
      if (storage) uses.push_back({.resource = *storage, .weight = static_cast<double>(count)});
      if (uses.empty()) continue;  // nothing limits it: instantaneous
      fluid.start({.work = bytes, .uses = uses, .kind = sim::ActivityKind::kCommunication}, [] {});
    }
  }
  queue.run();
  return static_cast<double>(queue.now().time_since_epoch().count()) * 1e-9;
}

void check(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("checkpoint I/O: " + message);
}

bool non_negative(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace

CheckpointIoTimes simulate_checkpoint_io(const CheckpointIoSpec& spec) {
  check(!spec.shard_bytes.empty(), "no GPUs");
  check(spec.gpus_per_node >= 1 && spec.shard_bytes.size() % static_cast<std::size_t>(spec.gpus_per_node) == 0,
        "gpus_per_node must be >= 1 and divide the GPU count");
  CheckpointIoTimes t;
  for (double b : spec.shard_bytes) {
    check(non_negative(b), "a shard size must be a finite number >= 0");
    t.total_bytes += b;
  }
  for (double bw : {spec.pcie_d2h, spec.pcie_h2d, spec.node_nic, spec.node_write, spec.node_read}) {
    check(non_negative(bw), "a bandwidth must be a finite number >= 0");
  }
  check(std::isfinite(spec.storage_write) && spec.storage_write > 0, "storage write bandwidth must be > 0");
  check(std::isfinite(spec.storage_read) && spec.storage_read > 0, "storage read bandwidth must be > 0");
  const NodeClasses classes = node_classes(spec);
  t.save_s = run_phase(classes, {.pcie = spec.pcie_d2h, .nic = spec.node_nic, .node = spec.node_write,
                                 .storage = spec.storage_write});
  t.snapshot_s = run_phase(classes, {.pcie = spec.pcie_d2h});
  t.drain_s = run_phase(classes, {.nic = spec.node_nic, .node = spec.node_write, .storage = spec.storage_write});
  t.restore_s = run_phase(classes, {.pcie = spec.pcie_h2d, .nic = spec.node_nic, .node = spec.node_read,
                                    .storage = spec.storage_read});
  return t;
}

}  // namespace mofasim::fault
