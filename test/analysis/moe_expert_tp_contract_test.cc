// The two step models on expert tensor parallelism of any size (etp neither 1 nor tp) and on the
// allgather dispatcher with etp > 1: tiny-moe on 2 nodes of 8 GPUs. Both models price the same
// per-rank plan (the expert-TP collectives on the expert layout's ETP group, the allgather on the
// ETP x EP group), so the closed form and the replay agree to the replay's nanosecond rounding,
// and the folded replay equals the full one.
#include <string>

#include <gtest/gtest.h>

#include "sim/analysis/compare.h"
#include "test/support/validate_text.h"

namespace mofasim::analysis {
namespace {

std::string yaml(const std::string& parallel, const std::string& moe_extra) {
  return std::string(R"(name: moe-expert-tp-contract
model: { preset: tiny-moe, seq_length: 1024, moe: { num_experts: 8, top_k: 2, expert_ffn_hidden_size: 128)") +
         moe_extra + R"( } }
hardware: { preset: h100-sxm, peak_bf16: "10 TFLOPS", hbm_bandwidth: "100 GB/s" }
topology: { gpus: 16, gpus_per_node: 8, intra_node: { bandwidth: "4 GB/s", latency: "0 s" }, inter_node: { bandwidth: "0.5 GB/s", latency: "0 s" } }
parallelism: { )" + parallel + R"(, cp: 1, pp: 1, sequence_parallel: true, micro_batch: 1, global_batch: 16, schedule: 1f1b }
optimizations: { overlap_interference: false, optimizer: { distributed: true } }
)";
}

struct Steps {
  double analytic = 0;
  double simulated = 0;
  double tp_analytic = 0;
  double ep_analytic = 0;
};

Steps steps(const std::string& parallel, const std::string& moe_extra,
            executor::Fidelity fidelity = executor::Fidelity::kFolded) {
  const ValidationReport r = test::validate_text(yaml(parallel, moe_extra), "moe-expert-tp-contract", fidelity);
  return {r.analytic.timing.step_time_s, r.simulated.step_time_s, r.analytic.timing.breakdown.tp_exposed,
          r.analytic.timing.breakdown.ep_exposed};
}

// tp 4 / etp 2 (etp below tp), tp 2 / etp 4 (above tp, an expert-TP group across two TP pairs),
// and the allgather dispatcher over the ETP x EP group.
constexpr const char* kEtpBelowTp = "tp: 4, dp: 4, ep: 4, etp: 2";
constexpr const char* kEtpAboveTp = "tp: 2, dp: 8, ep: 2, etp: 4";
// ep·etp = 16: the flex dispatcher's group spans both nodes (the two layouts above fit in one).
constexpr const char* kEtpEpTwoNodes = "tp: 4, dp: 4, ep: 4, etp: 4";
// ep 8 x etp 2: the EP group (8 ranks, every other GPU of both nodes) is not the flex group (all 16),
// so a hop priced on the EP group instead of its own gets another price.
constexpr const char* kEpGroupIsNotTheFlexGroup = "tp: 2, dp: 8, ep: 8, etp: 2";

TEST(MoeExpertTpContract, AnalyticEqualsSimulated) {
  for (const char* par : {kEtpBelowTp, kEtpAboveTp}) {
    for (const char* extra : {"", ", token_dispatcher_type: allgather", ", token_dispatcher_type: flex"}) {
      const Steps s = steps(par, extra);
      EXPECT_GT(s.tp_analytic, 0) << par << extra;
      EXPECT_GT(s.ep_analytic, 0) << par << extra;
      EXPECT_NEAR(s.simulated / s.analytic - 1, 0, 1e-6) << par << extra;
    }
  }
}

TEST(MoeExpertTpContract, FlexOverTwoNodesAnalyticEqualsSimulated) {
  for (const char* par : {kEtpEpTwoNodes, kEpGroupIsNotTheFlexGroup}) {
    const Steps s = steps(par, ", token_dispatcher_type: flex");
    EXPECT_GT(s.ep_analytic, 0) << par;
    EXPECT_NEAR(s.simulated / s.analytic - 1, 0, 1e-6) << par;
    EXPECT_NEAR(steps(par, ", token_dispatcher_type: flex", executor::Fidelity::kFull).simulated, s.simulated, 1e-9)
        << par;
  }
}

TEST(MoeExpertTpContract, FoldedReplayEqualsFullReplay) {
  for (const char* par : {kEtpBelowTp, kEtpAboveTp}) {
    for (const char* extra : {"", ", token_dispatcher_type: allgather"}) {
      EXPECT_NEAR(steps(par, extra, executor::Fidelity::kFull).simulated, steps(par, extra).simulated, 1e-9)
          << par << extra;
    }
  }
}

// Exposed EP of the allgather with etp 2 by hand: T_g = 1024/4 = 256 tokens per GPU, h = 256, bf16;
// the ETP x EP group is ranks 0-7, one node: all-gather of S = 8·256·256·2 = 1,048,576 B, each GPU
// receiving 7/8·S = 917,504 B over 4 GB/s NVLink: 0.229376 ms. 4 transfers per MoE layer (gather,
// reduce-scatter, and their gradients), 3 MoE layers, m = 16/(1·4) = 4 micro-batches: 48 transfers.
TEST(MoeExpertTpContract, AllGatherOverEtpTimesEpIsTheHandWorkedTime) {
  EXPECT_NEAR(steps(kEtpBelowTp, ", token_dispatcher_type: allgather").ep_analytic, 48 * 0.229376e-3, 1e-9);
}

// Exposed EP of flex with etp 4 by hand (Megatron's flex dispatcher over the tp_ep group, ranks
// 0-15 on both nodes; model/moe_dispatch.h): T_g = 256 tokens per GPU, k = 2, h = 256, bf16.
//   scale-out: a token's 2 distinct experts among 8, 4 a node, miss a node with C(4, 2) / C(8, 2)
//     = 3/14: D = 2·11/14 = 11/7 node copies, S = 256·(11/7)·256·2 = 205,970.29 B, half of it
//     through each GPU's 0.5 GB/s NIC: 0.20597029 ms;
//   scale-up: once to each of the 4 expert-TP ranks of every expert slot holding one of its
//     experts (2 a slot): missed with C(6, 2) / C(8, 2) = 15/28, 4·13/28 = 13/7 slots,
//     S = 256·(13/7)·4·256·2 = 973,677.71 B, 7/8 over 4 GB/s NVLink: 0.212992 ms.
//   DeepEP pipelines them (16 ranks: 20 tokens per RDMA chunk toward the experts, 12 back, on 10
//   channels): toward 0.212992 + 0.20597029·200/256 = 0.37390629 ms, back 0.212992 +
//   0.20597029·120/256 = 0.30954057 ms. Dispatch and the combine's gradient go toward, the other
//   two back: 1.36689371 ms per MoE layer and micro-batch; 3 MoE layers, m = 4: 12 of them. No
//   expert-TP collective.
TEST(MoeExpertTpContract, FlexOverEtpTimesEpIsTheHandWorkedTime) {
  const Steps s = steps(kEtpEpTwoNodes, ", token_dispatcher_type: flex");
  EXPECT_NEAR(s.ep_analytic, 12 * 1.36689371e-3, 1e-9);
}

}  // namespace
}  // namespace mofasim::analysis
