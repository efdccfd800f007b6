// NVIDIA performance recipes' recompute and overlaps (measured_open_recipes.h).
#include "sim/analysis/measured_open_recipes.h"

#include <regex>

#include "sim/analysis/measured_open_framework.h"
#include "sim/analysis/measured_open_text.h"

namespace mofasim::analysis {
namespace {

bool llama3(const std::string& model) { return has_any(model, {"llama3", "llama 3", "llama-3"}); }
bool llama2(const std::string& model) { return has_any(model, {"llama2", "llama 2", "llama-2"}); }
bool qwen3(const std::string& model) { return has_any(model, {"qwen3", "qwen 3", "qwen-3"}); }
bool deepseek_v3(const std::string& model) { return has_any(model, {"deepseek-v3", "deepseekv3", "deepseek v3"}); }
bool gpt3_175b(const std::string& model) {
  return has_any(model, {"gpt3", "gpt-3", "gpt 3"}) && has(model, "175b");
}

// NeMo's configs of the published layouts that set no recompute (measured_open_recipes.h).
bool nemo_recipe_without_recompute(const std::string& model) {
  return llama2(model) || llama3(model) || gpt3_175b(model) || has_any(model, {"nemotron-4", "nemotron4"}) ||
         has(model, "mixtral");
}

std::optional<RecipeRecompute> bridge_recipe_recompute(const OpenRun& run) {
  using model::RecomputeModule;
  using model::recompute_bit;
  if (llama3(run.model) || qwen3(run.model)) return RecipeRecompute{};
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

}  // namespace

NvidiaRecipeSet nvidia_recipe_set(const OpenRun& run) {
  // MLPerf's submissions state their recompute in their configs; a row of an unnamed source stays listed.
  if (source_framework(run) != SourceFramework::kNvidiaMegatron || has_any(run.source, {"mlperf", "mlcommons"})) {
    return NvidiaRecipeSet::kNone;
  }
  if (!lower(run.recompute).starts_with("not stated") || !has_any(run.recompute, {"recipe", "default"})) {
    return NvidiaRecipeSet::kNone;
  }
  if (has(run.source, "megatron-bridge") || has(run.recompute, "megatron-bridge")) return NvidiaRecipeSet::kMegatronBridge;
  if (has(run.source, "nemo") || has(run.recompute, "nemo")) return NvidiaRecipeSet::kNemo;
  return NvidiaRecipeSet::kNone;
}

const char* nvidia_recipe_set_name(NvidiaRecipeSet set) {
  switch (set) {
    case NvidiaRecipeSet::kMegatronBridge: return "Megatron-Bridge";
    case NvidiaRecipeSet::kNemo: return "NeMo";
    case NvidiaRecipeSet::kNone: return "no";
  }
  return "no";
}

std::optional<RecipeRecompute> nvidia_recipe_recompute(const OpenRun& run) {
  switch (nvidia_recipe_set(run)) {
    case NvidiaRecipeSet::kMegatronBridge: return bridge_recipe_recompute(run);
    case NvidiaRecipeSet::kNemo:
      if (nemo_recipe_without_recompute(run.model)) return RecipeRecompute{};
      return std::nullopt;
    case NvidiaRecipeSet::kNone: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<RecipeModel> nvidia_recipe_model(const OpenRun& run, int chunks) {
  if (nvidia_recipe_set(run) != NvidiaRecipeSet::kMegatronBridge || !deepseek_v3(run.model) || run.layers != 61) {
    return std::nullopt;
  }
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
  const NvidiaRecipeSet set = nvidia_recipe_set(run);
  const bool fsdp_on_grace = names_fsdp_on(run.optimizer_sharding) && has_any(run.gpu, {"gb200", "gb300"});
  const bool offloads = set == NvidiaRecipeSet::kMegatronBridge ? fsdp_on_grace && llama3(run.model)
                        : set == NvidiaRecipeSet::kNemo         ? fsdp_on_grace && has(run.model, "405b")
                                                                : false;
  if (offloads) {
    return std::string("the ") + nvidia_recipe_set_name(set) +
           " recipe offloads the activations of some layers to the CPU (cpu_offloading_num_layers), "
           "and the schema offloads all layers or none";
  }
  return std::nullopt;
}

std::string nvidia_container_release(const std::string& source) {
  static const std::regex kRelease(R"(nemo (\d{2}\.\d{2}) container)", std::regex::icase);
  std::smatch m;
  return std::regex_search(source, m, kRelease) ? m[1].str() : std::string();
}

RecipeOverlaps nvidia_recipe_overlaps(const OpenRun& run) {
  RecipeOverlaps o;
  const NvidiaRecipeSet set = nvidia_recipe_set(run);
  const std::string release = nvidia_container_release(run.source);
  if (set == NvidiaRecipeSet::kNemo) {
    // NeMo 2's performance scripts (24.12 on; YY.MM compares as text): 70B / 405B Llama 3 and GPT-3
    // 175B with userbuffers, except under MXFP8 (GPT-3) and Llama 3.1 405B on more than 128 GB200s.
    const bool nemo2 = !release.empty() && release >= "24.12";
    const bool llama_big = llama3(run.model) && has_any(run.model, {"70b", "405b"});
    const bool grace_405b_over_128 = has(run.model, "405b") && has(run.gpu, "gb200") && run.gpus > 128;
    const bool gpt3_mx = gpt3_175b(run.model) && has(run.precision, "mxfp8");
    o.tp = nemo2 && run.tp > 1 && ((llama_big && !grace_405b_over_128) || (gpt3_175b(run.model) && !gpt3_mx));
    return o;
  }
  if (set != NvidiaRecipeSet::kMegatronBridge) return o;
  o.tp = llama3(run.model) && run.tp > 1 && !has(run.precision, "nvfp4");
  const bool h100 = has(run.gpu, "h100");
  const bool b200 = has(run.gpu, "b200") && !has(run.gpu, "gb200");
  if (qwen3(run.model) && has(run.model, "235b")) o.ep = (release == "25.11" && (b200 || h100)) || (release == "26.02" && h100);
  if (qwen3(run.model) && has(run.model, "30b")) o.ep = release == "25.11" && h100;
  return o;
}

}  // namespace mofasim::analysis
