// Megatron-Bridge performance recipes' recompute (measured_open_recipes.h).
#include "sim/analysis/measured_open_recipes.h"

#include "sim/analysis/measured_open_framework.h"
#include "sim/analysis/measured_open_text.h"

namespace mofasim::analysis {
namespace {

bool llama3(const std::string& model) { return has_any(model, {"llama3", "llama 3", "llama-3"}); }
bool deepseek_v3(const std::string& model) { return has_any(model, {"deepseek-v3", "deepseekv3", "deepseek v3"}); }

}  // namespace

bool recompute_left_to_nvidia_recipe(const OpenRun& run) {
  // The table was read from Megatron-Bridge's recipes: a row of NeMo's older performance scripts
  // (another set of recipes) or of an unnamed source stays listed.
  const bool bridge = has(run.source, "megatron-bridge") || has(run.recompute, "megatron-bridge");
  return bridge && source_framework(run) == SourceFramework::kNvidiaMegatron &&
         lower(run.recompute).starts_with("not stated") && has(run.recompute, "recipe");
}

std::optional<RecipeRecompute> nvidia_recipe_recompute(const OpenRun& run) {
  using model::RecomputeModule;
  using model::recompute_bit;
  if (llama3(run.model) || has_any(run.model, {"qwen3", "qwen 3", "qwen-3"})) return RecipeRecompute{};
  if (has(run.model, "gpt-oss")) {
    if (has_any(run.gpu, {"gb300", "b300"})) return RecipeRecompute{};
    return RecipeRecompute{.kind = model::RecomputeKind::kSelective,
                           .modules = static_cast<model::RecomputeModules>(recompute_bit(RecomputeModule::kLayernorm) |
                                                                           recompute_bit(RecomputeModule::kMoeAct))};
  }
  if (deepseek_v3(run.model)) {
    model::RecomputeModules modules = recompute_bit(RecomputeModule::kMlaUpProj);
    if (has(run.gpu, "h100")) modules = static_cast<model::RecomputeModules>(modules | recompute_bit(RecomputeModule::kMlp));
    return RecipeRecompute{.kind = model::RecomputeKind::kSelective, .modules = modules};
  }
  return std::nullopt;
}

std::optional<RecipeModel> nvidia_recipe_model(const OpenRun& run, int chunks) {
  if (!deepseek_v3(run.model) || run.layers != 61) return std::nullopt;
  RecipeModel r{.mtp_depth = 1};
  const auto layout = [](int first, int middle, int middle_count, int last) {
    std::vector<int> split{first};
    split.insert(split.end(), static_cast<std::size_t>(middle_count), middle);
    split.push_back(last);
    return split;
  };
  if (chunks == 16) r.stage_layers = layout(4, 4, 14, 1);
  if (chunks == 8) r.stage_layers = layout(8, 8, 6, 5);
  if (chunks == 4) r.stage_layers = layout(16, 16, 2, 13);
  // pp 8 x vp 4 on H100: the performance recipe's own "Et|(tt|)*30mL" (deepseek_v3_llm_pretrain.py
  // @ 27dfb3d), the last chunk the MTP layer and the loss alone.
  if (chunks == 32) r.stage_layers = layout(1, 2, 30, 0);
  return r;
}

std::optional<std::string> nvidia_recipe_not_expressible(const OpenRun& run) {
  if (names_fsdp_on(run.optimizer_sharding) && llama3(run.model) && has_any(run.gpu, {"gb200", "gb300"})) {
    return "the Megatron-Bridge recipe offloads the activations of some layers to the CPU (cpu_offloading_num_layers), "
           "and the schema offloads all layers or none";
  }
  return std::nullopt;
}

}  // namespace mofasim::analysis
