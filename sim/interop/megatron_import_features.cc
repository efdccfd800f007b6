// `mofasim import-megatron`: recompute, precision, the optimizer and the overlaps (see
// megatron_importer.h). Each Megatron argument with a scenario field sets it; the ones without
// are listed by the flag table (megatron_flags.cc) or here with the reason.
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/interop/megatron_importer.h"

namespace mofasim::interop::detail {
namespace {

bool one_of(const std::string& v, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (v == a) return true;
  }
  return false;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace

void Importer::optimizations() {
  recompute();
  precision();
  optimizer();
  overlaps();
}

// Megatron's --recompute-granularity / --recompute-activations, and its --recompute-modules
// (selective) or --recompute-method and --recompute-num-layers (full): the scenario's fields of the
// same names (the legacy `recompute` is written beside the granularity, equal to it).
void Importer::recompute() {
  std::string granularity;
  if (has("--recompute-granularity")) {
    granularity = word("--recompute-granularity");
    if (granularity != "full" && granularity != "selective") {
      bad("--recompute-granularity", "expected full or selective, got '" + granularity + "'");
    }
    set("optimizations", "recompute", granularity, from("--recompute-granularity"));
    set("optimizations", "recompute_granularity", granularity, from("--recompute-granularity"));
  } else if (has("--recompute-activations")) {
    granularity = "selective";
    set("optimizations", "recompute", "selective", "--recompute-activations (selective)");
    set("optimizations", "recompute_granularity", "selective", "--recompute-activations (selective)");
  } else {
    set("optimizations", "recompute", "none", "no --recompute-granularity");
  }
  const bool full = granularity == "full";
  if (has("--recompute-modules")) {
    const std::vector<std::string>& mods = at("--recompute-modules").values;
    if (granularity != "selective") {
      note(out_.ignored, at("--recompute-modules"), "applies to selective recompute only; granularity is " +
                                                         (granularity.empty() ? std::string("none") : granularity));
    } else {
      for (const std::string& m : mods) {
        if (!one_of(m, {"core_attn", "mlp", "moe", "moe_act", "layernorm", "mla_up_proj", "shared_experts"})) {
          bad("--recompute-modules",
              "expected core_attn, mlp, moe, moe_act, layernorm, mla_up_proj or shared_experts, got '" + m + "'");
        }
      }
      set("optimizations", "recompute_modules", "[" + join(mods, ", ") + "]", "--recompute-modules " + join(mods, " "));
    }
  }
  for (const char* flag : {"--recompute-method", "--recompute-num-layers"}) {
    if (has(flag) && !full) note(out_.ignored, at(flag), "applies to full recompute only");
  }
  if (full && has("--recompute-method")) {
    const std::string m = word("--recompute-method");
    if (m != "uniform" && m != "block") bad("--recompute-method", "expected uniform or block, got '" + m + "'");
    set("optimizations", "recompute_method", m, from("--recompute-method"));
  }
  if (full && has("--recompute-num-layers")) {
    set("optimizations", "recompute_num_layers", std::to_string(integer("--recompute-num-layers", 0)),
        from("--recompute-num-layers"));
  }
}

// --bf16 / --fp16 (the compute and parameter dtype), and Transformer Engine's FP8: --fp8-format
// turns on `precision: fp8` (the linear layers' GEMMs in FP8, the rest in BF16), --fp8-recipe picks
// the recipe (Megatron's tensorwise is TE's current scaling), --no-fp8-wgrad keeps the weight
// gradients in BF16.
void Importer::precision() {
  std::string dtype = "fp32";
  std::string dtype_why = "no --bf16 / --fp16: Megatron's fp32 default";
  if (has("--bf16")) dtype = "bf16", dtype_why = "--bf16";
  if (has("--fp16")) dtype = "fp16", dtype_why = "--fp16";
  set("optimizations", "compute_dtype", dtype, dtype_why);
  params_dtype_ = dtype;
  params_dtype_why_ = dtype_why;
  if (!has("--fp8-format")) {
    for (const char* flag : {"--fp8-recipe", "--no-fp8-wgrad"}) {
      if (has(flag)) note(out_.ignored, at(flag), "no --fp8-format: the run does not train in FP8");
    }
    return;
  }
  const std::string f = word("--fp8-format");
  if (f != "e4m3" && f != "hybrid") bad("--fp8-format", "expected e4m3 or hybrid, got '" + f + "'");
  set("optimizations", "precision", "fp8", from("--fp8-format") + ": Transformer Engine FP8 linear layers");
  if (has("--fp8-recipe")) {
    const std::string r = word("--fp8-recipe");
    const std::string recipe = r == "tensorwise" ? "current" : r;
    if (!one_of(recipe, {"delayed", "current", "blockwise", "mxfp8"})) {
      bad("--fp8-recipe", "expected tensorwise, delayed, mxfp8 or blockwise, got '" + r + "'");
    }
    set("optimizations", "fp8_recipe", recipe,
        from("--fp8-recipe") + (r == "tensorwise" ? " (Transformer Engine's current scaling)" : ""));
  } else {
    set("optimizations", "fp8_recipe", "delayed", "Megatron default --fp8-recipe delayed");
  }
  if (has("--no-fp8-wgrad")) set("optimizations", "fp8_wgrad", "false", "--no-fp8-wgrad");
}

// The optimizer's placement, sharding (distributed optimizer, Megatron-FSDP's strategy, torch
// FSDP2's full shard), HSDP instances and the dtypes of the precision-aware optimizer.
void Importer::optimizer() {
  std::vector<std::string> fields;
  std::vector<std::string> why;
  const bool cpu = has("--optimizer-cpu-offload");
  fields.push_back(std::string("placement: ") + (cpu ? "cpu" : "gpu"));
  why.push_back(cpu ? "--optimizer-cpu-offload" : "GPU optimizer");
  if (cpu && has("--optimizer-offload-fraction")) {
    const std::string w = word("--optimizer-offload-fraction");
    char* end = nullptr;
    const double fraction = std::strtod(w.c_str(), &end);
    if (end == w.c_str() || *end != '\0' || !(fraction >= 0 && fraction <= 1)) {
      bad("--optimizer-offload-fraction", "expected a number in [0, 1], got '" + w + "'");
    }
    if (fraction != 1) {
      unsupported_value("--optimizer-offload-fraction", "part of the optimizer on the CPU: the scenario offloads all of it");
    }
  }
  if (has("--data-parallel-sharding-strategy")) {
    const std::string z = word("--data-parallel-sharding-strategy");
    if (!one_of(z, {"no_shard", "optim", "optim_grads", "optim_grads_params"})) {
      bad("--data-parallel-sharding-strategy", "expected no_shard, optim, optim_grads or optim_grads_params, got '" + z + "'");
    }
    fields.push_back("data_parallel_sharding_strategy: " + z);
    why.push_back(from("--data-parallel-sharding-strategy"));
  } else if (has("--use-torch-fsdp2")) {
    fields.push_back("data_parallel_sharding_strategy: optim_grads_params");
    why.push_back("--use-torch-fsdp2 (FSDP2 full shard: ZeRO-3)");
  } else {
    const bool dist = has("--use-distributed-optimizer");
    fields.push_back(std::string("distributed: ") + (dist ? "true" : "false"));
    why.push_back(dist ? "--use-distributed-optimizer" : "no --use-distributed-optimizer");
  }
  if (has("--num-distributed-optimizer-instances")) {
    fields.push_back("num_distributed_optimizer_instances: " + std::to_string(integer("--num-distributed-optimizer-instances")));
    why.push_back(from("--num-distributed-optimizer-instances"));
  }
  fields.push_back("params_dtype: " + params_dtype_);
  why.push_back("params " + params_dtype_why_);
  if (has("--main-grads-dtype")) {
    const std::string d = word("--main-grads-dtype");
    if (!one_of(d, {"fp32", "bf16"})) bad("--main-grads-dtype", "expected fp32 or bf16, got '" + d + "'");
    fields.push_back("main_grads_dtype: " + d);
    why.push_back(from("--main-grads-dtype"));
  } else if (has("--grad-reduce-in-bf16")) {
    fields.push_back("main_grads_dtype: bf16");
    why.push_back("--grad-reduce-in-bf16 (gradients accumulated and reduced in bf16)");
  }
  const std::pair<const char*, const char*> dtypes[] = {{"--main-params-dtype", "main_params_dtype"},
                                                        {"--exp-avg-dtype", "exp_avg_dtype"},
                                                        {"--exp-avg-sq-dtype", "exp_avg_sq_dtype"}};
  for (const auto& [flag, key] : dtypes) {
    if (!has(flag)) continue;
    const std::string d = word(flag);
    const bool main_params = std::string(key) == "main_params_dtype";
    if (main_params ? !one_of(d, {"fp32", "fp16"}) : !one_of(d, {"fp32", "fp16", "bf16", "fp8"})) {
      bad(flag, std::string("expected ") + (main_params ? "fp32 or fp16" : "fp32, fp16, bf16 or fp8") + ", got '" + d + "'");
    }
    fields.push_back(std::string(key) + ": " + d);
    why.push_back(from(flag));
  }
  set("optimizations", "optimizer", "{ " + join(fields, ", ") + " }", join(why, "; "));
}

// DP overlap (--overlap-grad-reduce / --overlap-param-gather), TP overlap (--tp-comm-overlap) and
// PP overlap: Megatron overlaps the pipeline sends with compute in the interleaved schedule
// (overlap_p2p_comm, on unless --no-overlap-p2p-communication); its plain 1F1B waits for them.
void Importer::overlaps() {
  const bool grad = has("--overlap-grad-reduce");
  const bool gather = has("--overlap-param-gather");
  if (grad || gather) {
    // One switch covers both in the schema: the gradient reduce-scatter and the parameter gather.
    set("optimizations", "dp_overlap", "{ enabled: true }",
        std::string(grad ? "--overlap-grad-reduce" : "") + (grad && gather ? " + " : "") + (gather ? "--overlap-param-gather" : "") +
            (grad != gather ? " (the schema overlaps both DP collectives together)" : ""));
  }
  if (has("--tp-comm-overlap")) set("optimizations", "tp_overlap", "{ enabled: true }", "--tp-comm-overlap");
  if (has("--no-overlap-p2p-communication")) {
    set("optimizations", "pp_overlap", "{ enabled: false }", "--no-overlap-p2p-communication");
  } else if (vpp_ > 1) {
    set("optimizations", "pp_overlap", "{ enabled: true }",
        "Megatron default overlap_p2p_comm with the interleaved schedule (non-blocking sends)");
  }
}

}  // namespace mofasim::interop::detail
