// The two step models on MoE parallel folding and the DeepEP dispatch: tiny-moe on 2 nodes of 4
// GPUs, tp 2 with sequence parallelism, dp 4, ep 8 folded over TP x DP (etp 1, so EP spans both
// nodes and every expert has one copy), 1F1B over pp 1. DeepEP (flex) cannot run an 8-rank group
// over two nodes (it needs one node, or whole nodes of 8; sim/scenario/validate_deepep.h), so the
// flex cases run the same 8 GPUs as one node of 8. Both models price the same per-rank plan
// (the EP hops on the EP group), so the closed form and the replay agree to the replay's
// nanosecond rounding; the folded replay equals the full one (every rank's groups are alike).
#include <string>

#include <gtest/gtest.h>

#include "sim/analysis/compare.h"
#include "test/support/validate_text.h"

namespace mofasim::analysis {
namespace {

std::string yaml(const std::string& moe_extra) {
  return std::string(R"(name: moe-dispatch-contract
model: { preset: tiny-moe, seq_length: 1024, moe: { num_experts: 8, top_k: 2, expert_ffn_hidden_size: 128)") +
         moe_extra + R"( } }
hardware: { preset: h100-sxm, peak_bf16: "10 TFLOPS", hbm_bandwidth: "100 GB/s" }
topology: { gpus: 8, gpus_per_node: )" + std::string(moe_extra.find("flex") != std::string::npos ? "8" : "4") + R"(, intra_node: { bandwidth: "4 GB/s", latency: "0 s" }, inter_node: { bandwidth: "0.5 GB/s", latency: "0 s" } }
parallelism: { tp: 2, cp: 1, pp: 1, dp: 4, ep: 8, etp: 1, sequence_parallel: true, micro_batch: 1, global_batch: 8, schedule: 1f1b }
optimizations: { overlap_interference: false }
)";
}

struct Steps {
  double analytic = 0;
  double simulated = 0;
  double ep_analytic = 0;
};

Steps steps(const std::string& moe_extra, executor::Fidelity fidelity = executor::Fidelity::kFolded) {
  const ValidationReport r = test::validate_text(yaml(moe_extra), "moe-contract", fidelity);
  return {r.analytic.timing.step_time_s, r.simulated.step_time_s, r.analytic.timing.breakdown.ep_exposed};
}

TEST(MoeDispatchContract, AnalyticEqualsSimulatedForEachDispatcher) {
  for (const char* extra : {"", ", token_dispatcher_type: flex",
                            ", token_dispatcher_type: flex, router_num_groups: 2, router_group_topk: 1",
                            ", token_dispatcher_type: allgather", ", expert_capacity_factor: 1.5, pad_expert_input_to_capacity: true"}) {
    const Steps s = steps(extra);
    EXPECT_GT(s.ep_analytic, 0) << extra;
    EXPECT_NEAR(s.simulated / s.analytic - 1, 0, 1e-6) << extra;
  }
}

// Exposed EP by hand: each GPU dispatches T_g = 1024/2 = 512 tokens, k = 2, h = 256, bf16;
// 4 EP transfers per MoE layer, 3 MoE layers, m = 2 micro-batches: 24 transfers per step.
//   alltoall: S = 512·2·256·2 = 524,288 B; NIC-bound: half of S leaves the node through each
//     GPU's 0.5 GB/s NIC: 262,144 / 0.5e9 = 0.524288 ms (NVLink: 3/8·S / 4e9 = 0.049 ms).
//   flex, on one node of 8: no scale-out; the scale-up sends a token once to each GPU holding one
//     of its experts: one expert a GPU, so its 2 distinct experts are on 2 GPUs, S, and
//     7/8·S / 4e9 = 0.114688 ms, with or without node-limited routing (2 groups, top 1).
TEST(MoeDispatchContract, ExposedEpIsTheHandWorkedDispatchTime) {
  EXPECT_NEAR(steps("").ep_analytic, 24 * 0.524288e-3, 1e-9);
  EXPECT_NEAR(steps(", token_dispatcher_type: flex").ep_analytic, 24 * 0.114688e-3, 1e-9);
  EXPECT_NEAR(steps(", token_dispatcher_type: flex, router_num_groups: 2, router_group_topk: 1").ep_analytic,
              24 * 0.114688e-3, 1e-9);
}

// DeepEP's buffers are static memory in the replay as in the memory model: for 8 ranks and
// h = 256 only the NVLink buffer, 52,594,304 B (model/moe_deepep.h; hand-worked in
// test/model/moe_deepep_test.cc), on top of what the alltoall dispatcher holds.
TEST(MoeDispatchContract, ReplayStaticMemoryHoldsDeepEpBuffers) {
  const auto static_bytes = [](const std::string& extra) {
    return test::validate_text(yaml(extra), "moe-contract").simulated.memory.at(0).static_bytes;
  };
  EXPECT_DOUBLE_EQ(static_bytes(", token_dispatcher_type: flex") - static_bytes(""), 52'594'304.0);
}

TEST(MoeDispatchContract, FoldedReplayEqualsFullReplay) {
  for (const char* extra : {"", ", token_dispatcher_type: flex, router_num_groups: 2, router_group_topk: 1"}) {
    EXPECT_NEAR(steps(extra, executor::Fidelity::kFull).simulated, steps(extra).simulated, 1e-9) << extra;
  }
}

}  // namespace
}  // namespace mofasim::analysis
