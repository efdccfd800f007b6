// `mofasim import-megatron`: the flag table applied to the model's shape, and the scenario YAML
// written from it (the layout and the features are in megatron_import_layout.cc and
// megatron_import_features.cc; the class is in megatron_importer.h).
#include "sim/interop/megatron_import.h"

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "model/spec.h"
#include "sim/interop/megatron_importer.h"

namespace mofasim::interop::detail {

std::string cli_error(std::string_view option, std::string_view message) {
  return "mofasim import-megatron: " + std::string(option) + ": " + std::string(message);
}

// ------------------------------------------------------------------ model
void Importer::model() {
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

void Importer::vocab() {
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

void Importer::norm_and_position() {
  const std::string norm = has("--normalization") ? word("--normalization") : "LayerNorm";
  if (norm != "LayerNorm" && norm != "RMSNorm") bad("--normalization", "expected LayerNorm or RMSNorm, got '" + norm + "'");
  set("model", "norm", norm == "RMSNorm" ? "rmsnorm" : "layernorm",
      has("--normalization") ? from("--normalization") : "Megatron default LayerNorm");
  // With MLA, --qk-layernorm norms the q and kv latents, which the QKV op already holds.
  if (has("--qk-layernorm") && !has("--multi-latent-attention")) set("model", "qk_layernorm", "true", "--qk-layernorm");
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

void Importer::attention() {
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
  window();
}

// Sliding-window attention. Megatron's --window-size is Transformer Engine's (left, right) window:
// query i attends to keys i - left ... i + right, so a causal window (left, 0) is the scenario's
// window_size = left + 1 keys (the query's own included); left -1 is TE's unbounded window.
// --window-attn-skip-freq N keeps full attention on every N-th layer, the scenario's field of that
// name; a list pattern has no field.
void Importer::window() {
  if (has("--window-size")) {
    std::string w = word("--window-size");
    std::erase_if(w, [](char ch) { return ch == '(' || ch == ')' || ch == ' '; });
    std::smatch m;
    // At most 9 digits a side: std::stoll below cannot overflow.
    if (!std::regex_match(w, m, std::regex(R"((-?\d{1,9}),(-?\d{1,9}))"))) {
      bad("--window-size", "expected 'left,right' with at most 9 digits each (e.g. 128,0), got '" +
                               word("--window-size") + "'");
    }
    const long long left = std::stoll(m[1]);
    const long long right = std::stoll(m[2]);
    if (right != 0) {
      unsupported_value("--window-size", "a window reaching " + std::to_string(right) +
                                             " keys ahead: the scenario's windows are causal (right = 0)");
    } else if (left >= 0) {
      set("model", "window_size", std::to_string(left + 1), from("--window-size") + ": left + 1 keys per query");
    } else {
      note(out_.ignored, at("--window-size"), "left -1: Transformer Engine's unbounded window, full causal attention");
    }
  }
  if (has("--window-attn-skip-freq")) {
    const std::string f = word("--window-attn-skip-freq");
    if (f.find('[') != std::string::npos) {
      unsupported_value("--window-attn-skip-freq", "a per-layer pattern: the scenario keeps every N-th layer full");
    } else {
      set("model", "window_attn_skip_freq", std::to_string(integer("--window-attn-skip-freq")),
          from("--window-attn-skip-freq"));
    }
  }
}

void Importer::moe() {
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
  if (has("--moe-layer-freq")) moe_layer_freq();
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
    set("model", "moe.pad_expert_input_to_capacity", "true", "--moe-pad-expert-input-to-capacity");
  }
}

// ------------------------------------------------------------------ YAML
namespace {

// A layer count as written (digits only); -1 when it has more digits than any model's layers.
long long layer_count(const std::string& digits) { return digits.size() > 9 ? -1 : std::stoll(digits); }

}  // namespace

// --moe-layer-freq: 1 (every layer MoE), '([0]*k+[1]*n)' (the first k dense), an integer N (layer
// i is MoE when i % N == 0: 1, then N - 1 zeros) or a repeated list '([0,1]*24)' whose list is the
// pattern (model.moe.layer_pattern).
void Importer::moe_layer_freq() {
  const std::string f = word("--moe-layer-freq");
  std::smatch m;
  if (f == "1") return;  // every layer is MoE: the schema's default
  const auto covers = [&](long long layers) {
    if (layers != layers_) {
      bad("--moe-layer-freq", "pattern covers " + (layers < 0 ? std::string("too many") : std::to_string(layers)) +
                                  " layers, --num-layers is " + std::to_string(layers_));
    }
  };
  if (std::regex_match(f, m, std::regex(R"(\(?\[0\]\s*\*\s*(\d+)\s*\+\s*\[1\]\s*\*\s*(\d+)\)?)"))) {
    const long long dense = layer_count(m[1]);
    const long long moe = layer_count(m[2]);
    covers(dense < 0 || moe < 0 ? -1 : dense + moe);
    set("model", "moe.first_k_dense_layers", std::to_string(dense), from("--moe-layer-freq"));
    return;
  }
  std::vector<int> pattern;
  std::string why = from("--moe-layer-freq");
  if (std::regex_match(f, m, std::regex(R"(\d+)"))) {
    const long long period = layer_count(f);
    if (period >= 1 && period <= model::MoeSpec::kMaxLayerPeriod) {
      pattern.assign(static_cast<std::size_t>(period), 0);
      pattern.front() = 1;
      why += " (layer i is MoE when i % " + f + " == 0)";
    }
  } else if (std::regex_match(f, m, std::regex(R"(\(?\[([01](?:\s*,\s*[01])*)\]\s*\*\s*(\d+)\)?)"))) {
    for (char c : m[1].str()) {
      if (c == '0' || c == '1') pattern.push_back(c - '0');
    }
    const long long repeats = layer_count(m[2]);
    covers(repeats < 0 ? -1 : static_cast<long long>(pattern.size()) * repeats);
  } else {
    unsupported_value("--moe-layer-freq",
                      "only an integer period, '[0]*k+[1]*n' (first k dense) or a repeated 0/1 list is expressible");
    return;
  }
  if (pattern.empty() || pattern.size() > static_cast<std::size_t>(model::MoeSpec::kMaxLayerPeriod)) {
    unsupported_value("--moe-layer-freq", "a pattern of 1 to " + std::to_string(model::MoeSpec::kMaxLayerPeriod) +
                                              " layers repeated (the schema's limit)");
    return;
  }
  std::string yaml = "[";
  for (std::size_t i = 0; i < pattern.size(); ++i) yaml += (i > 0 ? ", " : "") + std::to_string(pattern[i]);
  set("model", "moe.layer_pattern", yaml + "]", why);
}

std::string Importer::render() const {
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

}  // namespace mofasim::interop::detail

namespace mofasim::interop {

MegatronImport import_megatron(const std::string& text, const MegatronImportOptions& options) {
  return detail::Importer(text, options).run();
}

}  // namespace mofasim::interop
