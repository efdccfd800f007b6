// The checkpoint I/O model bound to a scenario: each GPU's shard (model::checkpoint_bytes_per_gpu
// on its pipeline rank) and the bandwidths on its way to fault_tolerance.checkpoint.storage
// (hardware copy engines, the node's NICs as topology/ prices them, hardware.disk_*_bandwidth
// per node, the tier's aggregate), simulated by fault::simulate_checkpoint_io.
//
// An asynchronous checkpoint's drain is also replayed beside the scenario's own steps
// (executor::simulate_drain): it shares each GPU's NIC rail with the DP/PP/EP traffic, max-min
// fair, so the drain takes longer than on an idle network and the steps it spans take longer too.
#pragma once

#include <optional>

#include "model/fault_spec.h"
#include "sim/executor/replay_drain.h"
#include "sim/fault/checkpoint_io.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {

// Requires fault_tolerance.checkpoint.storage (std::invalid_argument naming it otherwise).
fault::CheckpointIoSpec checkpoint_io_spec(const scenario::LoadedScenario& loaded);

// Sets the policy's save, snapshot and restore times from the simulated I/O: blocking saves
// stall for save_s; async ones for snapshot_s, then drain for drain_s in the background.
void apply_checkpoint_io(const fault::CheckpointIoTimes& io, model::CheckpointPolicy& policy);

// The drain as background traffic of the step: each GPU's shard from host memory through its NIC
// rail, hardware.disk_write_bandwidth per node and the tier's shared write limit, in
// storage.drain_streams flows per GPU starting storage.drain_start after the snapshot.
executor::BackgroundEgress drain_egress(const scenario::LoadedScenario& loaded, const fault::CheckpointIoSpec& io);

struct CheckpointIoResult {
  fault::CheckpointIoTimes idle{};                     // every phase on an idle network
  std::optional<executor::DrainUnderTraining> drain{};  // async: the drain beside the steps
};

// Simulates the checkpoint I/O of a scenario with fault_tolerance.checkpoint.storage; for async
// checkpoints also the drain under training, for at most interval_steps steps (folded fidelity).
CheckpointIoResult simulate_checkpoint(const scenario::LoadedScenario& loaded);

// As above, and for async checkpoints with the drain replayed: save_time_s is the drain under
// training and drain_slowdown_s what it costs the steps it spans.
void apply_checkpoint_io(const CheckpointIoResult& io, model::CheckpointPolicy& policy);

}  // namespace mofasim::cli
