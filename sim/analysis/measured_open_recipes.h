// The activation recompute of NVIDIA's Megatron-Bridge performance recipes, for rows of their
// performance summaries, which do not state it: the set writes "not stated (Megatron-Bridge
// performance-recipe defaults)". Read from the recipes (NVIDIA-NeMo/Megatron-Bridge
// scripts/performance/configs/<family>/*workload_base_configs.py and the library recipes they
// replace), for the model families the summaries list:
//   - Llama 3 / 3.1 (8B, 70B, 405B) and Qwen3 (30B-A3B, 235B-A22B): none. The library's Qwen3-30B
//     recipe turns full recompute on and the performance script sets it back to None.
//   - gpt-oss-120b: selective, modules layernorm and moe_act (GPT_OSS_120B_PRETRAIN_CONFIG_B200 /
//     GB200 / H100_BF16_V1 and their V2 and FP8 aliases, gpt_oss_workload_base_configs.py @
//     1e7adfa); none on GB300 / B300, whose configs use CUDA graphs instead.
//   - DeepSeek-V3: selective, module mla_up_proj (DEEPSEEK_V3 GB200 / GB300 V2 @ f0e2c37, GB200
//     BASE @ d19cb73); on H100 mla_up_proj and mlp (deepseek_v3_llm_pretrain.py @ 27dfb3d).
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

// Whether the row is one of those: a Megatron-Bridge row (its source or recompute column names
// Megatron-Bridge) whose recompute column leaves it to the recipe ("not stated ..." naming the
// recipe's defaults). NeMo's older performance scripts are other recipes, not read here.
bool recompute_left_to_nvidia_recipe(const OpenRun& run);

// The recipe's recompute for the row's model and GPU, or nothing for a model the list above lacks.
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
std::optional<RecipeModel> nvidia_recipe_model(const OpenRun& run, int chunks);

// What else those recipes set that the schema cannot express, for such a row, or nothing: the Llama
// 3 / 3.1 recipes that run Megatron FSDP on GB200 / GB300 also offload the activations of some layers
// to the Grace CPU (cpu_offloading_num_layers 20 or 40 of 70B's 80 layers, 95 of 405B's 126:
// LLAMA3_70B_PRETRAIN_CONFIG_GB200 / GB300_FP8_CS_V2 @ 3dafb00, the 25.09 llama3 / llama31 builders
// @ 27dfb3d), where the schema offloads every layer or none.
std::optional<std::string> nvidia_recipe_not_expressible(const OpenRun& run);

}  // namespace mofasim::analysis
