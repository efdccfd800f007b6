// Accuracy on the open validation set (../shared/validation/open/runs.csv, 175 published runs),
// skipped when that folder is absent. It guards today's figures against regression: the bounds are
// the numbers docs/validation-measured.md reports (section "Open set (runs.csv)", measured with the
// shipped presets) plus 1 percentage point: the A100-SXM4 rows by the declared split (fit: O-ILM;
// test: O-FA, O-MLL) and the single-node B200 rows (O-SMXB, fit). A change that makes the model better passes;
// lower the bounds with it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/analysis/measured_open_quantity.h"
#include "sim/analysis/measured_open_validate.h"
#include "test/validation/shared_data_dir.h"

namespace mofasim::analysis {
namespace {

const std::string kRuns = shared_data_dir() + "/validation/open/runs.csv";
constexpr double kMargin = 1.0;  // percentage points

struct Bound {
  const char* split;
  int rows;
  double mape;
  double median;
};

// Measured on this commit's model (percent, in each row's own quantity). The fit rows went from 19
// to 46 when InternLM's zero1 = g (optimizer sharded within g ranks) became expressible as HSDP
// (num_distributed_optimizer_instances = dp / g); the 19 alone were at 37.83 / 28.92 (simulated)
// and 25.92 / 24.20 (analytic), unchanged by it. Lowered from fit 24.50 / 21.04, test 33.14 / 33.56
// (analytic 14.10 / 11.46, 29.97 / 25.34) by two changes together: the InternEvo (O-ILM) and
// FlashAttention GPT (O-FA) rows took FlashAttention-1's measured rate (attention_impl flash1; alone:
// fit 17.21 / 13.66, test 24.57 / 16.18), and the presets' 50 us eager launch cost per op phase
// (alone: fit 20.85 / 18.68, test 28.63 / 29.23).
// Then InternEvo's fused RoPE and two residual adds per layer (the transformer-engine inventory of a
// dense layer, read from its modeling code) lowered the fit rows from 14.02 / 11.43 (analytic MAPE
// 11.70 -> 11.60, but its median ROSE 8.32 -> 9.16: the closed form already priced the multi-node
// rows slow, bias -0.34 -> +1.03 %).
// Then InternLM's own kernel set (KernelStack::kInternLm, read from the code of the rows' config
// commit: each RMSNorm on an fp32 copy and recomputed in the backward, the eager SwiGLU) lowered
// them from 12.55 / 9.82 (single-node rows 13.06 -> 8.49 % MAPE).
// Then InternEvo's ZeRO-1 over the whole DP group (O-ILM-01..08, 17..24) as InternEvo runs it:
// gradients all-reduced and one broadcast per owner rank, each paying its pipeline fill (the
// fill's 128 KiB chunk fitted on those 16 rows, topology/algorithms/ring.cc), lowered them from
// 9.44 / 6.04 (max 76.55 -> 9.41 %, O-ILM-08 at 1,024 GPUs +76.55 -> +5.1 %).
// Then stream-K GEMMs on Hopper and Blackwell with kernel_launch and in_step_rate refitted together on
// the fit split (35 us, 0.93) lowered them from 3.72 / 3.16 and the held-out A100 rows from 21.20 / 12.89.
// Then Megatron-LLaMA's stack read from its code (flash-attn 1, eager SwiGLU / RoPE / cross-entropy,
// sequence parallelism) lowered the held-out rows from 18.35 / 7.47 (O-MLL 35.22 -> 22.41 % MAPE).
// Then the rows' own "sequence_parallel=True" (O-ILM-17..32, TP rows; the source's default is off)
// lowered the fit rows from 3.05 / 2.39.
constexpr Bound kSimulated[] = {{"fit", 46, 2.99, 2.21}, {"test", 9, 12.65, 7.47}};
// The closed form stopped paying the DP ring's latency once per ceil(bytes / dp_bucket_bytes)
// piece of the gradient and pays it per bucket of whole layers, as the step simulation does
// (model::GradientBuckets). That excess latency (5.6 s at InternLM-7B on 1,024 A100s) had offset
// the model's too-fast compute on these rows, so the analytic bounds rose with that fix (from fit
// 15.13 / 14.33, test 22.20 / 19.99 just before it). Then FlashAttention-1 for O-ILM and O-FA with
// the 50 us eager launch cost: fit 14.10 / 11.46 -> 11.70 / 8.32, test 29.97 / 25.34 -> 18.60 / 12.33.
// The InternLM kernel set RAISED the analytic fit rows from 11.60 / 9.16: its five single-node rows
// improve (11.01 -> 6.59 % MAPE) but the closed form already priced the 41 multi-node rows slow
// (O-ILM-11..16, 27..40 were -7 to -13 %), and the added norm and gating bytes move them further
// (multi-node 11.68 -> 12.43 %). The same kernels lower the simulated fit rows (above); the
// closed form's multi-node excess is its own error (docs/validation-measured.md).
// That excess was the closed form exposing the whole DP reduction with DP overlap at v = 1, where
// the step simulation hides each gradient bucket under the last backward; with the buckets for
// chunks it agrees with the simulation on those rows to 0.3 %. The fit median fell from 10.57, and
// the MAPEs ROSE from fit 11.80 and test 18.60 (median 12.33): the excess DP time had offset the
// compute both models price too fast on these pp = 1 rows. The test rows now sit beside the
// simulation's 21.20 / 12.89 (unchanged).
// The broadcast sync (above) lowered the fit rows from 12.40 / 9.76.
// Then the closed form queued the gradient buckets on one DP stream at v = 1 (HSDP's replica
// all-reduce outlasts the backward on O-ILM-33..43) and took the replay's overlap-interference
// floor for every overlap's alpha: lowered from fit 5.67 / 3.69, test 21.99 / 13.11; it now agrees
// with the simulation to 0.00 % on every A100 row.
// Stream-K and the refitted in-step rate and launch cost: lowered from 3.72 / 3.16, 21.19 / 12.89.
// Megatron-LLaMA's stack (above) lowered the held-out rows from 18.34 / 7.47.
// The rows' own sequence parallelism (above) lowered the fit rows from 3.04 / 2.38.
constexpr Bound kAnalytic[] = {{"fit", 46, 3.00, 2.21}, {"test", 9, 12.65, 7.47}};
// The 45 B200 rows (44 single-node O-SMXB and one FP8 MLPerf row, all in the fit split), with the b200 preset's GEMM ceiling
// and grouped fraction fitted on gemm.csv's even-numbered B200 rows (not on these runs). Lowered from
// 15.37 / 14.51 when that fit became one of summed time (1173 -> 1121.8 TFLOPS), NVLink 5 took the
// latency and bandwidth of the B200 all-reduce sweep, and the Megatron + TE sources their TE kernels;
// then from 11.36 / 10.79 (analytic 11.35 / 10.79) by the 50 us eager launch cost per op phase.
// RAISED from 6.68 / 6.78 (6.66 / 6.78) when CUDA graphs stopped removing that cost: the one graphed
// B200 row, O-MLP-05 (FP8, 64 GPUs), went from -6.1 to +14.7 % (docs/validation-measured.md, "What
// CUDA graphs remove"); the fit split as a whole improved (9.44 -> 9.15 %, analytic 9.09 -> 8.69 %).
// Lowered from 6.87 / 7.61 (6.85 / 7.50) when the alltoall dispatcher's sort by local expert and
// MLA's query / key / value layout were charged (Megatron-Core code, not these runs): the 12 MoE
// rows of O-SMXB went from 9.62 to 7.28 % (docs/validation-measured.md, "B200 MoE rows").
// Lowered from 6.25 / 5.43 (6.23 / 5.43) by stream-K GEMMs (the B200 ceiling refitted under it on the
// same even gemm.csv rows), the refitted in-step rate and launch cost, and NeMo's interleaved P2P
// overlap (O-MLP-05 +14.7 -> +2.8 %); Blackwell's overlap interference and attention heads axis
// then moved it to 3.96 / 3.65 (O-MLP-05 +5.9 %).
constexpr Bound kB200Simulated = {"fit", 45, 3.96, 3.65};
constexpr Bound kB200Analytic = {"fit", 45, 3.99, 3.65};
// The rows the 96 GB H100 preset, the source frameworks' uneven pipeline splits, the NVL72 rack
// count, torchtitan's checkpointing options and sliding-window attention made expressible
// (issue 13), plus the H100 rows predicted before: each family at its first figures, H200 and GB200
// lowered with the NVLink 5 and TE-kernel mapping above (H200 3.93 / 3.93 and 3.96 / 3.96 before,
// GB200 11.50 / 9.52 and 10.32 / 8.65), and H100-SXM5 lowered from 11.84 and 13.66 / 11.06 when
// AutoModel's rows took the DeepEP dispatch and TE kernels their notes state (its simulated median
// was then 9.56, inside the margin of its 8.93 bound).
// The 50 us eager launch cost (fitted on the whole fit split) lowered H100-96GB from 26.06 / 25.43
// (26.20 / 26.21), H200 from 3.51 / 3.51 (3.54 / 3.54) and GB200 from 9.76 / 7.88 (8.51 / 6.94), and
// RAISED H100-SXM5 from 10.24 / 8.93 (11.64 / 9.95): its eight MLPerf rows whose notes state no CUDA
// graphs were already 4-11 % slow (MLPerf's TP-comm overlap is not mapped, see the mapping) and now
// take the eager cost on top (+15 to +22 %); its four AutoModel rows improve (16.45 -> 11.99 %).
// MLPerf's TP-comm overlap (TE userbuffers, stated in every O-MLP row's notes) mapped as MoFa(20)
// in tp pieces lowered H100-SXM5 from 14.62 / 16.68 (16.01 / 16.27) and RAISED H200 from 2.50 / 2.50
// (2.45 / 2.45) and GB200 from 5.34 / 2.62 (5.42 / 3.75): both were right only because their exposed
// TP collectives made up for layer compute priced a few percent fast (H200 now -4.8 %), and GB200's
// two rows run with CUDA graphs (O-MLP-15, 16) come out -21 to -23 %, the graphs removing the whole
// 50 us eager cost per op phase while O-MLP-17, the same layout without graphs, measured no slower
// (docs/validation-measured.md, "TP-comm overlap of the MLPerf rows"). Fit split as a whole:
// 10.41 -> 10.04 % simulated, 9.63 -> 9.13 % analytic.
// CUDA graphs now remove only the host launch floors, not the fitted 50 us per op phase (the pair
// O-MLP-16 graphed / 17 eager measured 19.49 / 19.32 s): lowered H100-SXM5 from 8.19 / 5.26 (8.67 /
// 4.31; O-MLP-02, 03 -13.1 -> +3.5 %) and GB200 from 10.39 / 5.36 (9.54 / 4.81; O-MLP-15, 16 -22.7,
// -21.3 -> -11.2, -10.1 %); H200 and H100-96GB have no graphed row.
// The closed form's interference floor and bucket queue (kAnalytic above) lowered the analytic H200
// rows from 6.96 / 6.96; H100-SXM5's analytic rows moved from 6.39 / 4.31 to 6.35 / 4.74 (inside
// the margin, bound kept): O-MLP-02 and 03 came from -13 % to -2.8 % of the simulation. ZeRO-3's
// gathers slowing the pass beside them lowered H100-96GB's analytic rows from 24.78 / 23.35
// (torchtitan's FSDP2 rows now within 0.8 % of the simulation).
// AutoModel's one pipeline flush per local batch (O-AM-02, Kimi K2, GA 2: -14.1 -> -5.6 %) lowered
// H100-SXM5 from 6.71 / 4.34 (6.33 / 4.31), bounds not updated since, to its measured figures.
// RAISED with NeMo's interleaved P2P overlap (MLPerf's GPT-3 config and NeMo 2's comm-overlap callback
// set overlap_p2p_comm with vpp > 1): H200 from 4.85 / 4.85 (4.77 / 4.77) and GB200 from 7.14 / 5.36
// (6.25 / 4.81). Their layer compute is priced fast (GB200 ~13 % per micro-batch) and the blocking
// P2P sends had hidden it (docs/validation-measured.md, "MLPerf Llama-3.1-405B on GB200 and H200");
// GB200 went to 12.23 / 10.64 and back to 9.03 / 7.53 with Blackwell's overlap interference and
// attention heads axis. H100-96GB lowered from 24.65 / 22.60 (24.69 / 22.56) by stream-K and the
// refitted in-step rate and launch cost.
// RAISED: torchtitan's async TP (O-TT-11, 13, 15, 17, mapped as TP-comm overlap in tp pieces) moved
// H100-96GB from 23.26 / 22.05 (23.30 / 22.01) to 27.12 / 28.40 (27.16 / 28.30). The model's async
// speed-ups over the vanilla rows, +13.0 / +10.7 / +10.2 % (70B, 8B bf16, 8B fp8), are near the
// measured +9.2 / +9.9 / +9.7 %; what is off is the absolute rate, which is the 500 W power limit
// that this preset did not model (scenarios/presets/hardware/h100-96gb.yaml). Then the preset took
// NVIDIA's rating of the die on its 350-600 W boards (0.8445 of the SXM5's peak, GEMM ceilings
// scaled alike): lowered from 27.12 / 28.40 (27.16 / 28.30).
// One set of GEMM ceilings per die (H200 on H100's, GB200 on B200's instead of their own MAMF rows)
// lowered H200 from 5.29 / 5.29 (5.05 / 5.05) and GB200 from 9.03 / 7.53 (7.72 / 6.31).
// RAISED: Qwen3's head dim of 128 (its config.json; the mapping had taken hidden / heads = 64) made
// the fit row O-AM-03 (Qwen3-30B-A3B under AutoModel) +10.7 % slow instead of -3.7 % fast: H100-SXM5
// from 4.36 / 2.29 (4.81 / 3.18). New: the held-out B200 rows of Megatron-Bridge's performance summary
// (O-MBR), expressible once their recompute is the recipe's (measured_open_recipes.h); its dense rows
// are within 8 %, its MoE rows 10-123 % fast (docs/validation-measured.md). Its three DeepSeek-V3 rows
// joined with the recipe's pipeline layout and MTP layer (12 -> 15 rows; 33.27 / 17.41 before).
// The two OCI MLPerf rows (O-MLP-06, 07: GPT-3 on 1,536 and 3,072 H100s) joined the H100-SXM5 fit rows
// when the interconnect of a system named by product came from its data sheet (BM.GPU.H100.8,
// 3.2 Tb/s per node): +1.2 and -13.7 % (13 -> 15 rows; 4.90 / 2.29 and 5.35 / 3.18 before).
// DeepEP's NVLink hop now sends a token once per GPU holding its experts, not once per expert
// (O-AM-03 +10.7 -> +1.8 %, O-AM-04 -9.3 -> -10.8 %, with a token's k experts distinct): H100-SXM5
// lowered from 5.24 / 2.29 (analytic 5.66 / 3.18).
// torchtitan's tensor parallelism became sequence-parallel, as its apply_tp shards it, and per-op
// SAC re-runs its all-gathers (H100-96GB, held out: 19.83 / 23.58 -> 20.82 / 22.74). The vanilla-TP
// rows moved toward the measurements (O-TT-14 27.8 -> 23.8 %, O-TT-16 25.4 -> 21.0 %), the async-TP
// rows away (O-TT-13 13.7 -> 23.1 %, O-TT-15 28.9 -> 32.9 %, O-TT-17 26.1 -> 34.1 %): the
// micro-pipelined all-gathers and reduce-scatters now hide more than the measured async-TP gains.
// RAISED: the Megatron-Bridge recipes' own overlaps (measured_open_recipes.h: userbuffers TP-comm
// overlap for Llama 3.1 405B, the all-to-all overlap of 25.11's Qwen3-235B on B200) made the held-out
// B200 rows from 30.36 / 18.88 (30.67 / 21.05) faster still: O-MBR-06, 12 +0.9, +1.8 -> +8.8, +9.9 %,
// O-MBR-10 +52.1 -> +67.4 %. Read from the recipes, kept although these rows moved away.
struct FamilyBounds {
  const char* gpu;
  Bound simulated;
  Bound analytic;
};
constexpr FamilyBounds kNewFamilies[] = {
    {"H100-SXM5-80GB", {"fit", 15, 4.76, 1.80}, {"fit", 15, 5.19, 2.47}},
    {"H100-96GB", {"test", 9, 20.82, 22.74}, {"test", 9, 20.83, 22.56}},
    {"H200", {"fit", 2, 2.79, 2.79}, {"fit", 2, 2.54, 2.54}},
    {"GB200", {"fit", 7, 6.26, 4.87}, {"fit", 7, 4.94, 3.64}},
    {"B200", {"test", 15, 32.45, 18.88}, {"test", 15, 33.14, 21.05}},
};

ErrorStats gpu_stats(const OpenValidation& v, const std::string& gpu, const std::string& split) {
  std::vector<double> ape;
  std::vector<double> slower;
  for (const auto& c : v.rows) {
    if (c.predicted() && c.mapped.gpu_family == gpu && c.mapped.split == split) {
      ape.push_back(std::abs(c.error_percent()));
      slower.push_back(c.slower_percent());
    }
  }
  return error_stats(ape, slower);
}

class OpenSetAccuracy : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kRuns)) GTEST_SKIP() << "the open set is not at " << kRuns << "; skipping";
  }
  static void check(const OpenValidation& v, const Bound (&bounds)[2], const char* predictor) {
    for (const Bound& b : bounds) check_gpu(v, "A100-SXM4-80GB", b, predictor);
  }
  static void check_gpu(const OpenValidation& v, const std::string& gpu, const Bound& b, const char* predictor) {
    const ErrorStats s = gpu_stats(v, gpu, b.split);
    EXPECT_EQ(s.count, b.rows) << predictor << " " << gpu << " " << b.split;
    EXPECT_LE(s.mape, b.mape + kMargin) << predictor << " " << gpu << " " << b.split << " MAPE regressed";
    EXPECT_LE(s.median_ape, b.median + kMargin) << predictor << " " << gpu << " " << b.split << " median regressed";
  }
};

TEST_F(OpenSetAccuracy, EveryRowIsReadAndEveryRowNotPredictedHasAReason) {
  const OpenValidation v = run_open_validation({kRuns}, analytic_step_predictor());
  ASSERT_EQ(v.rows.size(), 175u);  // README §1
  int fit = 0;
  for (const auto& c : v.rows) {
    EXPECT_EQ(c.predicted(), c.mapped.reasons.empty()) << c.run.id;
    if (c.mapped.split == "fit") ++fit;
  }
  EXPECT_EQ(fit, 44 + 46 + 4 + 21);  // O-SMXB, O-ILM, O-AM, O-MLP (read; predicted or listed)
  EXPECT_GE(v.predicted_count(), 148);  // 28 at the first read, 78 with the kernel model, 104 with issue 13's features, 146 with Megatron-Bridge's recipes, 148 with named systems' fabrics
}

// InternLM's FLOP convention (measured_open_quantity.h) against the TFLOPS InternLM published next
// to its measured tokens/s (rows O-ILM-33..46, "published TFLOPS/GPU X" in notes): the measured
// step in that convention gives the published figure to within 3.2% (the two were rounded and
// partly measured in separate runs).
TEST_F(OpenSetAccuracy, InternLmConventionReproducesThePublishedTflops) {
  const OpenValidation v = run_open_validation({kRuns}, analytic_step_predictor());
  int checked = 0;
  for (const auto& c : v.rows) {
    const auto at = c.run.notes.find("published TFLOPS/GPU ");
    if (c.run.source_group() != "O-ILM" || at == std::string::npos) continue;
    const double published = std::stod(c.run.notes.substr(at + 21));
    OpenRun as_tflops = c.run;
    as_tflops.quantity = OpenQuantity::kTflopsPerGpu;
    const double step = measured_step_seconds(c.run, c.mapped.recompute);
    const double ours = convention_flops_per_step(as_tflops, FlopConvention::kInternLmMegatron, c.mapped.recompute) /
                        (step * c.run.gpus) / 1e12;
    EXPECT_NEAR(ours, published, 0.035 * published) << c.run.id;
    ++checked;
  }
  EXPECT_EQ(checked, 14);
}

TEST_F(OpenSetAccuracy, StepSimulationStaysWithinTodaysErrors) {
  check(run_open_validation({kRuns}, simulated_step_predictor()), kSimulated, "simulated");
}

TEST_F(OpenSetAccuracy, AnalyticModelStaysWithinTodaysErrors) {
  check(run_open_validation({kRuns}, analytic_step_predictor()), kAnalytic, "analytic");
}

TEST_F(OpenSetAccuracy, SingleNodeB200StaysWithinTodaysErrors) {
  check_gpu(run_open_validation({kRuns}, simulated_step_predictor()), "B200", kB200Simulated, "simulated");
  check_gpu(run_open_validation({kRuns}, analytic_step_predictor()), "B200", kB200Analytic, "analytic");
}

TEST_F(OpenSetAccuracy, H100H200AndGb200RowsStayWithinTheirFirstErrors) {
  const OpenValidation simulated = run_open_validation({kRuns}, simulated_step_predictor());
  const OpenValidation analytic = run_open_validation({kRuns}, analytic_step_predictor());
  for (const FamilyBounds& f : kNewFamilies) {
    check_gpu(simulated, f.gpu, f.simulated, "simulated");
    check_gpu(analytic, f.gpu, f.analytic, "analytic");
  }
}

}  // namespace
}  // namespace mofasim::analysis
