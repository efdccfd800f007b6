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

}  // namespace
}  // namespace mofasim::analysis
