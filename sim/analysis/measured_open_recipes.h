// The activation recompute and the communication overlaps of NVIDIA's performance recipes, for rows
// of their performance summaries, which do not state them: the set writes "not stated (Megatron-
// Bridge performance-recipe defaults)".
// Two sets of recipes, told apart by what the row names (NvidiaRecipeSet).
//
// Megatron-Bridge (its summaries from NeMo 25.09 on). Read from the recipes (NVIDIA-NeMo/Megatron-Bridge
// scripts/performance/configs/<family>/*workload_base_configs.py and the library recipes they
// replace), for the model families the summaries list:
//   - Llama 3 / 3.1 (8B, 70B, 405B) and Qwen3 (30B-A3B, 235B-A22B): none. The library's Qwen3-30B
//     recipe turns full recompute on and the performance script sets it back to None.
//   - gpt-oss-120b: selective, modules layernorm and moe_act (GPT_OSS_120B_PRETRAIN_CONFIG_B200 /
//     GB200 / H100_BF16_V1 and their V2 and FP8 aliases, gpt_oss_workload_base_configs.py @
//     1e7adfa); none on GB300 / B300, whose configs use CUDA graphs instead.
//   - DeepSeek-V3: selective, module mla_up_proj (DEEPSEEK_V3 GB200 / GB300 V2 @ f0e2c37, GB200
//     BASE @ d19cb73); on H100 mla_up_proj and mlp (deepseek_v3_llm_pretrain.py @ 27dfb3d).
//
// NeMo (the performance summaries of NVIDIA/NeMo, NeMo 24.07 to 25.07 containers). Read from the
// configs that match the published layouts: NeMo-Framework-Launcher's training YAMLs for 24.07 /
// 24.09 (launcher_scripts/conf/training/: llama/llama2_7b @ 064e676, llama2_13b @ 3dd3561,
// llama2_70b @ d24f8ef, llama3_8b @ 157ea78, llama3_70b @ 3dd3561, gpt3/175b_mlperf @ 0937882,
// nemotron/nemotron_340b @ 3be81fc: activations_checkpoint_granularity null) and NeMo 2's
// scripts/performance/recommended_model_configs/model_configs_{h100,b200,gb200}.csv (h100 @ 724995d,
// b200 @ 9a86f67, gb200 @ 07ed46e: recompute_layers 0, no recompute_modules), which helpers.py
// (set_recompute_configs @ 02a0e6a) leaves to library recipes that set none:
//   - Llama 2 / 3 / 3.1, GPT-3 175B, Nemotron-4 (15B, 340B) and Mixtral: none.
// GPT-3 5B and 20B (their layout matches configs with and without selective recompute:
// gpt3/5b.yaml @ 00af8f2 against 5b_fp8_performance.yaml @ 1e46ac6), DeepSeek-V3 (the library
// recipe's four modules, which the performance script's versions reset differently) and the other
// models stay listed.
// Other models (their recipes are not read here) get nothing: the row stays listed with the reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/spec.h"
#include "sim/analysis/measured_open_reader.h"

namespace mofasim::analysis {

struct RecipeRecompute {
  model::RecomputeKind kind = model::RecomputeKind::kNone;
  model::RecomputeModules modules = 0;  // with kSelective
};

// Whose recipes a row leaves its recompute to: a row of NVIDIA's Megatron-Core recipes
// (measured_open_framework.h) whose recompute column says "not stated" and names the recipe's
// defaults ("... performance-recipe defaults", "... recipe defaults"), and whose source or recompute
// column names Megatron-Bridge, else NeMo. kNone for every other row.
enum class NvidiaRecipeSet { kNone, kMegatronBridge, kNemo };
NvidiaRecipeSet nvidia_recipe_set(const OpenRun& run);
const char* nvidia_recipe_set_name(NvidiaRecipeSet set);  // "Megatron-Bridge", "NeMo"
inline bool recompute_left_to_nvidia_recipe(const OpenRun& run) {
  return nvidia_recipe_set(run) != NvidiaRecipeSet::kNone;
}

// The recipe's recompute for the row's model and GPU, or nothing for a model the lists above lack.
std::optional<RecipeRecompute> nvidia_recipe_recompute(const OpenRun& run);

// The DeepSeek-V3 recipe's model and pipeline settings (megatron/bridge/recipes/deepseek/
// deepseek_v3.py, _deepseek_v3_common @ 05d003f): one MTP layer (mtp_num_layers = 1), and for an
// uneven split its pipeline_model_parallel_layout by pp x vp chunks, the embedding on the first
// chunk and the MTP layer and the loss on the last: 16 chunks (16 x 1, 8 x 2, 4 x 4) hold 4 layers
// each and the last 1; 8 chunks (8 x 1, 4 x 2) 8 each and the last 5; 4 chunks 16, 16, 16, 13;
// 32 chunks (H100's pp 8 x vp 4 performance config) 1, then 2 each, and none on the last.
struct RecipeModel {
  int mtp_depth = 0;
  std::vector<int> stage_layers{};  // empty: the recipe gives no layout for this chunk count
};
// Megatron-Bridge rows only.
std::optional<RecipeModel> nvidia_recipe_model(const OpenRun& run, int chunks);

// What else those recipes set that the schema cannot express, for such a row, or nothing: the Llama
// 3 / 3.1 recipes that run Megatron FSDP on GB200 / GB300 also offload the activations of some layers
// to the Grace CPU (cpu_offloading_num_layers 20 or 40 of 70B's 80 layers, 95 of 405B's 126:
// LLAMA3_70B_PRETRAIN_CONFIG_GB200 / GB300_FP8_CS_V2 @ 3dafb00, the 25.09 llama3 / llama31 builders
// @ 27dfb3d), where the schema offloads every layer or none. NeMo's GB200 Llama 3.1 405B FSDP
// config offloads 95 layers likewise (model_configs_gb200.csv @ 06c0e70: activation_offload_layers 95).
std::optional<std::string> nvidia_recipe_not_expressible(const OpenRun& run);

// The communication overlaps a Megatron-Bridge or NeMo recipe turns on, for such a row (both false
// for every other row). Read from the recipes of the release the row's source names ("NeMo 25.11
// container"):
//   - tp: Transformer Engine's userbuffers TP-comm overlap, for Llama 3 / 3.1 at tp > 1 except
//     under NVFP4. The library's Llama 3 recipes set CommOverlapConfig(tp_comm_overlap=True) and
//     the performance configs name a userbuffers config per GPU (llama31_llm_pretrain.py @ 0fa501a:
//     userbuffers_{bf16,fp8}_b200_h16384_tp4_cp2 on B200 / GB200 / GB300, _h100_h16384_tp8_cp2 on
//     H100; llama3_70b 25.09 builders @ 27dfb3d: userbuffers_fp8_b200_h8192_tp2, _h100_h8192_tp4);
//     the NVFP4 configs set tp_comm_overlap False.
//   - ep: Megatron's expert-parallel all-to-all overlap (moe_a2a_overlap, i.e.
//     overlap_moe_expert_parallel_comm with delayed weight gradients), where the release's config
//     sets it: 25.11's QWEN3_235B_A22B_B200 / H100 and QWEN3_30B_A3B_H100 base configs
//     (workload_base_configs.py @ 767255d) and 26.02's Qwen3-235B H100 V2 config; 26.02's B200 V1
//     configs set it False, and the 25.09 builders do not set it.
// A NeMo row of NeMo 2's performance scripts (a container from 24.12 on) gets the TP-comm overlap of
// its library recipe (MegatronCommOverlapCallback(tp_comm_overlap=True): llama3_70b.py @ 0189a3b,
// llama31_405b.py @ 00aa2e1) with the scripts' userbuffers configs: Llama 3 / 3.1 70B and 405B
// (pretrain_llama3_70b.py @ 07a643a, pretrain_llama31_405b.py @ 04ecf8d, which turns it off for 405B
// on more than 128 GB200s) and GPT-3 175B (pretrain_gpt3_175b.py @ fb34b2c, off under MXFP8). Older
// containers ran the launcher's YAMLs, not read for this: nothing.
struct RecipeOverlaps {
  bool tp = false;
  bool ep = false;
};
RecipeOverlaps nvidia_recipe_overlaps(const OpenRun& run);

// The container release a row's source names ("NeMo 25.11 container" -> "25.11"), or "".
std::string nvidia_container_release(const std::string& source);

}  // namespace mofasim::analysis
