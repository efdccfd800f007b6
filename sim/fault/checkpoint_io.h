// Checkpoint I/O as traffic: save, snapshot, drain and restore times simulated on the fluid engine
// (max-min sharing) from each GPU's shard and the bandwidths on its way to storage.
//
// Every GPU moves its shard at once. The path of one GPU's bytes, with the resources it shares:
//   save (blocking)  PCIe D2H of the GPU -> its node's NICs -> its node's storage client limit
//                    -> the storage tier's aggregate write bandwidth (shared by every node);
//   snapshot (async) PCIe D2H only: the training stall of an asynchronous checkpoint;
//   drain (async)    host memory -> NICs -> node limit -> storage: the background write;
//   restore          storage read -> node read limit -> NICs -> PCIe H2D.
// A flow streams through its whole path at one rate (cut-through), the max-min fair share of
// the tightest resource, so a phase ends when the last GPU's shard has moved. A bandwidth of 0
// means that stage is not a limit (a node without a NIC limit given).
//
// Nodes that hold the same shard sizes behave identically, so each distinct node is simulated
// once with its weight on the shared storage resource equal to how many such nodes there are
// (progressive filling gives k identical flows the rate one flow of weight k gets), which keeps a
// 16,384-GPU save to a few dozen flows.
//
// Here the drain is timed on an idle network; sim/executor/replay_drain.h replays it beside the
// step's own traffic on the NICs (what the fault model uses for async checkpoints). Not
// modelled: stragglers in the storage tier.
#pragma once

#include <vector>

namespace mofasim::fault {

struct CheckpointIoSpec {
  std::vector<double> shard_bytes{};  // by GPU (GPU g on node g / gpus_per_node)
  int gpus_per_node = 1;
  double pcie_d2h = 0;       // bytes/s per GPU (0: no limit)
  double pcie_h2d = 0;       // bytes/s per GPU (0: no limit)
  double node_nic = 0;       // bytes/s per node per direction, all its NICs together (0: no limit)
  double node_write = 0;     // bytes/s per node into storage (0: no limit)
  double node_read = 0;      // bytes/s per node from storage (0: no limit)
  double storage_write = 0;  // bytes/s, all nodes together (> 0)
  double storage_read = 0;   // bytes/s, all nodes together (> 0)
};

struct CheckpointIoTimes {
  double total_bytes = 0;  // one checkpoint
  double save_s = 0;       // blocking save: GPU memory to storage
  double snapshot_s = 0;   // async: GPU memory to host memory (the stall)
  double drain_s = 0;      // async: host memory to storage (in the background)
  double restore_s = 0;    // storage to GPU memory
};

// Throws std::invalid_argument on an empty shard list, a negative or non-finite size or
// bandwidth, gpus_per_node < 1 or a GPU count it does not divide, or a storage bandwidth <= 0.
CheckpointIoTimes simulate_checkpoint_io(const CheckpointIoSpec& spec);

}  // namespace mofasim::fault
