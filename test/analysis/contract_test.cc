// The contract between the two step models: the same case through the closed form and through
// the simulated replay, over schedule x link latency {0, 20 us} x cp {1, 2, 4} x optimizer
// {gpu, distributed, cpu} x {dense, MoE} x {plain, full recompute, activation offload}
// (5 x 2 x 3 x 3 x 2 x 3 = 540 cells). Every cell asserts either agreement to 1e-6 of the step
// where the closed form is exact, or a signed bound on (simulated - analytic) / analytic with
// the reason (kBounds below). Cluster: pp 2 and dp 2 (ep 2 for MoE), pp across nodes on a free
// link, the CP and DP groups inside a node on 1 GB/s NVLink (grid_cases.h's slow device).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/analysis/compare.h"
#include "test/support/validate_text.h"

namespace mofasim::analysis {
namespace {

struct Cell {
  std::string schedule;
  std::string latency;
  int cp = 1;
  std::string optimizer;  // gpu, dist, cpu
  bool moe = false;
  std::string memory;  // none, recompute, offload

  [[nodiscard]] std::string label() const {
    return schedule + " lat " + latency + " cp " + std::to_string(cp) + " opt " + optimizer + (moe ? " moe" : " dense") +
           " " + memory;
  }
};

std::string yaml(const Cell& c) {
  const int dp = 2;
  const int pp = 2;
  const int vpp = c.schedule == "interleaved-1f1b" ? 2 : 1;
  const std::string optimizer = c.optimizer == "cpu"    ? "{ placement: cpu, distributed: false }"
                                : c.optimizer == "dist" ? "{ placement: gpu, distributed: true }"
                                                        : "{ placement: gpu, distributed: false }";
  const std::string memory = c.memory == "recompute" ? ", recompute: full"
                             : c.memory == "offload" ? ", activation_offload: { enabled: true }"
                                                     : "";
  return std::string("name: contract\n") + "model: { preset: " + (c.moe ? "tiny-moe" : "tiny-llama") +
         ", seq_length: 1024 }\n" +
         R"(hardware: { preset: h100-sxm, peak_bf16: "1 TFLOPS", hbm_bandwidth: "10 GB/s", h2d_bandwidth: "5 GB/s", )"
         R"(d2h_bandwidth: "5 GB/s", cpu_optimizer_params_per_second: 1e9 })" "\n" +
         "topology: { gpus: " + std::to_string(c.cp * dp * pp) + ", gpus_per_node: " + std::to_string(c.cp * dp) +
         R"(, intra_node: { bandwidth: "1 GB/s", latency: ")" + c.latency +
         R"(" }, inter_node: { bandwidth: "1e9 TB/s", latency: "0 s" } })" "\n" +
         "parallelism: { tp: 1, cp: " + std::to_string(c.cp) + ", pp: " + std::to_string(pp) +
         ", vpp: " + std::to_string(vpp) + ", dp: " + std::to_string(dp) +
         ", micro_batch: 1, global_batch: 16, schedule: " + c.schedule + (c.moe ? ", ep: 2" : "") + " }\n" +
         "optimizations: { optimizer: " + optimizer + memory + " }\n";
}

// Bound on (simulated - analytic) / analytic, and why. Exact cells: +-1e-6 (the replay rounds
// each task to the nanosecond; measured at most 4.5e-7 here).
struct Bound {
  double lo = -1e-6;
  double hi = 1e-6;
  const char* reason = "exact: both price the same plan (measured |diff| <= 4.5e-7)";
};

constexpr double kSlack = 1e-6;

Bound bound_for(const Cell& c) {
  const bool cpu_moe = c.optimizer == "cpu" && c.moe;
  if (c.memory == "offload") {
    if (cpu_moe) {
      return {-0.05, 0.06,
              "offload copies exposed in the replay (+) against pipelined CPU-optimizer buckets (-); measured "
              "-3.4% .. +4.8%"};
    }
    if (c.schedule == "zb-h1") {
      return {-kSlack, 0.11, "offload copies exposed in the replay, on top of the ZB-H1 closed form; +2.2% .. +10.4%"};
    }
    return {-kSlack, 0.06,
            "the closed form hides each layer's D2H/H2D under that layer's compute "
            "(MoFa(33) MoFa(34) MoFa(35)); in the replay the "
            "copies queue on one engine per direction and the prefetch waits for the layer above, so part of "
            "them is exposed (compute_s carries it): simulated >= analytic, +1.2% .. +5.2%"};
  }
  if (c.schedule == "zb-h1") {
    return {-0.05, kSlack,
            "ZB-H1 keeps the busiest rank + closed-form bubble (p-1)(F+B-2W) instead of a replay of the order; "
            "the replay's schedule idles less: simulated < analytic, -0.9% .. -4.3%"};
  }
  if (cpu_moe) {
    return {-0.05, kSlack,
            "CPU optimizer with separate dense and expert gradient buckets: the replay pipelines D2H, CPU update "
            "and H2D bucket by bucket, the closed form (MoFa(27) MoFa(28)) runs them one after the other for all "
            "parameters: simulated < analytic, -0.2% .. -4.8%"};
  }
  if (c.schedule == "interleaved-1f1b" && !c.moe) {
    return {-kSlack, 0.002,
            "interleaved chunks are uneven (embedding in the first, head in the last): the closed form's "
            "first-chunk warm-up and idle-free steady phase are lower bounds: simulated > analytic, +0.06% .. "
            "+0.12%"};
  }
  return {};
}

class StepModelContract : public ::testing::TestWithParam<std::string> {};

TEST_P(StepModelContract, EveryCellAgreesOrStaysInsideItsSignedBound) {
  const std::string schedule = GetParam();
  int cells = 0;
  for (const char* latency : {"0 s", "20 us"}) {
    for (int cp : {1, 2, 4}) {
      for (const char* optimizer : {"gpu", "dist", "cpu"}) {
        for (bool moe : {false, true}) {
          for (const char* memory : {"none", "recompute", "offload"}) {
            const Cell c{.schedule = schedule, .latency = latency, .cp = cp, .optimizer = optimizer, .moe = moe,
                         .memory = memory};
            const ValidationReport r = test::validate_text(yaml(c), "contract");
            const double analytic = r.analytic.timing.step_time_s;
            const double diff = (r.simulated.step_time_s - analytic) / analytic;
            const Bound b = bound_for(c);
            EXPECT_GE(diff, b.lo) << c.label() << ": " << b.reason;
            EXPECT_LE(diff, b.hi) << c.label() << ": " << b.reason;
            ++cells;
          }
        }
      }
    }
  }
  EXPECT_EQ(cells, 108);
}

INSTANTIATE_TEST_SUITE_P(Schedules, StepModelContract,
                         ::testing::Values("1f1b", "gpipe", "interleaved-1f1b", "zb-h1", "dualpipe"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace mofasim::analysis
