#include "sim/scenario/scenario_specs_checkpoint.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "model/checkpoint_shard.h"
#include "sim/executor/simulate_step.h"
#include "sim/scenario/scenario_specs.h"
#include "topology/placement.h"
#include "topology/rank_order.h"

namespace mofasim::cli {

fault::CheckpointIoSpec checkpoint_io_spec(const scenario::LoadedScenario& loaded) {
  const proto::Scenario& s = loaded.proto;
  if (!s.fault_tolerance().checkpoint().has_storage()) {
    throw std::invalid_argument("fault_tolerance.checkpoint.storage: missing (required by the checkpoint I/O model)");
  }
  const proto::CheckpointStorage& storage = s.fault_tolerance().checkpoint().storage();
  const model::ParallelSpec& par = loaded.parallel;
  const topology::Placement placement = scenario_placement(loaded);
  std::vector<double> by_stage(static_cast<std::size_t>(par.pp));
  for (int stage = 0; stage < par.pp; ++stage) {
    by_stage[static_cast<std::size_t>(stage)] =
        model::checkpoint_bytes_per_gpu(loaded.model, par, loaded.features, stage);
  }
  fault::CheckpointIoSpec spec;
  spec.shard_bytes.resize(static_cast<std::size_t>(placement.world_size()));
  for (int g = 0; g < placement.world_size(); ++g) {
    spec.shard_bytes[static_cast<std::size_t>(g)] =
        by_stage[static_cast<std::size_t>(placement.coordinate(topology::ParallelDim::kPp, g))];
  }
  const proto::Topology& t = s.topology();
  // A node smaller than gpus_per_node (one partial node) still sends through one node's NICs.
  spec.gpus_per_node = std::min(t.gpus_per_node(), placement.world_size());
  spec.pcie_d2h = loaded.hardware.d2h_bandwidth;
  spec.pcie_h2d = loaded.hardware.h2d_bandwidth;
  // The node's NICs together, as topology/ prices its scale-out links: per GPU bandwidth times
  // the node's GPUs, times the decay gamma (MoFa(3)) and mu_b (MoFa(18)).
  spec.node_nic = t.inter_node().bandwidth() * spec.gpus_per_node * t.bandwidth_decay() * loaded.features.bandwidth_scale;
  spec.node_write = loaded.hardware.disk_write_bandwidth;
  spec.node_read = loaded.hardware.disk_read_bandwidth;
  spec.storage_write = storage.write_bandwidth();
  spec.storage_read = storage.has_read_bandwidth() ? storage.read_bandwidth() : storage.write_bandwidth();
  return spec;
}

void apply_checkpoint_io(const fault::CheckpointIoTimes& io, model::CheckpointPolicy& policy) {
  if (policy.mode == model::CheckpointMode::kAsync) {
    policy.snapshot_time_s = io.snapshot_s;
    policy.save_time_s = io.drain_s;
  } else {
    policy.snapshot_time_s = 0;
    policy.save_time_s = io.save_s;
  }
  policy.restore_time_s = io.restore_s;
}

executor::BackgroundEgress drain_egress(const scenario::LoadedScenario& loaded, const fault::CheckpointIoSpec& io) {
  const proto::CheckpointStorage& storage = loaded.proto.fault_tolerance().checkpoint().storage();
  return {.bytes_by_gpu = io.shard_bytes,
          .streams = storage.drain_streams(),
          .start_s = storage.drain_start(),
          .node_limit = io.node_write,
          .shared_limit = io.storage_write};
}

CheckpointIoResult simulate_checkpoint(const scenario::LoadedScenario& loaded) {
  const fault::CheckpointIoSpec spec = checkpoint_io_spec(loaded);
  CheckpointIoResult r{.idle = fault::simulate_checkpoint_io(spec)};
  const proto::Checkpoint& c = loaded.proto.fault_tolerance().checkpoint();
  if (c.mode() == proto::ASYNC) {
    const executor::SimulationInput input = simulation_input(loaded);
    r.drain = executor::simulate_drain(
        [&](const executor::SimulateOptions& o) { return executor::simulate_step(input, o); },
        executor::SimulateOptions{}, drain_egress(loaded, spec), c.interval_steps());
  }
  return r;
}

void apply_checkpoint_io(const CheckpointIoResult& io, model::CheckpointPolicy& policy) {
  apply_checkpoint_io(io.idle, policy);
  if (io.drain && policy.mode == model::CheckpointMode::kAsync) {
    policy.save_time_s = io.drain->drain_s;
    // Max-min sharing is not monotone: a drain that slows one flow can free a link for another,
    // so a step beside it can come out a hair faster. A checkpoint's cost is never negative.
    policy.drain_slowdown_s = std::max(0.0, io.drain->slowdown_s);
  }
}

}  // namespace mofasim::cli
