// The two step models on HSDP and on the CP exchange types. HSDP (num_distributed_optimizer_instances):
// tiny-llama over dp 8 on two nodes of 4 GPUs cut into 2 instances, so each shard group is one
// node and each replica group one GPU per node. The plan prices the reduce-scatter within the node and the all-reduce of the
// shard across nodes; the replay runs the same two collectives per bucket. ZeRO-1 and ZeRO-2 are
// exact between the closed form and the replay, and the folded replay (one pipeline replica,
// its groups costed as the real ones) equals the full one.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "sim/analysis/compare.h"
#include "test/support/validate_text.h"

namespace mofasim::analysis {
namespace {

std::string yaml(const std::string& sharding, int instances) {
  return std::string(R"(name: hsdp-contract
model: { preset: tiny-llama, seq_length: 1024 }
hardware: { preset: h100-sxm, peak_bf16: "10 TFLOPS", hbm_bandwidth: "100 GB/s" }
topology: { gpus: 8, gpus_per_node: 4, intra_node: { bandwidth: "10 GB/s", latency: "5 us" }, inter_node: { bandwidth: "1 GB/s", latency: "20 us" } }
parallelism: { tp: 1, cp: 1, pp: 1, dp: 8, micro_batch: 1, global_batch: 16, schedule: 1f1b }
optimizations: { overlap_interference: false, optimizer: { placement: gpu, data_parallel_sharding_strategy: )") +
         sharding + ", num_distributed_optimizer_instances: " + std::to_string(instances) + " } }\n";
}

ValidationReport run(const std::string& sharding, int instances, executor::Fidelity fidelity) {
  return test::validate_text(yaml(sharding, instances), "hsdp-contract", fidelity);
}

TEST(HsdpContract, ClosedFormAndReplayAgreeAndFoldingIsExact) {
  for (const char* sharding : {"optim", "optim_grads"}) {
    const ValidationReport folded = run(sharding, 2, executor::Fidelity::kFolded);
    const ValidationReport full = run(sharding, 2, executor::Fidelity::kFull);
    EXPECT_NEAR(folded.simulated.step_time_s / folded.analytic.timing.step_time_s - 1, 0, 1e-6) << sharding;
    EXPECT_DOUBLE_EQ(full.simulated.step_time_s, folded.simulated.step_time_s) << sharding;
  }
}

// --cp-comm-type all_gather and a2a: tiny-llama at cp 2 on two GPUs of one node. Their CP
// collectives are not overlapped, so the closed form and the replay charge them alike.
TEST(CpCommTypeContract, AllGatherAndUlyssesAgreeExactly) {
  std::map<std::string, double> compute;
  for (const char* type : {"p2p", "all_gather", "a2a"}) {
    const std::string text = std::string(R"(name: cp-contract
model: { preset: tiny-llama, seq_length: 1024 }
hardware: { preset: h100-sxm, peak_bf16: "10 TFLOPS", hbm_bandwidth: "100 GB/s" }
topology: { gpus: 2, gpus_per_node: 2, intra_node: { bandwidth: "1 GB/s", latency: "5 us" }, inter_node: { bandwidth: "1 GB/s" } }
parallelism: { tp: 1, cp: 2, pp: 1, dp: 1, micro_batch: 1, global_batch: 2, schedule: 1f1b, cp_comm_type: )") +
                             type + " }\noptimizations: { overlap_interference: false }\n";
    const ValidationReport r = test::validate_text(text, "cp-contract");
    EXPECT_GT(r.analytic.timing.breakdown.cp_exposed, 0) << type;
    EXPECT_NEAR(r.simulated.step_time_s / r.analytic.timing.step_time_s - 1, 0, 1e-6) << type;
    compute[type] = r.analytic.timing.breakdown.compute;
  }
  // Ulysses runs the attention kernel over all 1024 tokens (heads / 2) where all-gather CP runs it
  // per 512-token chunk: the same FLOPs at the Hopper curve's higher rate for the longer sequence.
  EXPECT_LT(compute["a2a"], compute["all_gather"]);
}

}  // namespace
}  // namespace mofasim::analysis
