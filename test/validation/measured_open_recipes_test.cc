// Recompute of Megatron-Bridge's performance recipes for the summary rows that leave it to them, and
// Qwen3's head dim: each against the recipe / config it is read from.
#include "sim/analysis/measured_open_recipes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "model/recompute_modules.h"
#include "sim/analysis/measured_open_mapping.h"
#include "test/validation/open_rows_for_test.h"

namespace mofasim::analysis {
namespace {

using test::open_row;
using model::recompute_bit;
using model::RecomputeModule;

constexpr const char* kBridge = "github.com/NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md @ 00b7660";
constexpr const char* kLeftToRecipe = "not stated (Megatron-Bridge performance-recipe defaults)";

OpenRun bridge_row(const std::string& model, const std::string& gpu) {
  return open_row({{"id", "H-1"}, {"source", kBridge}, {"model", model}, {"gpu", gpu}, {"recompute", kLeftToRecipe}});
}

constexpr const char* kNemo = "github.com/NVIDIA/NeMo docs/source/performance/performance_summary.md @ 070a0bb";

OpenRun nemo_row(const std::string& model, const std::string& gpu) {
  return open_row({{"id", "H-1"}, {"source", kNemo}, {"model", model}, {"gpu", gpu},
                   {"recompute", "not stated (NeMo performance defaults)"}});
}

TEST(OpenRecipes, OnlyANvidiaRecipeRowThatLeavesRecomputeToTheRecipe) {
  EXPECT_EQ(nvidia_recipe_set(bridge_row("Llama3-8B", "B200")), NvidiaRecipeSet::kMegatronBridge);
  // Another framework's row saying the same is not an NVIDIA recipe.
  EXPECT_FALSE(recompute_left_to_nvidia_recipe(
      open_row({{"id", "H-1"}, {"source", "github.com/pytorch/torchtitan"}, {"recompute", kLeftToRecipe}})));
  // NeMo's own performance scripts are the other set, whichever column names NeMo.
  EXPECT_EQ(nvidia_recipe_set(nemo_row("Llama3-70B", "H100")), NvidiaRecipeSet::kNemo);
  EXPECT_EQ(nvidia_recipe_set(open_row({{"id", "H-1"}, {"source", "docs.nvidia.com/nemo-framework performance summary"},
                                        {"recompute", "not stated (NeMo performance-recipe defaults)"}})),
            NvidiaRecipeSet::kNemo);
  // "not stated" alone does not name the recipe.
  EXPECT_FALSE(recompute_left_to_nvidia_recipe(
      open_row({{"id", "H-1"}, {"source", kBridge}, {"recompute", "not stated by the source"}})));
  // MLPerf's submissions run NVIDIA's stack but state their recompute in their configs.
  EXPECT_FALSE(recompute_left_to_nvidia_recipe(
      open_row({{"id", "H-1"}, {"source", "github.com/mlcommons/training_results_v5.0 NVIDIA"},
                {"recompute", "not stated (NeMo defaults)"}})));
}

TEST(OpenRecipes, NemosPerformanceConfigsRecomputeNothingForTheModelsTheyMatch) {
  using model::RecomputeKind;
  for (const char* model : {"Llama2-70B", "LLaMA-2 13B", "Llama3-8B", "Llama3.1-405B", "GPT3-175B",
                            "Nemotron-4 340B", "Mixtral-8x7B"}) {
    const auto r = nvidia_recipe_recompute(nemo_row(model, "H100 (DGX H100)"));
    ASSERT_TRUE(r.has_value()) << model;
    EXPECT_EQ(r->kind, RecomputeKind::kNone) << model;
  }
  // Layouts whose configs disagree (GPT-3 5B: none and selective) and models not read stay listed,
  // with the set named in the reason.
  EXPECT_EQ(nvidia_recipe_recompute(nemo_row("GPT3-5B", "H100")), std::nullopt);
  EXPECT_EQ(nvidia_recipe_recompute(nemo_row("DeepSeek-V3 (671B, MLA)", "H100")), std::nullopt);
  const OpenCase ds = map_open_run(open_row(
      {{"source", kNemo}, {"recompute", "not stated (NeMo performance defaults)"}, {"model", "GPT3-5B"}}));
  EXPECT_THAT(ds.reasons, ::testing::Contains(::testing::HasSubstr("NeMo performance recipe not read for model 'GPT3-5B'")));
  // The Megatron-Bridge recipe's DeepSeek-V3 layout is not NeMo's.
  EXPECT_EQ(nvidia_recipe_model(nemo_row("DeepSeek-V3 (671B, MLA)", "H100"), 16), std::nullopt);
  // A NeMo row the schema expresses now predicts: LLaMA-2 70B on 64 H100s as NeMo 24.07's table lays it out.
  const OpenCase llama = map_open_run(open_row({{"source", kNemo},
                                                {"recompute", "not stated (NeMo performance defaults)"},
                                                {"model", "Llama2-70B"}}));
  EXPECT_TRUE(llama.spec.has_value()) << (llama.reasons.empty() ? "" : llama.reasons.front());
}

TEST(OpenRecipes, TheRecipesRecomputePerModelAndSystem) {
  using model::RecomputeKind;
  EXPECT_EQ(nvidia_recipe_recompute(bridge_row("Llama3.1-405B", "B200 (DGX B200)"))->kind, RecomputeKind::kNone);
  EXPECT_EQ(nvidia_recipe_recompute(bridge_row("Qwen3-235B-A22B", "H100"))->kind, RecomputeKind::kNone);
  // gpt-oss-120b: layernorm + moe_act on B200, GB200 and H100; none on GB300 (CUDA graphs instead).
  const auto oss = nvidia_recipe_recompute(bridge_row("gpt-oss-120b", "B200 (DGX B200)"));
  EXPECT_EQ(oss->kind, RecomputeKind::kSelective);
  EXPECT_EQ(oss->modules, recompute_bit(RecomputeModule::kLayernorm) | recompute_bit(RecomputeModule::kMoeAct));
  EXPECT_EQ(nvidia_recipe_recompute(bridge_row("gpt-oss-120b", "GB300"))->kind, RecomputeKind::kNone);
  // DeepSeek-V3: mla_up_proj; on H100 mla_up_proj and mlp.
  EXPECT_EQ(nvidia_recipe_recompute(bridge_row("DeepSeek-V3 (671B, MLA)", "GB200"))->modules,
            recompute_bit(RecomputeModule::kMlaUpProj));
  EXPECT_EQ(nvidia_recipe_recompute(bridge_row("DeepSeek-V3 (671B, MLA)", "H100"))->modules,
            recompute_bit(RecomputeModule::kMlaUpProj) | recompute_bit(RecomputeModule::kMlp));
  EXPECT_EQ(nvidia_recipe_recompute(bridge_row("Nemotron-H 56B", "H100")), std::nullopt);
}

// Through the mapping: the recipe's modules become the row's selective set, and a model whose
// recipe was not read stays listed with that reason.
TEST(OpenRecipes, TheMappingTakesTheRecipesRecomputeOrListsTheRow) {
  const OpenCase llama = map_open_run(bridge_row("Llama3-8B", "A100-SXM4-80GB"));
  ASSERT_TRUE(llama.spec.has_value()) << llama.reasons.front();
  EXPECT_EQ(llama.recompute, model::RecomputeKind::kNone);
  const OpenCase other = map_open_run(bridge_row("InternLM-7B", "A100-SXM4-80GB"));
  EXPECT_FALSE(other.spec.has_value());
  EXPECT_THAT(other.reasons, ::testing::Contains(::testing::HasSubstr("performance recipe not read for model 'InternLM-7B'")));
}

// DeepSeek-V3's recipe: one MTP layer, and the library's pipeline layouts by chunk count (the
// embedding with the first chunk, the MTP layer and the loss with the last).
TEST(OpenRecipes, DeepSeekV3TakesTheRecipesMtpLayerAndPipelineLayout) {
  OpenRun ds = bridge_row("DeepSeek-V3 (671B, MLA; first 3 layers dense FFN 18432)", "B200 (DGX B200)");
  ds.layers = 61;
  const auto sixteen = nvidia_recipe_model(ds, 16);
  ASSERT_TRUE(sixteen.has_value());
  EXPECT_EQ(sixteen->mtp_depth, 1);
  ASSERT_EQ(sixteen->stage_layers.size(), 16U);
  EXPECT_EQ(sixteen->stage_layers.front(), 4);
  EXPECT_EQ(sixteen->stage_layers[14], 4);
  EXPECT_EQ(sixteen->stage_layers.back(), 1);  // 4 + 14 x 4 + 1 = 61
  const auto eight = nvidia_recipe_model(ds, 8);
  EXPECT_EQ(eight->stage_layers, (std::vector<int>{8, 8, 8, 8, 8, 8, 8, 5}));
  const auto h100 = nvidia_recipe_model(ds, 32);  // "Et|(tt|)*30mL": 1 + 30 x 2 + 0 = 61
  ASSERT_EQ(h100->stage_layers.size(), 32U);
  EXPECT_EQ(h100->stage_layers.front(), 1);
  EXPECT_EQ(h100->stage_layers[30], 2);
  EXPECT_EQ(h100->stage_layers.back(), 0);
  EXPECT_TRUE(nvidia_recipe_model(ds, 12)->stage_layers.empty());  // no layout for 12 chunks
  EXPECT_EQ(nvidia_recipe_model(bridge_row("Llama3-8B", "B200"), 16), std::nullopt);
  // Through the mapping: the pp 16 summary row is priced with that split and the MTP layer.
  const OpenCase c = map_open_run(open_row(
      {{"id", "H-1"}, {"source", kBridge}, {"recompute", kLeftToRecipe}, {"model", ds.model}, {"gpu", "B200 (DGX B200)"},
       {"gpus", "256"}, {"interconnect", "DGX B200; 8x 400 Gb/s IB per node"}, {"layers", "61"}, {"hidden", "7168"},
       {"heads", "128"}, {"kv_heads", ""}, {"ffn_hidden", "18432"}, {"vocab", "129280"}, {"seq", "4096"},
       {"moe_experts", "256"}, {"moe_topk", "8"}, {"moe_ffn_hidden", "2048"}, {"shared_experts", "1"}, {"pp", "16"},
       {"dp", "16"}, {"ep", "8"}, {"micro_batch", "1"}, {"global_batch", "2048"}}));
  ASSERT_TRUE(c.spec.has_value()) << c.reasons.front();
  EXPECT_EQ(c.spec->parallel.stage_layers, sixteen->stage_layers);
  EXPECT_EQ(c.spec->model.mtp_depth, 1);
}

// A DeepSeek-V3 row of any source runs the MTP module where its text says so.
TEST(OpenRecipes, AnMlaRowWithMtpInItsTextRunsTheModule) {
  const auto mtp_of = [](const std::string& notes) {
    const OpenCase c = map_open_run(open_row(
        {{"id", "X-1"}, {"model", "DeepSeek-V3 (671B, MLA; first 3 layers dense FFN 18432)"}, {"layers", "4"},
         {"hidden", "7168"}, {"heads", "128"}, {"kv_heads", ""}, {"ffn_hidden", "18432"}, {"moe_experts", "256"},
         {"moe_topk", "8"}, {"moe_ffn_hidden", "2048"}, {"shared_experts", "1"}, {"notes", notes}}));
    EXPECT_TRUE(c.spec.has_value()) << (c.reasons.empty() ? "" : c.reasons.front());
    return c.spec ? c.spec->model.mtp_depth : -1;
  };
  EXPECT_EQ(mtp_of("archive labels this row 'w/ MTP'"), 1);
  EXPECT_EQ(mtp_of("uncertain: MTP layer (DeepSeek)"), 0);
  EXPECT_EQ(mtp_of("derived step_s=14.5"), 0);
}

// Megatron FSDP rows on Grace-Blackwell: the recipe also offloads some layers' activations.
// Megatron-Bridge's Llama recipes do; NeMo's GB200 configs do for Llama 3.1 405B (95 layers), not
// for Llama3-70B; DDP rows and other GPUs do not.
TEST(OpenRecipes, PartialCpuOffloadOfTheFsdpRecipesIsAReason) {
  constexpr const char* kFsdp = "Megatron FSDP (FSDP=1)";
  constexpr const char* kDdp = "DDP + Megatron distributed optimizer (recipe default; FSDP=0)";
  struct Case {
    OpenRun row;
    const char* sharding;
    const char* reason;  // nullptr: none
  };
  const Case cases[] = {
      {bridge_row("Llama3-70B", "GB200"), kFsdp, "the Megatron-Bridge recipe"},
      {bridge_row("Llama3-70B", "GB200"), kDdp, nullptr},
      {bridge_row("Llama3-70B", "H100"), kFsdp, nullptr},
      {nemo_row("Llama3.1-405B", "GB200"), kFsdp, "the NeMo recipe"},
      {nemo_row("Llama3-70B", "GB200"), kFsdp, nullptr},
  };
  for (Case c : cases) {
    c.row.optimizer_sharding = c.sharding;
    const auto why = nvidia_recipe_not_expressible(c.row);
    if (c.reason == nullptr) {
      EXPECT_EQ(why, std::nullopt) << c.row.model << " " << c.row.gpu << " " << c.sharding;
    } else {
      EXPECT_THAT(why, ::testing::Optional(::testing::AllOf(::testing::HasSubstr(c.reason),
                                                            ::testing::HasSubstr("cpu_offloading_num_layers"))))
          << c.row.model << " " << c.row.gpu;
    }
  }
}

TEST(OpenRecipes, QwenThreeHasA128WideHeadWhateverItsWidth) {
  const OpenCase qwen = map_open_run(open_row({{"model", "Qwen3-30B-A3B"}, {"hidden", "2048"}, {"heads", "32"}, {"kv_heads", "4"}}));
  ASSERT_TRUE(qwen.spec.has_value()) << qwen.reasons.front();
  EXPECT_EQ(qwen.spec->model.head_dim, 128);  // 32 x 128 = 4096 over a 2048 hidden
  const OpenCase qwen2 = map_open_run(open_row({{"model", "Qwen2-7B"}, {"hidden", "3584"}, {"heads", "28"}, {"kv_heads", "4"}}));
  ASSERT_TRUE(qwen2.spec.has_value()) << qwen2.reasons.front();
  EXPECT_EQ(qwen2.spec->model.head_dim, 128);  // 3584 / 28 from hidden / heads
}

TEST(OpenRecipes, TheReleaseIsTheContainerTheSourceNames) {
  EXPECT_EQ(nvidia_container_release("Megatron-Bridge docs/performance-summary.md @ 00b7660 - NeMo 25.11 container, "
                                     "'DGX-B200' system table"),
            "25.11");
  EXPECT_EQ(nvidia_container_release("... NeMo 26.02 Container ..."), "26.02");
  EXPECT_EQ(nvidia_container_release(kBridge), "");  // no container named
}

TEST(OpenRecipes, TheRecipesOverlapTpCommForLlamaAndEpAllToAllWhereTheReleaseSetsIt) {
  const auto row = [](const std::string& model, const std::string& gpu, const std::string& release, int tp,
                      const std::string& precision = "FP8 current scaling (FP8-CS)") {
    OpenRun r = bridge_row(model, gpu);
    r.source = std::string(kBridge) + " - NeMo " + release + " container, table";
    r.tp = tp;
    r.precision = precision;
    return r;
  };
  struct Case {
    OpenRun run;
    bool tp;
    bool ep;
  };
  const Case cases[] = {
      // Llama 3 / 3.1: userbuffers TP overlap whenever there is TP, in every release, but not NVFP4.
      {row("Llama3.1-405B", "B200 (DGX B200)", "25.09", 4), true, false},
      {row("Llama3-70B", "H100-SXM5-80GB (DGX H100)", "25.11", 4), true, false},
      {row("Llama3-70B", "GB200 (NVL72)", "26.02", 2, "NVFP4"), false, false},
      {row("Llama3-8B", "B200 (DGX B200)", "25.11", 1), false, false},
      // Qwen3-235B: 25.11 on B200 and H100 (not GB200), 26.02 on H100 only, never 25.09.
      {row("Qwen3-235B-A22B", "B200 (DGX B200)", "25.11", 1), false, true},
      {row("Qwen3-235B-A22B", "GB200 (NVL72)", "25.11", 1), false, false},
      {row("Qwen3-235B-A22B", "B200 (DGX B200)", "26.02", 1), false, false},
      {row("Qwen3-235B-A22B", "H100-SXM5-80GB (DGX H100)", "26.02", 2), false, true},
      {row("Qwen3-235B-A22B", "B200 (DGX B200)", "25.09", 1), false, false},
      // Qwen3-30B-A3B: 25.11 on H100 only.
      {row("Qwen3-30B-A3B", "H100-SXM5-80GB (DGX H100)", "25.11", 1), false, true},
      {row("Qwen3-30B-A3B", "B200 (DGX B200)", "25.11", 1), false, false},
      // DeepSeek-V3's recipes set neither.
      {row("DeepSeek-V3 (671B, MLA)", "B200 (DGX B200)", "25.11", 1), false, false},
  };
  for (const Case& c : cases) {
    const RecipeOverlaps o = nvidia_recipe_overlaps(c.run);
    EXPECT_EQ(o.tp, c.tp) << c.run.model << " " << c.run.gpu << " " << c.run.source;
    EXPECT_EQ(o.ep, c.ep) << c.run.model << " " << c.run.gpu << " " << c.run.source;
  }
  // Not a recipe row: nothing, whatever the model.
  OpenRun own = row("Llama3-70B", "H100", "25.11", 4);
  own.recompute = "none";
  EXPECT_FALSE(nvidia_recipe_overlaps(own).tp);
}

TEST(OpenRecipes, NemoTwosScriptsOverlapTpCommForTheBigLlamasAndGptThree) {
  const auto row = [](const std::string& model, const std::string& gpu, const std::string& release, int gpus,
                      const std::string& precision = "fp8") {
    OpenRun r = nemo_row(model, gpu);
    r.source = std::string(kNemo) + " - NeMo " + release + " container";
    r.tp = 4;
    r.gpus = gpus;
    r.precision = precision;
    return r;
  };
  EXPECT_TRUE(nvidia_recipe_overlaps(row("Llama3-70B", "H100", "25.04", 64)).tp);
  EXPECT_TRUE(nvidia_recipe_overlaps(row("Llama3.1-405B", "GB200", "25.04", 128)).tp);
  EXPECT_FALSE(nvidia_recipe_overlaps(row("Llama3.1-405B", "GB200", "25.04", 256)).tp);  // off over 128 GB200s
  EXPECT_TRUE(nvidia_recipe_overlaps(row("GPT3-175B", "B200", "25.02", 512)).tp);
  EXPECT_FALSE(nvidia_recipe_overlaps(row("GPT3-175B", "B200", "25.07", 512, "MXFP8")).tp);
  EXPECT_FALSE(nvidia_recipe_overlaps(row("Llama3-8B", "H100", "25.04", 8)).tp);   // not read
  EXPECT_FALSE(nvidia_recipe_overlaps(row("Llama3-70B", "H100", "24.09", 64)).tp);  // the launcher's YAMLs
  EXPECT_FALSE(nvidia_recipe_overlaps(nemo_row("Llama3-70B", "H100")).tp);         // no container named
  EXPECT_FALSE(nvidia_recipe_overlaps(row("Llama3-70B", "H100", "25.04", 64)).ep);
}

TEST(OpenRecipes, ARecipeRowsTpOverlapReachesTheSpecInTpPieces) {
  const OpenCase c = map_open_run(open_row({{"source", std::string(kBridge) + " - NeMo 25.11 container"},
                                            {"model", "Llama3-8B"},
                                            {"recompute", kLeftToRecipe},
                                            {"tp", "2"},
                                            {"dp", "8"}}));
  ASSERT_TRUE(c.spec.has_value()) << c.reasons.front();
  EXPECT_TRUE(c.spec->features.tp_overlap.enabled);
  EXPECT_EQ(c.spec->features.tp_overlap.chunks, 2);
  EXPECT_FALSE(c.spec->features.ep_overlap.enabled);
}

}  // namespace
}  // namespace mofasim::analysis
