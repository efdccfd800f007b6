// The checkpoint I/O model bound to a scenario: each GPU's shard (model::checkpoint_bytes_per_gpu
// on its pipeline rank) and the bandwidths on its way to fault_tolerance.checkpoint.storage
// (hardware copy engines, the node's NICs as topology/ prices them, hardware.disk_*_bandwidth
// per node, the tier's aggregate), simulated by fault::simulate_checkpoint_io.
#pragma once

#include "model/fault_spec.h"
#include "sim/fault/checkpoint_io.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {

// Requires fault_tolerance.checkpoint.storage (std::invalid_argument naming it otherwise).
fault::CheckpointIoSpec checkpoint_io_spec(const scenario::LoadedScenario& loaded);

// Sets the policy's save, snapshot and restore times from the simulated I/O: blocking saves
// stall for save_s; async ones for snapshot_s, then drain for drain_s in the background.
void apply_checkpoint_io(const fault::CheckpointIoTimes& io, model::CheckpointPolicy& policy);

}  // namespace mofasim::cli
