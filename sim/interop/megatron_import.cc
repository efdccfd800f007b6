#include "sim/interop/megatron_import.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <regex>
#include <sstream>
#include <utility>

#include "sim/interop/megatron_flags.h"
#include "sim/interop/megatron_script.h"

namespace mofasim::interop {
namespace {

// Link bandwidths (NCCL bus bandwidth per GPU) for the hardware presets the shipped scenarios
// use, with the same sources those scenarios cite.
struct LinkDefaults {
  std::string_view preset, intra, inter, source;
};
constexpr LinkDefaults kLinkDefaults[] = {
    {"h100-sxm", "370 GB/s", "46 GB/s", "as scenarios/small.yaml: NVLink4 busBW, NDR 400 Gb/s NIC"},
    {"h200", "370 GB/s", "46 GB/s", "as h100-sxm: NVLink4 busBW, NDR 400 Gb/s NIC"},
    {"h800", "160 GB/s", "46 GB/s", "as scenarios/deepseek-v3-h800-2048.yaml"},
    {"a100-80gb", "200 GB/s", "24 GB/s", "as scenarios/llama2-70b-a100-1024.yaml: NVLink3, 200 Gb/s IB"},
};

std::string cli_error(std::string_view option, std::string_view message) {
  return "mofasim import-megatron: " + std::string(option) + ": " + std::string(message);
}

struct Entry {
  std::string key, value, comment;
};

// The flags of one launch, last occurrence winning, with the scenario it produces.
class Importer {
 public:
  Importer(const std::string& text, const MegatronImportOptions& options) : opt_(options) {
    for (FlagOccurrence& f : collect_flags(script_words(text), megatron_flag_arity)) {
      const MegatronFlag* known = find_megatron_flag(f.name);
      if (known == nullptr) {
        note(out_.unknown, f, "not a flag the importer knows");
      } else if (known->use == FlagUse::kIgnored) {
        note(out_.ignored, f, std::string(known->reason));
      } else if (known->use == FlagUse::kUnsupported) {
        note(out_.unsupported, f, std::string(known->reason));
      } else {
        flags_[f.name] = std::move(f);
      }
    }
  }

  MegatronImport run() {
    model();
    parallelism();
    optimizations();
    training();
    cluster();
    for (auto* list : {&out_.ignored, &out_.unsupported, &out_.unknown}) {
      std::stable_sort(list->begin(), list->end(), [](const MegatronFlagNote& a, const MegatronFlagNote& b) {
        return a.line != b.line ? a.line < b.line : a.col < b.col;
      });
    }
    out_.yaml = render();
    return std::move(out_);
  }

 private:
  // ------------------------------------------------------------------ flag access
  [[nodiscard]] bool has(const std::string& flag) const { return flags_.count(flag) != 0; }
  [[nodiscard]] const FlagOccurrence& at(const std::string& flag) const { return flags_.at(flag); }

  [[noreturn]] void bad(const std::string& flag, const std::string& message) const {
    const FlagOccurrence& f = at(flag);
    throw ImportError(opt_.source_name + ":" + std::to_string(f.at.line) + ":" + std::to_string(f.at.col) + ": " +
                      flag + ": " + message);
  }

  [[nodiscard]] std::string word(const std::string& flag) const {
    const FlagOccurrence& f = at(flag);
    if (f.values.empty()) bad(flag, "expects a value");
    return f.values.front();
  }

  [[nodiscard]] long long integer(const std::string& flag, long long min = 1) const {
    const std::string w = word(flag);
    long long v = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size()) {
      if (!w.empty() && w[0] == '$') bad(flag, "value '" + w + "' is a variable the script never sets");
      bad(flag, "expected an integer, got '" + w + "'");
    }
    if (v < min) bad(flag, "must be >= " + std::to_string(min) + ", got " + w);
    if (v > 2147483647LL) bad(flag, "too large: " + w);
    return v;
  }

  [[nodiscard]] int int_or(const std::string& flag, int fallback) const {
    return has(flag) ? static_cast<int>(integer(flag)) : fallback;
  }

  void note(std::vector<MegatronFlagNote>& list, const FlagOccurrence& f, std::string reason) {
    std::string value;
    for (const std::string& v : f.values) value += (value.empty() ? "" : " ") + v;
    list.push_back({.flag = f.name, .value = value, .reason = std::move(reason), .line = f.at.line, .col = f.at.col});
  }
  void unsupported_value(const std::string& flag, std::string reason) { note(out_.unsupported, at(flag), std::move(reason)); }

  [[nodiscard]] std::string from(const std::string& flag) const { return flag + " " + word(flag); }

  void set(const std::string& section, const std::string& key, const std::string& value, const std::string& why) {
    sections_[section].push_back({key, value, why});
  }

  // ------------------------------------------------------------------ model
  void model() {
    for (const char* required : {"--num-layers", "--hidden-size", "--num-attention-heads", "--seq-length"}) {
      if (!has(required)) throw ImportError(opt_.source_name + ": " + required + ": required (the model's shape)");
    }
    layers_ = static_cast<int>(integer("--num-layers"));
    hidden_ = static_cast<int>(integer("--hidden-size"));
    heads_ = static_cast<int>(integer("--num-attention-heads"));
    seq_ = static_cast<int>(integer("--seq-length"));
    set("model", "name", opt_.scenario_name, "the scenario name (--name; default: the input file's stem)");
    set("model", "num_layers", std::to_string(layers_), from("--num-layers"));
    set("model", "hidden_size", std::to_string(hidden_), from("--hidden-size"));
    set("model", "num_attention_heads", std::to_string(heads_), from("--num-attention-heads"));
    if (has("--group-query-attention")) {
      const int groups = int_or("--num-query-groups", 1);
      if (heads_ % groups != 0) bad("--num-query-groups", "must divide --num-attention-heads (" + std::to_string(heads_) + ")");
      set("model", "num_kv_heads", std::to_string(groups),
          "--group-query-attention" + std::string(has("--num-query-groups") ? ", " + from("--num-query-groups") : " (Megatron default 1 group)"));
    } else if (has("--num-query-groups")) {
      note(out_.ignored, at("--num-query-groups"), "without --group-query-attention Megatron uses one KV head per head");
    }
    if (has("--kv-channels")) set("model", "head_dim", word("--kv-channels"), from("--kv-channels"));
    const bool swiglu = has("--swiglu");
    set("model", "mlp", swiglu ? "swiglu" : "gelu", swiglu ? "--swiglu" : "no --swiglu: Megatron's default GeLU");
    ffn_ = has("--ffn-hidden-size") ? static_cast<int>(integer("--ffn-hidden-size"))
                                    : (swiglu ? (4 * hidden_ * 2 / 3) / 64 * 64 : 4 * hidden_);
    set("model", "ffn_hidden_size", std::to_string(ffn_),
        has("--ffn-hidden-size") ? from("--ffn-hidden-size")
                                 : (swiglu ? "Megatron default for --swiglu: int(8h/3 / 64) * 64" : "Megatron default 4h"));
    set("model", "seq_length", std::to_string(seq_), from("--seq-length"));
    if (has("--max-position-embeddings")) {
      note(out_.ignored, at("--max-position-embeddings"), "position table size: the step uses --seq-length");
    }
    vocab();
    norm_and_position();
    attention();
    moe();
    if (has("--mtp-num-layers")) set("model", "mtp_depth", word("--mtp-num-layers"), from("--mtp-num-layers"));
  }

  void vocab() {
    int v = 0;
    std::string why;
    if (has("--vocab-size")) {
      v = static_cast<int>(integer("--vocab-size"));
      why = from("--vocab-size");
    } else if (opt_.vocab_size) {
      v = *opt_.vocab_size;
      why = "--vocab-size option of import-megatron";
    } else {
      const std::string type = has("--tokenizer-type") ? word("--tokenizer-type") : "";
      const std::string model = has("--tokenizer-model") ? word("--tokenizer-model") : "";
      auto contains = [&](const char* s) { return model.find(s) != std::string::npos; };
      if (type == "GPT2BPETokenizer" || type.empty()) {
        v = 50257;
        why = type.empty() ? "no tokenizer flag: Megatron's default GPT2BPETokenizer, 50257 tokens"
                           : "--tokenizer-type GPT2BPETokenizer: 50257 tokens";
      } else if (type == "Llama2Tokenizer") {
        v = 32000;
        why = "--tokenizer-type Llama2Tokenizer: 32000 tokens";
      } else if (contains("Llama-3") || contains("llama3") || contains("Llama3")) {
        v = 128256;
        why = "--tokenizer-model " + model + ": the Llama 3 tokenizer, 128256 tokens";
      } else {
        throw ImportError(cli_error("--vocab-size", "the arguments give no --vocab-size and tokenizer '" + type +
                                                        (model.empty() ? "" : " " + model) +
                                                        "' has no known size; pass --vocab-size N"));
      }
    }
    // Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by * tp.
    const int tp = int_or("--tensor-model-parallel-size", 1);
    const int multiple = int_or("--make-vocab-size-divisible-by", 128) * tp;
    const int padded = (v + multiple - 1) / multiple * multiple;
    set("model", "vocab_size", std::to_string(padded),
        why + (padded != v ? "; padded to a multiple of " + std::to_string(multiple) + " as Megatron does" : ""));
  }

  void norm_and_position() {
    const std::string norm = has("--normalization") ? word("--normalization") : "LayerNorm";
    if (norm != "LayerNorm" && norm != "RMSNorm") bad("--normalization", "expected LayerNorm or RMSNorm, got '" + norm + "'");
    set("model", "norm", norm == "RMSNorm" ? "rmsnorm" : "layernorm",
        has("--normalization") ? from("--normalization") : "Megatron default LayerNorm");
    std::string pos = has("--position-embedding-type") ? word("--position-embedding-type") : "learned_absolute";
    if (has("--use-rotary-position-embeddings")) pos = "rope";
    const std::string pos_why = has("--use-rotary-position-embeddings") ? "--use-rotary-position-embeddings"
                                : has("--position-embedding-type")    ? from("--position-embedding-type")
                                                                       : "Megatron default learned_absolute";
    if (pos == "rope" || pos == "yarn") {
      set("model", "position", "rope", pos_why);
    } else if (pos == "learned_absolute") {
      set("model", "position", "learned", pos_why);
    } else if (pos == "none") {
      set("model", "position", "rope", pos_why + " (no position parameters; rope adds none either)");
    } else {
      bad("--position-embedding-type", "expected learned_absolute, rope, yarn or none, got '" + pos + "'");
    }
    const bool untie = has("--untie-embeddings-and-output-weights");
    set("model", "untie_embeddings", untie ? "true" : "false",
        untie ? "--untie-embeddings-and-output-weights" : "Megatron default: tied embedding and output weights");
    const bool bias = !has("--disable-bias-linear");
    set("model", "linear_bias", bias ? "true" : "false", bias ? "Megatron default: biases on linear layers" : "--disable-bias-linear");
  }

  void attention() {
    std::string impl = "fused";
    std::string why = "Megatron-Core default attention backend (flash / cuDNN fused)";
    if (has("--attention-backend")) {
      const std::string b = word("--attention-backend");
      if (b == "unfused" || b == "local") {
        impl = "unfused";
      } else if (b != "auto" && b != "flash" && b != "fused") {
        bad("--attention-backend", "expected auto, flash, fused, unfused or local, got '" + b + "'");
      }
      why = from("--attention-backend");
    } else if (has("--use-flash-attn")) {
      why = "--use-flash-attn";
    }
    set("model", "attention_impl", impl, why);
    if (has("--attention-dropout")) {
      if (impl == "unfused") {
        set("model", "attention_dropout", word("--attention-dropout"), from("--attention-dropout"));
      } else {
        note(out_.ignored, at("--attention-dropout"), "fused attention: dropout adds no HBM pass");
      }
    }
    if (has("--multi-latent-attention")) {
      set("model", "attention", "mla", "--multi-latent-attention");
      const std::pair<const char*, const char*> mla[] = {{"--q-lora-rank", "q_lora_rank"}, {"--kv-lora-rank", "kv_lora_rank"},
                                                         {"--qk-head-dim", "qk_nope_head_dim"},
                                                         {"--qk-pos-emb-head-dim", "qk_rope_head_dim"}, {"--v-head-dim", "v_head_dim"}};
      for (const auto& [flag, key] : mla) {
        if (has(flag)) set("model", std::string("mla.") + key, std::to_string(integer(flag, 0)), from(flag));
      }
    }
  }

  void moe() {
    if (!has("--num-experts")) return;
    set("model", "moe.num_experts", word("--num-experts"), from("--num-experts"));
    set("model", "moe.top_k", std::to_string(int_or("--moe-router-topk", 2)),
        has("--moe-router-topk") ? from("--moe-router-topk") : "Megatron default top-2");
    set("model", "moe.expert_ffn_hidden_size", std::to_string(int_or("--moe-ffn-hidden-size", ffn_)),
        has("--moe-ffn-hidden-size") ? from("--moe-ffn-hidden-size") : "Megatron default: --ffn-hidden-size");
    if (has("--moe-shared-expert-intermediate-size")) {
      set("model", "moe.num_shared_experts", "1", "--moe-shared-expert-intermediate-size (one shared expert of that width)");
      set("model", "moe.shared_expert_ffn_hidden_size", word("--moe-shared-expert-intermediate-size"),
          from("--moe-shared-expert-intermediate-size"));
    }
    if (has("--moe-layer-freq")) {
      const std::string f = word("--moe-layer-freq");
      std::smatch m;
      if (f == "1") {
        // every layer is MoE: the schema's default
      } else if (std::regex_match(f, m, std::regex(R"(\(?\[0\]\s*\*\s*(\d+)\s*\+\s*\[1\]\s*\*\s*(\d+)\)?)"))) {
        const int dense = std::stoi(m[1]);
        if (dense + std::stoi(m[2]) != layers_) bad("--moe-layer-freq", "pattern covers " + std::to_string(dense + std::stoi(m[2])) + " layers, --num-layers is " + std::to_string(layers_));
        set("model", "moe.first_k_dense_layers", std::to_string(dense), from("--moe-layer-freq"));
      } else {
        unsupported_value("--moe-layer-freq", "only all-MoE or '[0]*k+[1]*n' (first k dense) is expressible");
      }
    }
    if (has("--moe-token-dispatcher-type")) {
      const std::string d = word("--moe-token-dispatcher-type");
      if (d == "alltoall" || d == "allgather" || d == "flex") {
        set("model", "moe.token_dispatcher_type", d, from("--moe-token-dispatcher-type"));
      } else {
        unsupported_value("--moe-token-dispatcher-type", "mofasim models the alltoall, allgather and flex dispatchers");
      }
    }
    const std::pair<const char*, const char*> routing[] = {{"--moe-router-num-groups", "moe.router_num_groups"},
                                                         {"--moe-router-group-topk", "moe.router_group_topk"},
                                                         {"--moe-expert-capacity-factor", "moe.expert_capacity_factor"}};
    for (const auto& [flag, key] : routing) {
      if (has(flag)) set("model", key, word(flag), from(flag));
    }
    if (has("--moe-pad-expert-input-to-capacity")) {
      set("model", "moe.pad_expert_input_to_capacity", "true", from("--moe-pad-expert-input-to-capacity"));
    }
  }

  // ------------------------------------------------------------------ parallelism
  void parallelism() {
    tp_ = int_or("--tensor-model-parallel-size", 1);
    pp_ = int_or("--pipeline-model-parallel-size", 1);
    cp_ = int_or("--context-parallel-size", 1);
    const int ep = int_or("--expert-model-parallel-size", 1);
    auto why = [&](const char* flag, const char* fallback) { return has(flag) ? from(flag) : std::string(fallback); };
    set("parallelism", "tp", std::to_string(tp_), why("--tensor-model-parallel-size", "Megatron default 1"));
    set("parallelism", "cp", std::to_string(cp_), why("--context-parallel-size", "Megatron default 1"));
    set("parallelism", "pp", std::to_string(pp_), why("--pipeline-model-parallel-size", "Megatron default 1"));
    int vpp = 1;
    std::string vpp_why = "no virtual pipeline flag";
    if (has("--num-layers-per-virtual-pipeline-stage")) {
      const int per = static_cast<int>(integer("--num-layers-per-virtual-pipeline-stage"));
      if (layers_ % (per * pp_) != 0) {
        bad("--num-layers-per-virtual-pipeline-stage", "--num-layers (" + std::to_string(layers_) +
                                                          ") is not a multiple of this x pipeline size (" +
                                                          std::to_string(per * pp_) + ")");
      }
      vpp = layers_ / (per * pp_);
      vpp_why = from("--num-layers-per-virtual-pipeline-stage") + ": num_layers / (" + std::to_string(per) + " * pp)";
    } else if (has("--num-virtual-stages-per-pipeline-rank")) {
      vpp = static_cast<int>(integer("--num-virtual-stages-per-pipeline-rank"));
      vpp_why = from("--num-virtual-stages-per-pipeline-rank");
    }
    set("parallelism", "vpp", std::to_string(vpp), vpp_why);
    set("parallelism", "ep", std::to_string(ep), why("--expert-model-parallel-size", "Megatron default 1"));
    set("parallelism", "etp", std::to_string(int_or("--expert-tensor-parallel-size", tp_)),
        why("--expert-tensor-parallel-size", "Megatron default: the tensor-parallel size"));
    if (!has("--micro-batch-size")) throw ImportError(opt_.source_name + ": --micro-batch-size: required (Megatron has no default)");
    micro_ = static_cast<int>(integer("--micro-batch-size"));
    set("parallelism", "micro_batch", std::to_string(micro_), from("--micro-batch-size"));
    set("parallelism", "schedule", vpp > 1 ? "interleaved-1f1b" : "1f1b",
        vpp > 1 ? "Megatron's interleaved schedule (virtual stages > 1)" : "Megatron's 1F1B schedule");
    const bool sp = has("--sequence-parallel");
    set("parallelism", "sequence_parallel", sp ? "true" : "false", sp ? "--sequence-parallel" : "no --sequence-parallel");
    set("parallelism", "rank_order", "tp-cp-ep-dp-pp", "Megatron's default rank order");
  }

  // ------------------------------------------------------------------ optimisations
  void optimizations() {
    const bool full = has("--recompute-granularity") && word("--recompute-granularity") == "full";
    if (has("--recompute-granularity")) {
      const std::string g = word("--recompute-granularity");
      if (g != "full" && g != "selective") bad("--recompute-granularity", "expected full or selective, got '" + g + "'");
      set("optimizations", "recompute", g, from("--recompute-granularity"));
    } else if (has("--recompute-activations")) {
      set("optimizations", "recompute", "selective", "--recompute-activations (selective)");
    } else {
      set("optimizations", "recompute", "none", "no --recompute-granularity");
    }
    if (full && has("--recompute-method") && word("--recompute-method") == "block") {
      const int per_stage = layers_ / std::max(1, pp_);
      if (int_or("--recompute-num-layers", 1) < per_stage) {
        unsupported_value("--recompute-method", "block recompute of " + std::to_string(int_or("--recompute-num-layers", 1)) +
                                                    " of " + std::to_string(per_stage) +
                                                    " layers per stage: the scenario recomputes every layer");
      }
    }
    if (has("--recompute-modules")) {
      const auto& mods = at("--recompute-modules").values;
      if (full) {
        note(out_.ignored, at("--recompute-modules"), "applies to selective recompute only; granularity is full");
      } else if (!(mods.size() == 1 && mods[0] == "core_attn")) {
        unsupported_value("--recompute-modules", "selective recompute is the attention core only (core_attn)");
      }
    }
    std::string dtype = "fp32";
    std::string dtype_why = "no --bf16 / --fp16: Megatron's fp32 default";
    if (has("--bf16")) dtype = "bf16", dtype_why = "--bf16";
    if (has("--fp16")) dtype = "fp16", dtype_why = "--fp16";
    if (has("--fp8-format")) {
      const std::string f = word("--fp8-format");
      if (f != "e4m3" && f != "hybrid") bad("--fp8-format", "expected e4m3 or hybrid, got '" + f + "'");
      dtype = "fp8";
      dtype_why = from("--fp8-format") + ": FP8 GEMMs";
    }
    set("optimizations", "compute_dtype", dtype, dtype_why);
    const bool dist = has("--use-distributed-optimizer");
    const bool cpu = has("--optimizer-cpu-offload");
    set("optimizations", "optimizer", std::string("{ placement: ") + (cpu ? "cpu" : "gpu") + ", distributed: " + (dist ? "true" : "false") + " }",
        std::string(cpu ? "--optimizer-cpu-offload" : "GPU optimizer") + "; " + (dist ? "--use-distributed-optimizer" : "no --use-distributed-optimizer"));
    const bool grad = has("--overlap-grad-reduce");
    const bool gather = has("--overlap-param-gather");
    if (grad || gather) {
      // One switch covers both in the schema: the gradient reduce-scatter and the parameter gather.
      set("optimizations", "dp_overlap", "{ enabled: true }",
          std::string(grad ? "--overlap-grad-reduce" : "") + (grad && gather ? " + " : "") + (gather ? "--overlap-param-gather" : "") +
              (grad != gather ? " (the schema overlaps both DP collectives together)" : ""));
    }
    if (has("--tp-comm-overlap")) set("optimizations", "tp_overlap", "{ enabled: true }", "--tp-comm-overlap");
  }

  void training() {
    if (has("--train-iters")) {
      set("training", "steps", word("--train-iters"), from("--train-iters"));
    } else if (has("--train-samples")) {
      const long long samples = integer("--train-samples");
      set("training", "tokens", std::to_string(samples * seq_), from("--train-samples") + " x --seq-length");
    }
  }

  // ------------------------------------------------------------------ cluster (not in Megatron's arguments)
  void cluster() {
    if (opt_.hardware_preset.empty()) throw ImportError(cli_error("--hardware", "required: the GPU preset (Megatron's arguments do not name the hardware)"));
    set("hardware", "preset", opt_.hardware_preset, "--hardware");
    int per_node = 8;
    std::string per_node_why = "default 8 GPUs per node";
    if (opt_.gpus_per_node) {
      per_node = *opt_.gpus_per_node, per_node_why = "--gpus-per-node";
    } else if (has("--nproc_per_node")) {
      per_node = static_cast<int>(integer("--nproc_per_node")), per_node_why = "torchrun " + from("--nproc_per_node");
    }
    int gpus = 0;
    std::string gpus_why = "--gpus";
    if (opt_.gpus) {
      gpus = *opt_.gpus;
    } else if (has("--nnodes") && has("--nproc_per_node")) {
      gpus = static_cast<int>(integer("--nnodes") * integer("--nproc_per_node"));
      gpus_why = "torchrun " + from("--nnodes") + " x " + from("--nproc_per_node");
    } else {
      throw ImportError(cli_error("--gpus", "required: the job's GPU count (or a torchrun --nnodes and --nproc_per_node in the script)"));
    }
    const int model_parallel = tp_ * cp_ * pp_;
    if (gpus % model_parallel != 0) {
      throw ImportError(cli_error("--gpus", std::to_string(gpus) + " is not a multiple of tp*cp*pp = " + std::to_string(model_parallel)));
    }
    const int dp = gpus / model_parallel;
    set("topology", "gpus", std::to_string(gpus), gpus_why);
    set("topology", "gpus_per_node", std::to_string(per_node), per_node_why);
    std::string intra = opt_.intra_node_bandwidth;
    std::string inter = opt_.inter_node_bandwidth;
    std::string link_why = "--intra-node-bandwidth / --inter-node-bandwidth";
    for (const LinkDefaults& d : kLinkDefaults) {
      if (d.preset != opt_.hardware_preset) continue;
      if (intra.empty()) intra = d.intra;
      if (inter.empty()) inter = d.inter;
      link_why = std::string("default for ") + std::string(d.preset) + ": " + std::string(d.source);
    }
    if (intra.empty()) throw ImportError(cli_error("--intra-node-bandwidth", "required for hardware '" + opt_.hardware_preset + "' (no default link figures)"));
    if (inter.empty()) throw ImportError(cli_error("--inter-node-bandwidth", "required for hardware '" + opt_.hardware_preset + "' (no default link figures)"));
    set("topology", "intra_node", "{ bandwidth: \"" + intra + "\" }", link_why);
    set("topology", "inter_node", "{ bandwidth: \"" + inter + "\" }", link_why);
    set("parallelism", "dp", std::to_string(dp), "gpus / (tp * cp * pp) = " + std::to_string(gpus) + " / " + std::to_string(model_parallel));
    const int global = has("--global-batch-size") ? static_cast<int>(integer("--global-batch-size")) : micro_ * dp;
    if (global % (micro_ * dp) != 0) {
      bad("--global-batch-size", "must be a multiple of micro-batch x data-parallel size = " + std::to_string(micro_ * dp));
    }
    set("parallelism", "global_batch", std::to_string(global),
        has("--global-batch-size") ? from("--global-batch-size") : "Megatron default: micro-batch x data-parallel size");
  }

  // ------------------------------------------------------------------ YAML
  std::string render() const {
    std::ostringstream y;
    y << "# " << opt_.scenario_name << ": written by `mofasim import-megatron` from " << opt_.source_name << ".\n"
      << "# Each field's comment names the Megatron argument (or Megatron default) that set it.\n";
    auto list = [&](const char* title, const std::vector<MegatronFlagNote>& notes) {
      if (notes.empty()) return;
      y << "#\n# " << title << ":\n";
      for (const MegatronFlagNote& n : notes) {
        y << "#   " << n.flag << (n.value.empty() ? "" : " " + n.value) << " (line " << n.line << "): " << n.reason << "\n";
      }
    };
    list("Not expressible in the scenario yet (they change the step; not applied)", out_.unsupported);
    list("Unknown flags (not applied)", out_.unknown);
    list("No effect on the simulated step", out_.ignored);
    y << "name: " << opt_.scenario_name << "\n";
    for (const char* section : {"model", "hardware", "topology", "parallelism", "optimizations", "training"}) {
      const auto it = sections_.find(section);
      if (it == sections_.end()) continue;
      y << "\n" << section << ":\n";
      std::string open_sub;  // "moe" while writing moe.* entries
      for (const Entry& e : it->second) {
        const std::size_t dot = e.key.find('.');
        const std::string sub = dot == std::string::npos ? "" : e.key.substr(0, dot);
        if (!sub.empty() && sub != open_sub) y << "  " << sub << ":\n";
        open_sub = sub;
        const std::string key = sub.empty() ? e.key : e.key.substr(dot + 1);
        y << (sub.empty() ? "  " : "    ") << key << ": " << e.value << "    # " << e.comment << "\n";
      }
    }
    return y.str();
  }

  const MegatronImportOptions& opt_;
  std::map<std::string, FlagOccurrence> flags_;
  std::map<std::string, std::vector<Entry>> sections_;
  MegatronImport out_;
  int layers_ = 0, hidden_ = 0, heads_ = 0, seq_ = 0, ffn_ = 0, tp_ = 1, pp_ = 1, cp_ = 1, micro_ = 1;
};

}  // namespace

MegatronImport import_megatron(const std::string& text, const MegatronImportOptions& options) {
  return Importer(text, options).run();
}

}  // namespace mofasim::interop
