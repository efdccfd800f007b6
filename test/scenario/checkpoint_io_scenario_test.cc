// The checkpoint I/O model bound to a scenario: the shards add up to the model state, the save
// and restore times follow from the storage tier, and they reach the fault model (ETTR, the
// optimal interval, the downtime per failure).
#include <gtest/gtest.h>

#include <string>

#include "model/checkpoint_shard.h"
#include "model/fault_analytic.h"
#include "model/params.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/scenario_specs.h"
#include "sim/scenario/scenario_specs_checkpoint.h"

namespace mofasim::cli {
namespace {

// 8 GPUs on one node (tp 2, pp 2, dp 2), no copy-engine or per-node storage limit: the storage
// tier's aggregate bandwidth is the only limit.
std::string scenario(const std::string& storage) {
  return "model: {num_layers: 4, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, ffn_hidden_size: 1024, "
         "vocab_size: 1000, seq_length: 128}\n"
         "hardware: {peak_bf16: \"989 TFLOPS\", gpu_memory: \"80 GiB\", hbm_bandwidth: \"3.35 TB/s\"}\n"
         "topology: {gpus: 8, intra_node: {bandwidth: \"400 GB/s\"}, inter_node: {bandwidth: \"50 GB/s\"}}\n"
         "parallelism: {tp: 2, pp: 2, dp: 2, global_batch: 16}\n"
         "fault_tolerance: {node_failure_rate_per_day: 5, checkpoint: {interval_steps: 100, storage: {write_bandwidth: \"" +
         storage + "\"}}}\n"
         "training: {steps: 100000}\n";
}

TEST(CheckpointIoScenario, ShardsAddUpToFourteenBytesPerParameter) {
  const scenario::LoadedScenario loaded = scenario::load_scenario_from_string(scenario("1 GB/s"), "io.yaml");
  const fault::CheckpointIoSpec spec = checkpoint_io_spec(loaded);
  ASSERT_EQ(spec.shard_bytes.size(), 8U);
  double total = 0;
  for (double b : spec.shard_bytes) total += b;
  // bf16 weight 2 + fp32 master 4 + fp32 Adam m and v 8 = 14 bytes per parameter, each parameter once.
  EXPECT_NEAR(total, 14 * model::model_params(loaded.model).total(), 1e-6 * total);
  EXPECT_DOUBLE_EQ(spec.storage_read, 1e9);  // read defaults to write
}

TEST(CheckpointIoScenario, SaveAndRestoreTimesComeFromTheStorageTierAndFeedEttr) {
  const scenario::LoadedScenario slow = scenario::load_scenario_from_string(scenario("1 GB/s"), "io.yaml");
  const scenario::LoadedScenario fast = scenario::load_scenario_from_string(scenario("1000 GB/s"), "io.yaml");
  const double bytes = 14 * model::model_params(slow.model).total();
  const model::FaultSpec a = to_fault_spec(slow);
  const model::FaultSpec b = to_fault_spec(fast);
  EXPECT_NEAR(a.checkpoint.save_time_s, bytes / 1e9, 1e-9);
  EXPECT_NEAR(a.checkpoint.restore_time_s, bytes / 1e9, 1e-9);
  // At 1000 GB/s the node's NICs bind instead: 8 GPUs x 50 GB/s = 400 GB/s.
  EXPECT_NEAR(b.checkpoint.save_time_s, bytes / 400e9, 1e-9);
  // The restore joins every recovery: D = MTTR of the default mix (MoFa(41)) + restore.
  EXPECT_NEAR(model::downtime_per_failure_s(a), model::mttr_s(model::mofa_default_failure_classes()) + bytes / 1e9, 1e-9);
  const model::RunSpec run{.step_time_s = 1.0, .n_steps = 100000};
  const model::FaultAnalyticResult ra = model::analytic_e2e(a, run);
  const model::FaultAnalyticResult rb = model::analytic_e2e(b, run);
  EXPECT_NEAR(ra.checkpoint_s, 1000 * bytes / 1e9, 1e-6);  // 100000 / 100 saves
  EXPECT_LT(ra.ettr, rb.ettr);
  EXPECT_GT(model::optimal_interval(a, run).exact_real, model::optimal_interval(b, run).exact_real);
}

TEST(CheckpointIoScenario, AsyncStallsForTheSnapshotAndDrainsTheRest) {
  std::string text = scenario("1 GB/s");
  text.replace(text.find("hardware: {"), 11, "hardware: {d2h_bandwidth: \"10 GB/s\", ");
  text.replace(text.find("checkpoint: {"), 13, "checkpoint: {mode: async, ");
  const scenario::LoadedScenario loaded = scenario::load_scenario_from_string(text, "io.yaml");
  const model::FaultSpec spec = to_fault_spec(loaded);
  const fault::CheckpointIoSpec io = checkpoint_io_spec(loaded);
  double largest = 0;
  double total = 0;
  for (double b : io.shard_bytes) {
    largest = std::max(largest, b);
    total += b;
  }
  EXPECT_NEAR(spec.checkpoint.snapshot_time_s, largest / 10e9, 1e-9);  // each GPU's own PCIe
  EXPECT_NEAR(spec.checkpoint.save_time_s, total / 1e9, 1e-9);        // the drain, storage bound
}

// Two nodes of 4 GPUs (tp 2, dp 4): every DP all-reduce crosses the 1 GB/s NICs, so an async
// drain through the same NICs contends with it. The fault model takes the drain under training
// (longer than on an idle network) as the write time, and charges the snapshot plus the steps'
// slowdown per checkpoint (executor/drain_replay_test works the max-min numbers by hand).
TEST(CheckpointIoScenario, AsyncDrainUnderTrainingFeedsTheFaultModel) {
  const std::string text =
      "model: {num_layers: 4, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, ffn_hidden_size: 1024, "
      "vocab_size: 1000, seq_length: 128}\n"
      "hardware: {peak_bf16: \"989 TFLOPS\", gpu_memory: \"80 GiB\", hbm_bandwidth: \"3.35 TB/s\", d2h_bandwidth: \"10 GB/s\"}\n"
      "topology: {gpus: 8, gpus_per_node: 4, intra_node: {bandwidth: \"400 GB/s\"}, inter_node: {bandwidth: \"1 GB/s\"}}\n"
      "parallelism: {tp: 2, dp: 4, global_batch: 16}\n"
      "fault_tolerance: {node_failure_rate_per_day: 5, checkpoint: {interval_steps: 100, mode: async, "
      "storage: {write_bandwidth: \"1000 GB/s\"}}}\n"
      "training: {steps: 100000}\n";
  const scenario::LoadedScenario loaded = scenario::load_scenario_from_string(text, "io.yaml");
  const CheckpointIoResult io = simulate_checkpoint(loaded);
  ASSERT_TRUE(io.drain.has_value());
  const executor::DrainUnderTraining& d = *io.drain;
  // Alone, each GPU's shard leaves at its NIC rail's 1 GB/s (the tier's 1000 GB/s is no limit).
  const fault::CheckpointIoSpec spec = checkpoint_io_spec(loaded);
  EXPECT_NEAR(io.idle.drain_s, spec.shard_bytes[0] / 1e9, 1e-9);
  EXPECT_GT(d.drain_s, io.idle.drain_s);          // beside the all-reduces it takes longer
  EXPECT_GT(d.first_step_s, d.healthy_step_s);  // and the step it runs in too
  EXPECT_GT(d.slowdown_s, 0);
  const model::FaultSpec f = to_fault_spec(loaded, io);
  EXPECT_DOUBLE_EQ(f.checkpoint.save_time_s, d.drain_s);
  EXPECT_DOUBLE_EQ(f.checkpoint.drain_slowdown_s, d.slowdown_s);
  EXPECT_DOUBLE_EQ(f.checkpoint.snapshot_time_s, io.idle.snapshot_s);
  // The closed form charges snapshot + slowdown once per checkpoint: 100000 / 100 of them.
  const model::RunSpec run{.step_time_s = d.healthy_step_s, .n_steps = 100000};
  EXPECT_NEAR(model::analytic_e2e(f, run).checkpoint_s, 1000 * (io.idle.snapshot_s + d.slowdown_s), 1e-9);
  // The same scenario with the drain ignored (slowdown 0) has a higher ETTR and a shorter interval.
  model::FaultSpec idle = f;
  idle.checkpoint.drain_slowdown_s = 0;
  EXPECT_GT(model::analytic_e2e(idle, run).ettr, model::analytic_e2e(f, run).ettr);
  EXPECT_LT(model::optimal_interval(idle, run).exact_real, model::optimal_interval(f, run).exact_real);
}

}  // namespace
}  // namespace mofasim::cli
