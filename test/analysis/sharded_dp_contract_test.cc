// The two step models on ZeRO-3 / FSDP (data_parallel_sharding_strategy: optim_grads_params):
// tiny-llama over dp 4 on one node of 1 GB/s links, fast enough compute that part of each
// layer's parameter all-gather is exposed. The closed form exposes max(0, g - pass) per layer pass
// (the gather prefetched under the pass before it); the replay runs the gathers one after another
// on the DP stream, two gathered layers at a time, sharing the links with the gradient
// reduce-scatter. Measured: ZeRO-1 exact, ZeRO-3 simulated 1.39 % below the closed form.
#include <string>

#include <gtest/gtest.h>

#include "sim/analysis/compare.h"
#include "test/support/validate_text.h"

namespace mofasim::analysis {
namespace {

std::string yaml(const std::string& sharding) {
  return std::string(R"(name: zero3-contract
model: { preset: tiny-llama, seq_length: 1024 }
hardware: { preset: h100-sxm, peak_bf16: "10 TFLOPS", hbm_bandwidth: "100 GB/s", kernel_launch: "0 s" }
topology: { gpus: 4, gpus_per_node: 4, intra_node: { bandwidth: "1 GB/s", latency: "20 us" }, inter_node: { bandwidth: "1e9 TB/s", latency: "0 s" } }
parallelism: { tp: 1, cp: 1, pp: 1, dp: 4, micro_batch: 1, global_batch: 16, schedule: 1f1b }
optimizations: { overlap_interference: false, optimizer: { placement: gpu, data_parallel_sharding_strategy: )") +
         sharding + " } }\n";
}

struct Steps {
  double analytic = 0;
  double simulated = 0;
  double dp_exposed = 0;  // analytic
};

Steps steps(const std::string& sharding) {
  const ValidationReport r = test::validate_text(yaml(sharding), "zero3-contract");
  return {r.analytic.timing.step_time_s, r.simulated.step_time_s, r.analytic.timing.breakdown.dp_exposed};
}

TEST(ShardedDpContract, ZeroThreeAgreesWithinItsSignedBound) {
  const Steps z1 = steps("optim");
  EXPECT_NEAR(z1.simulated / z1.analytic - 1, 0, 1e-6) << "ZeRO-1 prices the same plan in both models";
  const Steps z3 = steps("optim_grads_params");
  const double diff = z3.simulated / z3.analytic - 1;
  // The per-layer gathers cost time in both models here (the case exposes them)...
  EXPECT_GT(z3.analytic, z1.analytic * 1.2);
  EXPECT_GT(z3.simulated, z1.simulated * 1.2);
  // ...and the replay runs at most 2 % below the closed form (measured -1.39 %): the closed form
  // charges every layer pass max(0, g - pass) where the replay's gather may start as soon as the
  // pass two before it ends, which at a forward/backward turn hides more.
  EXPECT_GE(diff, -0.02);
  EXPECT_LE(diff, 1e-6);
}

}  // namespace
}  // namespace mofasim::analysis
