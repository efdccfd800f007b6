// The analytic MoFa model against the step simulation on a grid of small scenarios.
//
// Exact regime (asserted to 1e-6 of the step): 1F1B and GPipe at any pp, uniform or uneven
// stages (the closed form replays 1F1B's per-stage recurrence and GPipe's two flow shops with each
// rank's own pass times), any schedule at pp = 1, free PP hops, no overlap or overlap that hides
// nothing (TP overlap with one piece, DP overlap with v = 1), no link shared by two kinds of
// traffic. Each rank's DP reduction and update start when its own last backward ends, on both
// sides.
//
// Elsewhere the closed form is an approximation, and each test states the sign of the
// difference and why.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/analysis/compare.h"
#include "test/support/validate_text.h"
#include "test/analysis/grid_cases.h"

namespace mofasim::analysis {
namespace {

using testing::GridCase;
using testing::grid_yaml;

constexpr char kGpuAdam[] = "optimizer: { placement: gpu, distributed: false }";

ValidationReport run(const GridCase& c) {
  ValidationReport r = test::validate_text(grid_yaml(c), c.label());
  // The numbers docs/validation.md quotes.
  std::printf("  %-34s %-16s analytic %.9f s  simulated %.9f s  (sim - analytic) / analytic %+.3e\n", c.label().c_str(),
              c.parallel_extra.c_str(), r.analytic.timing.step_time_s, r.simulated.step_time_s,
              r.field("step_time_s").relative_difference);
  return r;
}

class AnalysisExactGrid : public ::testing::TestWithParam<GridCase> {};

TEST_P(AnalysisExactGrid, SimulatedStepEqualsTheClosedFormToOnePpm) {
  const GridCase& c = GetParam();
  const ValidationReport r = run(c);
  const double analytic = r.analytic.timing.step_time_s;
  EXPECT_NEAR(r.simulated.step_time_s, analytic, 1e-6 * analytic)
      << c.label() << ": analytic " << analytic << " s, simulated " << r.simulated.step_time_s << " s";
  // Same FLOPs on both sides: throughput follows the step time.
  EXPECT_NEAR(r.simulated.tflops_per_gpu * r.simulated.step_time_s, r.analytic.timing.tflops_per_gpu * analytic,
              1e-9 * r.analytic.timing.tflops_per_gpu * analytic);
  // The compute both sides see on the busiest stage: the same op table, priced the same way.
  EXPECT_NEAR(r.field("compute_s").simulated, r.field("compute_s").analytic, 1e-6 * analytic);
}

std::vector<GridCase> exact_cases() {
  std::vector<GridCase> cases;
  const std::vector<std::string> features = {
      std::string("{ ") + kGpuAdam + " }",
      std::string("{ ") + kGpuAdam + ", dp_overlap: { enabled: true } }",               // v = 1: hides nothing
      std::string("{ ") + kGpuAdam + ", tp_overlap: { enabled: true, chunks: 1 } }",    // MoFa(20), s = 1
  };
  for (int pp : {1, 2, 4}) {
    for (int tp : {1, 2}) {
      for (int dp : {1, 2}) {
        for (const std::string& f : features) {
          cases.push_back(GridCase{.tp = tp, .pp = pp, .dp = dp, .optimizations = f});
        }
      }
    }
  }
  // One stage: every schedule is the same sequence of passes.
  for (int tp : {1, 2}) {
    cases.push_back(GridCase{.tp = tp, .dp = 2, .schedule = "gpipe", .optimizations = std::string("{ ") + kGpuAdam + " }"});
  }
  // GPipe with the head on the last stage: all forwards then all backwards, two flow shops of
  // identical jobs, Σ_r (T_F,r + T_B,r) + (m − 1)·(max_r T_F,r + max_r T_B,r).
  for (int pp : {2, 4}) {
    cases.push_back(GridCase{.pp = pp, .schedule = "gpipe", .optimizations = std::string("{ ") + kGpuAdam + " }"});
  }
  // Uneven 1F1B stages: with 3 + 1 layers the first rank is the busiest (its idle time is the
  // round trip through the last rank, not its own passes); with 1 + 3 the last rank is the
  // busiest and also has the largest DP + update (the head and the final norm), which it starts
  // T_B,0 before rank 0 ends.
  for (const char* layers : {", stage_layers: [3, 1]", ", stage_layers: [1, 3]"}) {
    cases.push_back(GridCase{.pp = 2, .optimizations = std::string("{ ") + kGpuAdam + " }", .parallel_extra = layers});
  }
  // Sliding windows on every other layer (0 and 2 windowed, 1 and 3 full) over uneven stages:
  // 3 + 1 layers hold 2 windowed + 1 full and 1 full, another mix than the model's, so both
  // step models price each layer's own span (RankPlan::window_mixed); likewise 1 + 3.
  for (const char* layers : {", stage_layers: [3, 1]", ", stage_layers: [1, 3]"}) {
    cases.push_back(GridCase{.pp = 2, .optimizations = std::string("{ ") + kGpuAdam + " }", .parallel_extra = layers,
                             .model_extra = ", window_size: 128, window_attn_skip_freq: 2"});
  }
  // MoE layers interleaved with dense ones (moe.layer_pattern [0, 1]: layers 1 and 3 MoE), on
  // even and uneven stages.
  for (const char* layers : {"", ", stage_layers: [3, 1]"}) {
    cases.push_back(GridCase{.model = "tiny-moe", .pp = 2, .dp = 2, .optimizations = std::string("{ ") + kGpuAdam + " }",
                             .parallel_extra = std::string(", ep: 2") + layers,
                             .model_extra = ", moe: { layer_pattern: [0, 1] }"});
  }
  // MoE with experts over EP 2 (dense first layer, MoE after it); rank 0's DP + update is the
  // largest here (dense FFN of 3·256·688 weights > 4 local experts + shared expert), so no tail.
  for (int pp : {1, 2, 4}) {
    for (int tp : {1, 2}) {
      cases.push_back(GridCase{.model = "tiny-moe", .tp = tp, .pp = pp, .dp = 2,
                               .optimizations = std::string("{ ") + kGpuAdam + " }", .parallel_extra = ", ep: 2"});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Grid, AnalysisExactGrid, ::testing::ValuesIn(exact_cases()),
                         [](const ::testing::TestParamInfo<GridCase>& param) {
                           std::string name = param.param.label() + "_" + std::to_string(param.index);
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

// ---- Regimes where the closed form is not exact: the sign of the difference, and why. ----

// Interleaved 1F1B with uneven chunks (embedding in chunk 0, head in the last chunk): the closed
// form charges the first-chunk warm-up and cool-down and assumes the busiest rank never idles in
// the steady phase. Both are lower bounds of the timeline (a rank cannot start before the first
// micro-batch reaches it, and cannot idle less than never), so analytic < simulated.
TEST(AnalysisInexactGrid, InterleavedWithUnevenChunksIsUnderestimated) {
  for (int tp : {1, 2}) {
    const GridCase c{.tp = tp, .pp = 2, .vpp = 2, .schedule = "interleaved-1f1b",
                     .optimizations = std::string("{ ") + kGpuAdam + " }"};
    const ValidationReport r = run(c);
    EXPECT_GT(r.simulated.step_time_s, r.analytic.timing.step_time_s) << c.label();
    EXPECT_GT(r.field("pp_bubble_s").simulated, r.field("pp_bubble_s").analytic) << c.label();
  }
}

// Partial overlap under α = β = 1.5 (PP overlap, MoFa(23)): the paper's max(α·T, β·t_pp) slows the
// whole pass by α whenever a send is in flight. The fluid replay slows each side only while both
// run: with βt ≤ αT the pass takes T + β·t·(1 − 1/α) ≤ α·T. So simulated < analytic.
TEST(AnalysisInexactGrid, PartialOverlapUnderAlphaBetaIsShorterInTheFluidReplay) {
  for (int pp : {2, 4}) {
    const GridCase c{.pp = pp, .optimizations = std::string("{ ") + kGpuAdam +
                                                ", pp_overlap: { enabled: true, alpha: 1.5, beta: 1.5 } }"};
    const ValidationReport r = run(c);
    EXPECT_LT(r.simulated.step_time_s, r.analytic.timing.step_time_s) << c.label();
  }
}

// Blocking PP sends (no PP overlap, hops priced at 0.5 MB / 1 GB/s): the closed form adds one hop
// per pass on every rank, 2·t_pp per steady F+B pair. In the timeline the first rank only sends
// activations and the last only gradients, and a send that its receiver does not wait for is off
// the critical path. So analytic > simulated.
TEST(AnalysisInexactGrid, BlockingPipelineHopsAreOverestimated) {
  for (int pp : {2, 4}) {
    const GridCase c{.pp = pp, .optimizations = std::string("{ ") + kGpuAdam + " }", .free_pp_hops = false};
    const ValidationReport r = run(c);
    EXPECT_LT(r.simulated.step_time_s, r.analytic.timing.step_time_s) << c.label();
    EXPECT_LT(r.field("pp_exposed_s").simulated, r.field("pp_exposed_s").analytic) << c.label();
  }
}

// Link contention: TP 2 and PP 2 (and DP 2) in one node, PP overlap on. The PP sends run on the
// same NVLink ports as the TP (and DP) collectives; the closed form prices every collective alone
// at the full link bandwidth, the fluid replay shares the port. Sharing can only slow a transfer,
// so simulated > analytic.
TEST(AnalysisInexactGrid, LinkContentionBetweenPpAndTpIsUnderestimated) {
  for (int dp : {1, 2}) {
    const GridCase c{.tp = 2, .pp = 2, .dp = dp,
                     .optimizations = std::string("{ ") + kGpuAdam + ", pp_overlap: { enabled: true } }",
                     .free_pp_hops = false};
    const ValidationReport r = run(c);
    EXPECT_GT(r.simulated.step_time_s, r.analytic.timing.step_time_s) << c.label();
  }
}

// TP overlap split into 4 pieces (MoFa(20)) with a 20 µs link latency. Both sides charge every
// piece the full latency (s collectives of S/s bytes: s·α + β·S on the comm side), so what is
// left is how the pieces are paired: the closed form pipelines each TP collective only with the
// GEMM its op table attaches it to (one collective per GEMM), the replay pairs a GEMM with an
// adjacent TP collective in either order, hiding a little more. So simulated < analytic, by less
// than 1e-3 of the step (2.6e-4 here).
TEST(AnalysisInexactGrid, TpOverlapPiecesArePairedWithMoreGemmsInTheReplay) {
  const GridCase c{.tp = 2, .optimizations = std::string("{ ") + kGpuAdam + ", tp_overlap: { enabled: true, chunks: 4 } }"};
  const ValidationReport r = run(c);
  EXPECT_LT(r.simulated.step_time_s, r.analytic.timing.step_time_s);
  EXPECT_GT(r.simulated.step_time_s, (1 - 1e-3) * r.analytic.timing.step_time_s);
  EXPECT_LT(r.field("tp_exposed_s").simulated, r.field("tp_exposed_s").analytic);
}

// ---- The comparison itself ----

TEST(AnalysisCompare, MapsRecomputeAndOffloadIntoComputeAndFlagsBeyondTheTolerance) {
  model::AnalyticResult a;
  a.timing.step_time_s = 10;
  a.timing.breakdown.compute = 8;
  a.timing.breakdown.tp_exposed = 2;
  a.timing.tflops_per_gpu = 100;
  executor::StepResult s;
  s.step_time_s = 10.05;  // +0.5%: within 1%
  s.breakdown.compute = 6;
  s.breakdown.recompute = 1.5;
  s.breakdown.offload = 0.5;  // 6 + 1.5 + 0.5 = 8 = the analytic compute
  s.breakdown.tp = 2.05;      // +2.5%: flagged
  s.tflops_per_gpu = 100 * 10 / 10.05;
  const ValidationReport r = compare_results(a, s, CompareOptions{}, "hand");
  EXPECT_EQ(r.field("compute_s").simulated, 8);
  EXPECT_FALSE(r.field("compute_s").flagged);
  EXPECT_NEAR(r.field("step_time_s").relative_difference, 0.005, 1e-12);
  EXPECT_FALSE(r.field("step_time_s").flagged);
  EXPECT_NEAR(r.field("tp_exposed_s").relative_difference, 0.025, 1e-12);
  EXPECT_TRUE(r.field("tp_exposed_s").flagged);
  EXPECT_EQ(r.flagged_count(), 1);
  // A 1e-4 s exposed-CP entry against 0 is below 1e-4 of the 10 s step: not flagged.
  s.breakdown.cp = 1e-4;
  const ValidationReport r2 = compare_results(a, s, CompareOptions{}, "hand");
  EXPECT_TRUE(std::isinf(r2.field("cp_exposed_s").relative_difference));
  EXPECT_FALSE(r2.field("cp_exposed_s").flagged);
  const nlohmann::json j = to_json(r2);
  EXPECT_EQ(j["flagged"], 1);
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_TRUE(j["fields"][3]["relative_difference"].is_null());  // cp_exposed_s: infinite
  EXPECT_NE(to_table(r2).find("tp_exposed_s"), std::string::npos);
  EXPECT_THROW(compare_results(a, s, CompareOptions{.tolerance = -1}), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::analysis
