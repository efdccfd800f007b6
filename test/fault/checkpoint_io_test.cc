// Checkpoint I/O on the fluid engine: each phase against a hand-worked time, max-min sharing of
// the storage tier between unequal shards, and bad inputs refused.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/fault/checkpoint_io.h"

namespace mofasim::fault {
namespace {

constexpr double GB = 1e9;

// One node of 8 GPUs with 1 GB each (8 GB), storage 4 GB/s write and 8 GB/s read, nothing else
// limiting: save 8 / 4 = 2 s, drain the same, restore 8 / 8 = 1 s, no PCIe given: no snapshot.
TEST(CheckpointIo, StorageBoundSaveIsTotalOverTheAggregateBandwidth) {
  const CheckpointIoTimes t = simulate_checkpoint_io(
      {.shard_bytes = std::vector<double>(8, 1 * GB), .gpus_per_node = 8, .storage_write = 4 * GB, .storage_read = 8 * GB});
  EXPECT_DOUBLE_EQ(t.total_bytes, 8 * GB);
  EXPECT_NEAR(t.save_s, 2.0, 1e-9);
  EXPECT_NEAR(t.drain_s, 2.0, 1e-9);
  EXPECT_NEAR(t.restore_s, 1.0, 1e-9);
  EXPECT_EQ(t.snapshot_s, 0);
}

// PCIe at 0.5 GB/s per GPU under 100 GB/s storage: each GPU's 1 GB takes 2 s to leave the GPU,
// which is both the blocking save and the async snapshot; the drain from host memory is storage
// bound, 8 GB / 100 GB/s = 80 ms. Restore over 0.25 GB/s H2D: 4 s.
TEST(CheckpointIo, PcieBoundSaveAndTheAsyncSnapshotAndDrain) {
  const CheckpointIoTimes t = simulate_checkpoint_io({.shard_bytes = std::vector<double>(8, 1 * GB), .gpus_per_node = 8,
                                                      .pcie_d2h = 0.5 * GB, .pcie_h2d = 0.25 * GB,
                                                      .storage_write = 100 * GB, .storage_read = 100 * GB});
  EXPECT_NEAR(t.save_s, 2.0, 1e-9);
  EXPECT_NEAR(t.snapshot_s, 2.0, 1e-9);
  EXPECT_NEAR(t.drain_s, 0.08, 1e-9);
  EXPECT_NEAR(t.restore_s, 4.0, 1e-9);
}

// 4 nodes of 2 GPUs, 1 GB each, the node's NICs at 1 GB/s together: 2 GB per node / 1 GB/s = 2 s;
// a per-node storage client limit of 0.5 GB/s takes over: 4 s.
TEST(CheckpointIo, NodeNicAndNodeStorageLimits) {
  CheckpointIoSpec spec{.shard_bytes = std::vector<double>(8, 1 * GB), .gpus_per_node = 2, .node_nic = 1 * GB,
                        .storage_write = 100 * GB, .storage_read = 100 * GB};
  EXPECT_NEAR(simulate_checkpoint_io(spec).save_s, 2.0, 1e-9);
  spec.node_write = 0.5 * GB;
  EXPECT_NEAR(simulate_checkpoint_io(spec).save_s, 4.0, 1e-9);
  EXPECT_NEAR(simulate_checkpoint_io(spec).restore_s, 2.0, 1e-9);  // no read limit per node
}

// Two one-GPU nodes with 1 GB and 3 GB, storage 2 GB/s shared, each node at most 1.5 GB/s. Max-min:
// both flows at 1 GB/s until the small one ends at 1 s; the big one then has 2 GB left at its
// node's 1.5 GB/s: 1 + 2 / 1.5 = 2.333 s (not 4 GB / 2 GB/s = 2 s).
TEST(CheckpointIo, UnequalShardsShareTheStorageTierMaxMinFair) {
  const CheckpointIoTimes t = simulate_checkpoint_io({.shard_bytes = {1 * GB, 3 * GB}, .gpus_per_node = 1,
                                                      .node_write = 1.5 * GB, .storage_write = 2 * GB,
                                                      .storage_read = 2 * GB});
  EXPECT_NEAR(t.save_s, 1.0 + 2.0 / 1.5, 1e-9);
}

// Identical nodes are simulated once with their count as the weight on the storage tier: 3 nodes
// of 2 x 1 GB and one node of 2 x 2 GB, storage 4 GB/s, 1.5 GB/s per node. 8 flows at 0.5 GB/s
// (storage bound) until the 1 GB shards end at 2 s; the two 2 GB shards then have 1 GB each left
// at the node limit, 0.75 GB/s each: 2 + 1 / 0.75 = 3.333 s.
TEST(CheckpointIo, IdenticalNodesFoldIntoOneWeightedFlowExactly) {
  const CheckpointIoTimes t = simulate_checkpoint_io(
      {.shard_bytes = {1 * GB, 1 * GB, 2 * GB, 2 * GB, 1 * GB, 1 * GB, 1 * GB, 1 * GB}, .gpus_per_node = 2,
       .node_write = 1.5 * GB, .storage_write = 4 * GB, .storage_read = 4 * GB});
  EXPECT_NEAR(t.save_s, 2.0 + 1.0 / 0.75, 1e-9);
}

TEST(CheckpointIo, BadInputsAreRefused) {
  EXPECT_THROW(simulate_checkpoint_io({.storage_write = 1, .storage_read = 1}), std::invalid_argument);
  EXPECT_THROW(simulate_checkpoint_io({.shard_bytes = {1, 1, 1}, .gpus_per_node = 2, .storage_write = 1, .storage_read = 1}),
               std::invalid_argument);
  EXPECT_THROW(simulate_checkpoint_io({.shard_bytes = {-1}, .storage_write = 1, .storage_read = 1}), std::invalid_argument);
  EXPECT_THROW(simulate_checkpoint_io({.shard_bytes = {1}, .storage_write = 0, .storage_read = 1}), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::fault
