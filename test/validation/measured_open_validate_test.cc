// The open-set comparison: each quantity against a hand-worked value, InternLM's FLOP convention on
// a tiny model, and a whole run on a small file with a fixed predictor (groups, signs, CSV, JSON).
#include "sim/analysis/measured_open_validate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <sstream>

#include "sim/analysis/measured_open_quantity.h"
#include "test/validation/open_rows_for_test.h"

namespace mofasim::analysis {
namespace {

using test::open_csv;
using test::open_row;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(OpenQuantity, TokensPerSecondPerGpuIsTheStepTimeInverted) {
  const OpenRun r = open_row();  // 128 sequences of 2048 tokens on 16 GPUs
  // 128 * 2048 / (4 s * 16) = 4096 tokens/s/GPU.
  EXPECT_DOUBLE_EQ(predicted_quantity(r, 4.0, model::RecomputeKind::kNone), 4096);
  // Measured 3842 tokens/s/GPU: 262144 / (3842 * 16) = 4.26445 s.
  EXPECT_NEAR(measured_step_seconds(r, model::RecomputeKind::kNone), 4.264445, 1e-6);
  const OpenRun step = open_row({{"measured_quantity", "step_s"}, {"measured_value", "2.5"}});
  EXPECT_DOUBLE_EQ(predicted_quantity(step, 4.0, model::RecomputeKind::kNone), 4.0);
  EXPECT_DOUBLE_EQ(measured_step_seconds(step, model::RecomputeKind::kNone), 2.5);
}

TEST(OpenQuantity, InternLmFlopConventionOnATinyModel) {
  // L = 2, h = 4, ffn 8 (r = 2), B = 1, s = 2, V = 10:
  //   per layer (8 + 4*1.5*2)*B*s*h^2 + 4*B*s^2*h = 20*32 + 64 = 704
  //   f = 3: 3 * 704 * 2 = 4224, + 6*B*s*h*V = 480 -> 4704;  f = 4: 5632 + 480 = 6112.
  const OpenRun r = open_row({{"layers", "2"}, {"hidden", "4"}, {"heads", "1"}, {"kv_heads", "1"}, {"ffn_hidden", "8"},
                              {"vocab", "10"}, {"seq", "2"}, {"gpus", "1"}, {"dp", "1"}, {"micro_batch", "1"},
                              {"global_batch", "1"}, {"measured_quantity", "tflops_per_gpu"},
                              {"flops_convention", "InternLM get_megatron_flops (Narayanan-style): ..."}});
  ASSERT_EQ(recognised_flop_convention(r.flops_convention), FlopConvention::kInternLmMegatron);
  EXPECT_DOUBLE_EQ(convention_flops_per_step(r, FlopConvention::kInternLmMegatron, model::RecomputeKind::kNone), 4704);
  EXPECT_DOUBLE_EQ(convention_flops_per_step(r, FlopConvention::kInternLmMegatron, model::RecomputeKind::kFull), 6112);
  // 4704 FLOPs in 1e-9 s on one GPU = 4.704e12 FLOP/s = 4.704 TFLOPS.
  EXPECT_NEAR(predicted_quantity(r, 1e-9, model::RecomputeKind::kNone), 4.704, 1e-12);
  EXPECT_FALSE(quantity_not_comparable(r).has_value());
}

// The Megatron papers' GPT formulas, named by the text, on a tiny model (B = 2, s = 4, L = 1, h = 8,
// V = 16): Narayanan 96*2*4*1*64 * (1 + 4/48 + 16/128) = 49152 * 1.208333 = 59392; Korthikanti
// 72*2*4*1*64 * (1 + 4/48 + 16/96) = 36864 * 1.25 = 46080. Neither depends on the run's recompute.
TEST(OpenQuantity, MegatronPaperFlopConventionsOnATinyModel) {
  const auto row = [](const std::string& convention) {
    return open_row({{"layers", "1"}, {"hidden", "8"}, {"heads", "1"}, {"kv_heads", "1"}, {"vocab", "16"}, {"seq", "4"},
                     {"gpus", "1"}, {"dp", "1"}, {"micro_batch", "2"}, {"global_batch", "2"},
                     {"measured_quantity", "tflops_per_gpu"}, {"flops_convention", convention}});
  };
  const OpenRun ptdp = row("Megatron-LM paper formula (Narayanan et al. 2021), full recompute");
  ASSERT_EQ(recognised_flop_convention(ptdp.flops_convention), FlopConvention::kNarayanan);
  EXPECT_EQ(recognised_flop_convention("96·B·s·l·h² (1 + s/6h + V/16lh)"), FlopConvention::kNarayanan);
  EXPECT_DOUBLE_EQ(convention_flops_per_step(ptdp, FlopConvention::kNarayanan, model::RecomputeKind::kNone), 59392);
  EXPECT_DOUBLE_EQ(convention_flops_per_step(ptdp, FlopConvention::kNarayanan, model::RecomputeKind::kFull), 59392);
  const OpenRun model_flops = row("model FLOPs, Korthikanti et al. 2022");
  ASSERT_EQ(recognised_flop_convention(model_flops.flops_convention), FlopConvention::kKorthikantiModel);
  EXPECT_EQ(recognised_flop_convention("72*B*s*L*h^2*(1 + s/(6h) + V/(12hL))"), FlopConvention::kKorthikantiModel);
  EXPECT_DOUBLE_EQ(convention_flops_per_step(model_flops, FlopConvention::kKorthikantiModel, model::RecomputeKind::kNone),
                   46080);
  EXPECT_FALSE(quantity_not_comparable(ptdp).has_value());
  EXPECT_EQ(recognised_flop_convention("SimuMax/Megatron model FLOPs per GPU per second"), std::nullopt);
}

// torchtitan's 6·N + 12·L·H·Q·T on O-TT-01's row (Llama2-13B: L 40, h 5120, 40 heads of 128, MHA,
// ffn 13824, V 32000, seq 4096): N = 40 * (4 * 5120^2 + 3 * 5120 * 13824 + 2 * 5120) + 5120 + 32000 *
// 5120 = 12,852,024,320; per token 6N + 12 * 40 * 40 * 128 * 4096 = 77,112,145,920 + 10,066,329,600.
// At its 2,162 tokens/s/GPU against 312 TF that is 60.4 % MFU; torchtitan published 61.1 %.
TEST(OpenQuantity, TorchtitanSixNConventionAndMfuOnAPublishedRow) {
  const std::map<std::string, std::string> llama13b = {
      {"gpu", "A100-SXM4-80GB"}, {"gpus", "64"}, {"layers", "40"}, {"hidden", "5120"}, {"heads", "40"},
      {"kv_heads", "40"}, {"ffn_hidden", "13824"}, {"vocab", "32000"}, {"seq", "4096"}, {"dp", "64"},
      {"micro_batch", "2"}, {"global_batch", "128"},
      {"flops_convention", "torchtitan get_num_flop_per_token: 6*N_nonembedding + 12*L*H*Q*T (non-causal attention)"}};
  auto row = [&](const std::map<std::string, std::string>& extra) {
    auto cells = llama13b;
    for (const auto& [k, v] : extra) cells[k] = v;
    return open_row(cells);
  };
  const OpenRun mfu = row({{"measured_quantity", "mfu"}, {"measured_value", "0.611"}});
  ASSERT_EQ(recognised_flop_convention(mfu.flops_convention), FlopConvention::kSixNPlusAttention);
  EXPECT_DOUBLE_EQ(*six_n_parameters(mfu), 12852024320.0);
  const double per_token = 6 * 12852024320.0 + 12.0 * 40 * 40 * 128 * 4096;
  EXPECT_DOUBLE_EQ(convention_flops_per_step(mfu, FlopConvention::kSixNPlusAttention, model::RecomputeKind::kNone),
                   per_token * 128 * 4096);
  EXPECT_DOUBLE_EQ(*mfu_peak_flops(mfu), 312e12);  // the A100's dense BF16 peak (no peak in the row)
  const double step_at_2162 = 128.0 * 4096 / (2162.0 * 64);
  EXPECT_NEAR(predicted_quantity(mfu, step_at_2162, model::RecomputeKind::kNone), 0.6041, 5e-4);
  EXPECT_FALSE(quantity_not_comparable(mfu).has_value());
  // The measured MFU back to a step: 61.1 % is 0.6041 / 0.611 of that step.
  EXPECT_NEAR(measured_step_seconds(mfu, model::RecomputeKind::kNone), step_at_2162 * 0.6041 / 0.611, 1e-3);

  // One peak the row states wins; a list of them leaves it to the GPU; FP8 peak where it says so.
  EXPECT_DOUBLE_EQ(*mfu_peak_flops(row({{"notes", "MFU vs 989 TF"}})), 989e12);
  EXPECT_DOUBLE_EQ(*mfu_peak_flops(row({{"notes", "MFU vs 312 TF (A100) / 989 TF (H100 SXM)"}})), 312e12);
  EXPECT_DOUBLE_EQ(*mfu_peak_flops(row({{"gpu", "H100-96GB (Grand Teton)"}})), 989e12);
  EXPECT_DOUBLE_EQ(*mfu_peak_flops(row({{"gpu", "GB200"}, {"notes", "MFU against the FP8 peak"}})), 5000e12);
  EXPECT_EQ(mfu_peak_flops(row({{"gpu", "MI300X"}})), std::nullopt);
  EXPECT_THAT(*quantity_not_comparable(row({{"gpu", "MI300X"}, {"measured_quantity", "mfu"}})),
              HasSubstr("neither the row nor its GPU gives the peak"));
  // MoE rows: N is not counted here.
  EXPECT_THAT(*quantity_not_comparable(row({{"measured_quantity", "tflops_per_gpu"}, {"moe_experts", "8"},
                                            {"moe_topk", "2"}, {"moe_ffn_hidden", "1024"}})),
              HasSubstr("whose N is not counted here"));
  // An mfu row under a convention without a formula here is listed for that.
  EXPECT_THAT(*quantity_not_comparable(row({{"measured_quantity", "mfu"}, {"flops_convention", "6ND + attention"}})),
              HasSubstr("mfu under a FLOP convention whose formula the row does not state (6ND + attention)"));
}

TEST(OpenQuantity, InternLmFlopConventionReproducesAPublishedFigure) {
  // O-ILM-33 (InternLM-7B, 8 A100s, activation checkpointing on): 3314 tokens/s/GPU, 64 sequences
  // of 2048 per step, so step = 131072 / (3314 * 8) = 4.94387 s. mlp_ratio 8/3 (11008 is its
  // rounding): 4 * ((8 + 16) * 64*2048*4096^2 + 4 * 64*2048^2*4096) * 32 + 6 * 64*2048*4096*103168
  // = 7.6505e15 FLOPs; / (4.94387 s * 8) = 193.43 TFLOPS/GPU. InternLM published 193.
  const OpenRun r = open_row({{"gpus", "8"}, {"dp", "8"}, {"micro_batch", "8"}, {"global_batch", "64"},
                              {"measured_quantity", "tflops_per_gpu"}, {"measured_value", "193"},
                              {"flops_convention", "InternLM get_megatron_flops (Narayanan-style)"}});
  EXPECT_NEAR(predicted_quantity(r, 131072.0 / (3314 * 8), model::RecomputeKind::kFull), 193.43, 0.01);
}

class OpenRunFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("open_runs_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".csv"))
                .string();
    std::ofstream(path_) << open_csv({
        // Fit (O-ILM), tokens/s: 262144 tokens per step on 16 GPUs, measured 4096 tokens/s/GPU = 4 s.
        {{"id", "O-ILM-01"}, {"measured_value", "4096"}},
        // Test (O-FA), step_s 2.5 s on 8 GPUs.
        {{"id", "O-FA-01"}, {"gpus", "8"}, {"dp", "8"}, {"global_batch", "64"}, {"measured_quantity", "step_s"},
         {"measured_value", "2.5"}, {"model", "GPT3-125M (flash)"}, {"interconnect", "single node, NVLink"}},
        // Not expressible: FP8 on the A100 (no FP8 peak).
        {{"id", "O-MLP-01"}, {"precision", "fp8 (TE hybr)"}},
        {{"id", "O-MLP-02"}, {"precision", "fp8 (TE hybr)"}},
    });
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

// Every row takes 2 s: O-ILM-01 is 2x too fast (8192 vs 4096 tokens/s, +100% in its quantity,
// -100% slower), O-FA-01 is 20% too fast (2 s vs 2.5 s). The 2 s: 1.5 s compute, 0.25 s exposed TP,
// 0.25 s bubble.
const StepPredictor kTwoSeconds = [](const MeasuredCase&) {
  return StepPrediction{.step_s = 2.0, .breakdown = PredictedBreakdown{.compute = 1.5, .tp = 0.25, .pp_bubble = 0.25}};
};

TEST_F(OpenRunFile, RowsAreComparedInTheirOwnQuantityAndGrouped) {
  const OpenValidation v = run_open_validation({path_}, kTwoSeconds);
  ASSERT_EQ(v.rows.size(), 4u);
  EXPECT_EQ(v.predicted_count(), 2);
  EXPECT_DOUBLE_EQ(v.rows[0].predicted_value, 8192);
  EXPECT_DOUBLE_EQ(v.rows[0].error_percent(), 100);
  EXPECT_DOUBLE_EQ(v.rows[0].slower_percent(), -100);
  EXPECT_DOUBLE_EQ(v.rows[0].measured_step_s, 4);
  EXPECT_DOUBLE_EQ(v.rows[1].error_percent(), -20);
  EXPECT_DOUBLE_EQ(v.rows[1].slower_percent(), -20);
  EXPECT_FALSE(v.rows[2].predicted());
  auto find = [&](const std::string& grouping, const std::string& name) {
    for (const auto& s : v.stats) {
      if (s.grouping == grouping && s.name == name) return s.stats;
    }
    return ErrorStats{.count = -1};
  };
  EXPECT_EQ(find("all", "all").count, 2);
  EXPECT_DOUBLE_EQ(find("all", "all").mape, 60);
  EXPECT_DOUBLE_EQ(find("all", "all").median_ape, 60);
  EXPECT_DOUBLE_EQ(find("all", "all").max_ape, 100);
  EXPECT_DOUBLE_EQ(find("all", "all").mean_signed, -60);
  EXPECT_EQ(find("split", "fit").count, 1);
  EXPECT_DOUBLE_EQ(find("split", "fit").mape, 100);
  EXPECT_EQ(find("split", "test").count, 1);
  EXPECT_DOUBLE_EQ(find("split", "test").mape, 20);
  EXPECT_EQ(find("source", "O-FA").count, 1);
  EXPECT_EQ(find("source", "O-MLP").count, -1);  // no predicted row: no statistics
  EXPECT_EQ(find("gpu", "A100-SXM4-80GB").count, 2);
  EXPECT_EQ(find("kind", "dense").count, 2);
  EXPECT_EQ(find("kind", "MoE").count, -1);
  ASSERT_EQ(v.not_expressible.size(), 1u);
  EXPECT_THAT(v.not_expressible[0].first, HasSubstr("FP8 training"));
  EXPECT_THAT(v.not_expressible[0].second, ::testing::ElementsAre("O-MLP-01", "O-MLP-02"));

  const std::string md = open_report_markdown(v);
  EXPECT_THAT(md, HasSubstr("| all | 2 | 60.00 | 60.00 | 100.00 | -60.00 |"));
  EXPECT_THAT(md, HasSubstr("| O-FA | 1 | 20.00 | 20.00 | 20.00 | -20.00 |"));
  EXPECT_THAT(md, HasSubstr("Not expressible yet: 2 of 4 rows"));
  EXPECT_THAT(md, HasSubstr("FP8 training on a GPU preset without an FP8 peak | 2 | O-MLP-01..02 |"));
  std::ostringstream csv;
  write_open_csv(csv, v);
  EXPECT_THAT(csv.str(), StartsWith("id,split,source,gpu,kind,gpus,quantity,measured,predicted,error_percent,"
                                    "measured_step_s,predicted_step_s,compute_s,recompute_s,tp_s,cp_s,ep_s,pp_comm_s,"
                                    "dp_s,offload_s,pp_bubble_s,optimizer_s,not_expressible\n"));
  EXPECT_THAT(csv.str(), HasSubstr("\nO-ILM-01,fit,O-ILM,A100-SXM4-80GB,dense,16,tokens_per_s_per_gpu,4096,8192,100.00,4,2,"
                                   "1.5,0,0.25,0,0,0,0,0,0.25,0,\n"));
  EXPECT_THAT(csv.str(),
              HasSubstr("\nO-MLP-01,fit,O-MLP,A100-SXM4-80GB,dense,16,tokens_per_s_per_gpu,3842,,,,,,,,,,,,,,,FP8 training on a GPU preset without an FP8 peak\n"));
  const nlohmann::json j = open_json(v, "fixed");
  EXPECT_EQ(j["predicted_rows"], 2);
  EXPECT_EQ(j["rows"][2]["not_expressible"].size(), 1u);
  EXPECT_EQ(j["not_expressible"][0]["ids"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["rows"][1]["error_percent"].get<double>(), -20);
  EXPECT_DOUBLE_EQ(j["rows"][1]["breakdown"]["compute_s"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["rows"][1]["breakdown"]["tp_s"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j["rows"][1]["breakdown"]["pp_bubble_s"].get<double>(), 0.25);
  EXPECT_EQ(j["rows"][1]["breakdown"].size(), 10u);
  EXPECT_FALSE(j["rows"][2].contains("breakdown"));
  const std::string svg = open_scatter_svg(v, "fixed");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 10, true);
}

TEST_F(OpenRunFile, FilesOfTwoFormatsAreRefused) {
  const std::string vtrain = path_ + ".vtrain.csv";
  std::ofstream(vtrain) << "# GPUs,global batch\n1,1\n";
  EXPECT_TRUE(measured_files_are_open_set({path_}));
  EXPECT_FALSE(measured_files_are_open_set({vtrain}));
  try {
    (void)measured_files_are_open_set({path_, vtrain});
    ADD_FAILURE() << "mixed formats accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--measured: " + path_ + " is in the open-set format but " + vtrain +
                                         " is not; give files of one format");
  }
  std::filesystem::remove(vtrain);
}

}  // namespace
}  // namespace mofasim::analysis
