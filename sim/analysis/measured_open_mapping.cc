// Open-set row -> specs, or the reasons it cannot be expressed (see measured_open_mapping.h).
#include "sim/analysis/measured_open_mapping.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <map>
#include <mutex>
#include <regex>
#include <stdexcept>

#include "model/recompute_modules.h"
#include "model/shape.h"
#include "model/stage_layout.h"
#include "sim/analysis/measured_open_quantity.h"
#include "sim/analysis/measured_open_recipes.h"
#include "sim/analysis/measured_open_split.h"
#include "sim/analysis/measured_open_stack.h"
#include "sim/analysis/measured_open_text.h"
#include "sim/analysis/measured_open_framework.h"
#include "sim/scenario/budgets.h"
#include "sim/scenario/loader.h"

namespace mofasim::analysis {
namespace {

// A count written in a free-text column: its value when it has 1 to 9 digits, else nothing (a
// user's text never overflows a conversion).
std::optional<int> small_count(const std::string& digits) {
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  return std::stoi(digits);
}

// ---- GPU -> preset and intra-node link ------------------------------------------------------

// Intra-node bus bandwidth per GPU and direction (what nccl-tests reports as busBW), by link class.
constexpr double kNvlink3BusBandwidth = 200e9;  // A100 SXM: nccl-tests#149, #178 (scenarios/llama2-70b-a100-1024.yaml)
constexpr double kNvlink4BusBandwidth = 370e9;  // H100/H200: nccl-tests#212 (scenarios/small.yaml)
// H800: NVLink cut to 400 GB/s bidirectional; ~160 GB/s achieved (DeepSeek-V3 report §3.2.2,
// scenarios/deepseek-v3-h800-2048.yaml).
constexpr double kH800NvlinkBusBandwidth = 160e9;
// A800: the A100 die with NVLink cut from 600 to 400 GB/s bidirectional (NVIDIA A800 datasheet); the
// A100's measured 200 GB/s bus bandwidth scaled by that ratio.
constexpr double kA800NvlinkBusBandwidth = 200e9 * 400.0 / 600.0;
// NVLink 5 (B200, GB200): bus bandwidth and per-ring-step latency fitted together on the 10 rows of
// ../shared/data/kernels/collectives.csv that time an 8 x B200 all-reduce from 8 MiB to 4 GiB (AWS
// p6-b200, all_reduce_bench.py, nccl 2.27.7): t = 2(n-1) alpha + 2(n-1)/n bytes / busBW, least squares
// in relative error, gives 733.8 GB/s and 6.48 us per step (max |error| 16 % at 64 MiB, within 5 %
// from 128 MiB; the 2 us of the other link classes with 740 GB/s made the 8-64 MiB rows, the size of
// a layer's TP collectives, 36-59 % fast). Smaller messages sit on a ~48 us launch floor of the
// benchmark and 8 GiB and up run NVLS; both are left out of the fit.
constexpr double kNvlink5BusBandwidth = 733.8e9;
constexpr double kNvlink5Latency = 6.48e-6;
constexpr double kPcieBusBandwidth = 30e9;      // A100 PCIe without NVLink: the row's own text
                                                // (SimuMax a100_pcie.json, ~30 GB/s PCIe links)
constexpr double kIntraLatency = 2e-6;          // assumption, as the shipped scenarios
constexpr double kInterLatency = 5e-6;          // assumption, as the shipped scenarios

struct GpuClass {
  std::vector<const char*> all;      // words the gpu column contains, all of them (case-insensitive)
  std::vector<const char*> none;     // words it must not contain
  const char* family;
  std::vector<const char*> presets;  // preset names tried in order (none: no preset can exist yet)
  double nvlink_bus_bandwidth;
  double nvlink_latency;             // alpha per ring step on that link class
  const char* no_preset_why;         // when presets is empty
  // Grace-Blackwell parts ship as NVL72 racks (or NVL36x2, the same domain): every run on one has a
  // 72-GPU NVLink domain, whatever its interconnect text says.
  bool rack_scale = false;
};

const std::vector<GpuClass>& gpu_classes() {
  // The first class whose words the gpu column has: "GB300" / "GB200" before "B300" / "B200", the 96 GB H100 before the
  // SXM5 part. The open set writes A100-SXM4-80GB, H100-SXM5-80GB, ...; other files write "A100 80GB",
  // "H100 SXM", "NVIDIA H800", which name the same parts. H100 PCIe / NVL (114 and 132 SMs at
  // 350-400 W) have no preset.
  static const std::vector<GpuClass> kClasses = {
      {{"gb300"}, {}, "GB300", {"gb300"}, kNvlink5BusBandwidth, kNvlink5Latency, "", true},
      {{"gb200"}, {}, "GB200", {"gb200-nvl72", "gb200"}, kNvlink5BusBandwidth, kNvlink5Latency, "", true},
      {{"b300"}, {}, "B300", {"b300"}, kNvlink5BusBandwidth, kNvlink5Latency, ""},
      {{"b200"}, {}, "B200", {"b200", "b200-sxm"}, kNvlink5BusBandwidth, kNvlink5Latency, ""},
      {{"h200"}, {}, "H200", {"h200"}, kNvlink4BusBandwidth, kIntraLatency, ""},
      {{"h100", "96gb"}, {}, "H100-96GB", {"h100-96gb"}, kNvlink4BusBandwidth, kIntraLatency, ""},
      {{"h100"}, {"pcie", "h100 nvl", "h100-nvl"}, "H100-SXM5-80GB", {"h100-sxm"}, kNvlink4BusBandwidth, kIntraLatency, ""},
      {{"h100"}, {}, "H100-PCIe/NVL", {}, 0, 0, "no hardware preset for the H100 PCIe / NVL boards"},
      {{"h800"}, {}, "H800", {"h800"}, kH800NvlinkBusBandwidth, kIntraLatency, ""},
      {{"a800"}, {"pcie"}, "A800-SXM4-80GB", {"a100-80gb"}, kA800NvlinkBusBandwidth, kIntraLatency, ""},
      {{"a100", "pcie"}, {}, "A100-PCIe-80GB", {"a100-pcie-80gb", "a100-pcie"}, kPcieBusBandwidth, kIntraLatency, ""},
      {{"a100", "40gb"}, {}, "A100-SXM4-40GB", {"a100-40gb"}, kNvlink3BusBandwidth, kIntraLatency, ""},
      {{"a100"}, {}, "A100-SXM4-80GB", {"a100-80gb"}, kNvlink3BusBandwidth, kIntraLatency, ""},
  };
  return kClasses;
}

bool gpu_class_matches(const GpuClass& g, const std::string& gpu) {
  const auto in = [&](const char* word) { return has(gpu, word); };
  return std::all_of(g.all.begin(), g.all.end(), in) && std::none_of(g.none.begin(), g.none.end(), in);
}

// The preset's hardware, or nothing when no preset of that name ships. Loaded once per name.
std::optional<model::HardwareSpec> load_preset(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::optional<model::HardwareSpec>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  std::optional<model::HardwareSpec> hw;
  try {
    hw = hardware_from_preset(name);
  } catch (const std::exception&) {
    hw.reset();  // an unknown preset name: the caller lists the row
  }
  cache.emplace(name, hw);
  return hw;
}

// ---- interconnect -> inter-node line rate ------------------------------------------------------

}  // namespace

std::optional<double> open_inter_node_bytes_per_node(const std::string& text, int gpus_per_node) {
  static const std::regex kPerGpu(R"((\d+)\s*Gb(ps|/s)?\s+per GPU)");
  static const std::regex kNics(R"((\d+)\s*x\s*(?:[A-Za-z0-9-]+\s+){0,4}?(\d+)\s*Gb)");
  std::smatch m;
  if (std::regex_search(text, m, kPerGpu)) {
    const auto gbit = small_count(m[1].str());
    if (gbit && *gbit > 0) return *gbit * 1e9 / 8 * gpus_per_node;
    return std::nullopt;
  }
  if (std::regex_search(text, m, kNics)) {
    const auto nics = small_count(m[1].str());
    const auto gbit = small_count(m[2].str());
    if (nics && gbit && *nics > 0 && *gbit > 0) return static_cast<double>(*nics) * *gbit * 1e9 / 8;
  }
  // A node's total: "3.2 Tbps per node", "1600 Gb/s per host".
  static const std::regex kPerNode(R"((\d{1,6})(?:\.(\d{1,3}))?\s?(Gb|Tb)(?:ps|/s)?\s(?:per|/)\s?(?:node|host|server))",
                                   std::regex::icase);
  if (std::regex_search(text, m, kPerNode)) {
    const auto whole = small_count(m[1].str());
    if (!whole) return std::nullopt;
    const double fraction = m[2].matched ? std::stod("0." + m[2].str()) : 0.0;
    const double unit = lower(m[3].str()) == "tb" ? 1e12 : 1e9;
    const double bits = (*whole + fraction) * unit;
    if (bits > 0) return bits / 8;
  }
  return std::nullopt;
}

std::optional<double> named_system_bytes_per_node(const std::string& text, int gpus_per_node) {
  // Line rate of the compute fabric each product's data sheet gives, per GPU (its node's NICs over
  // its GPUs), and the GPUs of its node: a row whose node is another size is not that product.
  struct System {
    std::initializer_list<const char*> names;
    double gbit_per_gpu;
    int node_gpus;
  };
  static const System kSystems[] = {
      {{"bm.gpu.h100.8", "bm.gpu.h200.8"}, 400, 8},  // OCI: 16 x 200 Gb/s RoCE cluster network
      {{"nd h100 v5", "nd_h100_v5", "nd h200 v5", "nd_h200_v5"}, 400, 8},  // Azure: 8 x 400 Gb/s NDR InfiniBand
      {{"ndm a100 v4", "nd a100 v4", "ndm_a100_v4", "nd_a100_v4"}, 200, 8},  // Azure: 8 x 200 Gb/s HDR InfiniBand
      {{"p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge"}, 400, 8},  // AWS: 3,200 Gb/s EFA
      {{"p4d.24xlarge", "p4de.24xlarge"}, 50, 8},  // AWS: 400 Gb/s EFA
      {{"dgx h100", "dgx-h100", "dgxh100", "dgx h200", "dgx-h200", "dgx b200", "dgx-b200"}, 400, 8},  // 8 x 400 Gb/s ConnectX-7
      {{"dgx a100", "dgx-a100", "dgxa100"}, 200, 8},  // 8 x 200 Gb/s HDR (compute fabric)
      // Rack-scale trays of 4 GPUs: DGX GB200 (user guide, compute tray: 4 x ConnectX-7, 400 Gb/s
      // InfiniBand each) and the GB300 NVL72 (NVIDIA's NVL72 enterprise reference architecture:
      // 4 ConnectX-8 HCAs per compute tray, 800 Gb/s each).
      {{"dgx gb200", "dgx-gb200"}, 400, 4},
      {{"dgx gb300", "dgx-gb300", "gb300 nvl72", "gb300-nvl72"}, 800, 4},
  };
  for (const System& sys : kSystems) {
    if (gpus_per_node == sys.node_gpus && has_any(text, sys.names)) return sys.gbit_per_gpu * sys.node_gpus * 1e9 / 8;
  }
  return std::nullopt;
}

int open_nvl72_nodes_per_domain(const std::string& notes, int gpus, int gpus_per_node) {
  static const std::regex kRacks(R"((\d+)x NVL72)");
  std::smatch m;
  if (gpus_per_node > 0 && std::regex_search(notes, m, kRacks)) {
    const auto racks = small_count(m[1].str());
    if (racks && *racks > 0 && gpus % *racks == 0) {
      const int per_rack = gpus / *racks;
      if (per_rack <= 72 && per_rack % gpus_per_node == 0) return per_rack / gpus_per_node;
    }
  }
  if (gpus_per_node <= 0) return 0;
  // No rack count: the same whole number of trays on each of the fewest racks that hold the run,
  // or on up to twice that many (an assumption; NVIDIA's MLPerf submissions run 64 of each rack's
  // 72 GPUs, "4x NVL72" for 256, and 1,024 GPUs take 16 racks of 64). None: 0.
  const int fewest = std::max(1, (gpus + 71) / 72);
  for (int racks = fewest; racks <= 2 * fewest; ++racks) {
    if (gpus % racks == 0 && (gpus / racks) % gpus_per_node == 0) return gpus / racks / gpus_per_node;
  }
  return 0;
}

namespace {

// ---- model family -> architecture ----------------------------------------------------------------

// Layers before the first MoE layer, from the model text ("1 dense + 3 MoE", "dense_layers=1",
// "first 3 layers dense", "first layer dense"), or nothing.
std::optional<int> first_dense_layers(const std::string& model) {
  static const std::regex kCount(R"((\d+) dense|dense_layers=(\d+)|first (\d+) layers dense)");
  std::smatch m;
  if (std::regex_search(model, m, kCount)) {
    for (int g = 1; g <= 3; ++g) {
      if (m[g].matched) return small_count(m[g].str());
    }
  }
  if (model.find("first layer dense") != std::string::npos) return 1;
  return std::nullopt;
}

// Fills the architecture of `c.model` from the row, or returns why it cannot.
std::optional<std::string> set_architecture(const OpenRun& run, model::ModelSpec& m) {
  const std::string name = lower(run.model);
  m.name = run.model;
  m.num_layers = run.layers;
  m.hidden_size = run.hidden;
  m.num_attention_heads = run.heads;
  m.vocab_size = run.vocab;  // as the source gives it (padded where the source pads)
  m.seq_length = run.seq;
  m.ffn_hidden_size = run.ffn_hidden.value_or(0);
  const bool gpt_oss = name.find("gpt-oss") != std::string::npos;
  if (gpt_oss) {
    // gpt-oss (HF config layer_types, sliding_window 128): sliding and full attention alternate,
    // the first layer sliding. Megatron's window_attn_skip_freq 2: layers 2, 4, ... are full.
    // Not modelled: its attention sinks (one learned logit per head) and the attention biases.
    if (name.find("128-token sliding-window") == std::string::npos) return "gpt-oss row without its window size";
    m.window_size = 128;
    m.window_attn_skip_freq = 2;
  }
  const auto named = [&](std::initializer_list<const char*> needles) { return has_any(run.model, needles); };
  // ALiBi position biases (BLOOM, MPT, Baichuan-13B) are not in the schema.
  if (named({"bloom", "mpt-", "alibi"})) return "ALiBi position biases (" + run.model + ") are not in the schema";
  // GPT-2/3 and the models built like them: learned positions, a non-gated MLP, LayerNorm, biases,
  // tied embeddings (GPT-3, Megatron-Turing NLG; OPT, whose ReLU is the same one memory-bound pass
  // as GeLU in the timing).
  const bool gpt = name.starts_with("gpt3") || name.starts_with("gpt-3") || name.starts_with("gpt-2") ||
                   name.starts_with("gpt2") || named({"megatron-turing", "mt-nlg", "opt-"});
  // Non-gated MLP with RoPE, untied: GPT-NeoX / Pythia (LayerNorm, biases) and Nemotron-4 (squared
  // ReLU, LayerNorm, no biases). Their partial rotary (NeoX) is priced over the whole head.
  const bool neox = named({"gpt-neox", "pythia"});
  const bool nemotron4 = named({"nemotron-4"});
  // Multi-head latent attention: DeepSeek-V2 / V3 / R1 and Kimi K2 (DeepSeek-V3's architecture); the
  // earlier DeepSeek LLM and DeepSeek-MoE models are Llama style.
  const bool mla = named({"deepseek-v2", "deepseek-v3", "deepseek v3", "deepseek-r1", "kimi"});
  // Llama style: Llama 2/3, Mistral / Mixtral, InternLM, Qwen (its QKV biases are under 0.01 % of the
  // layer's FLOPs and are priced as none), Yi, DeepSeek LLM / MoE, OLMo 2.
  const bool llama = named({"llama", "internlm", "qwen", "mistral", "mixtral", "yi-", "deepseek", "olmo-2", "olmo2"}) ||
                     gpt_oss;
  if (!gpt && !neox && !nemotron4 && !mla && !llama) {
    return "model family of '" + run.model +
           "' not recognised (GPT-2/3, OPT, GPT-NeoX, Nemotron-4, Llama, Mistral, Qwen, DeepSeek, ...)";
  }
  if (gpt || neox || nemotron4) {
    m.mlp = model::MlpKind::kGelu;
    m.norm = model::NormKind::kLayerNorm;
    m.position = gpt ? model::PositionKind::kLearned : model::PositionKind::kRope;
    m.linear_bias = !nemotron4;
    m.untie_embeddings = !gpt;
  } else {
    // Llama style (Llama 2/3, InternLM, Qwen3, DeepSeek): RoPE, SwiGLU, RMSNorm, no biases, untied.
    m.mlp = model::MlpKind::kSwiglu;
    m.norm = model::NormKind::kRmsNorm;
    m.position = model::PositionKind::kRope;
    m.linear_bias = gpt_oss;  // gpt-oss has biases on its attention and expert linears (HF modeling_gpt_oss)
    m.untie_embeddings = true;
  }
  if (mla) {
    // DeepSeek-V2/V3 (and Kimi K2, DeepSeek-V3's architecture) MLA: the set's README §3.1 and the
    // published configs (q_lora 1536, kv_lora 512, qk 128 + 64, v 128).
    m.attention = model::AttentionKind::kMla;
    m.num_kv_heads = run.heads;
    m.mla = {.q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128};
    // DeepSeek-V3's multi-token-prediction module where the row says the run had it ("w/ MTP",
    // "with MTP", "mtp_num_layers=1"); "uncertain: MTP layer" says nothing.
    if (has_any(run.model + "; " + run.notes, {"w/ mtp", "with mtp", "mtp_num_layers=1", "mtp_num_layers: 1"})) m.mtp_depth = 1;
  } else {
    if (!run.kv_heads) return "kv_heads is empty for a non-MLA model";
    m.num_kv_heads = *run.kv_heads;
    m.attention = *run.kv_heads == run.heads ? model::AttentionKind::kMha
                  : *run.kv_heads == 1      ? model::AttentionKind::kMqa
                                            : model::AttentionKind::kGqa;
    // The head dim where the model text states it ("head dim 64": gpt-oss's 64 x 64 != 2880), else h / a.
    static const std::regex kHeadDim(R"(head dim (\d+))");
    std::smatch hd;
    if (std::regex_search(run.model, hd, kHeadDim) && small_count(hd[1].str()).value_or(0) > 0) {
      m.head_dim = *small_count(hd[1].str());
    } else if (named({"qwen3", "qwen 3", "qwen-3"})) {
      // Qwen3 (dense and MoE) fixes the head dim at 128 whatever the width (every Qwen3 config.json:
      // "head_dim": 128; Qwen3-30B-A3B's 32 heads x 128 = 4096 over a 2048 hidden).
      m.head_dim = 128;
    } else {
      if (run.hidden % run.heads != 0) return "hidden is not a multiple of heads and the CSV gives no head dim";
      m.head_dim = run.hidden / run.heads;
    }
    // Norms on every query and key head: Qwen3 (transformers' Qwen3Attention q_norm / k_norm;
    // Megatron-Bridge's Qwen3 providers set qk_layernorm) and OLMo 2 (its q_norm / k_norm).
    m.qk_layernorm = named({"qwen3", "qwen 3", "qwen-3", "olmo-2", "olmo2"});
  }
  if (run.is_moe()) {
    if (!run.moe_topk || !run.moe_ffn_hidden) return "MoE row without moe_topk or moe_ffn_hidden";
    // MoE layers interleaved with dense ones: HF interleave_moe_layer_step n makes layers n-1,
    // 2n-1, ... MoE (transformers' Llama 4: (i + 1) % n == 0), Llama 4 Maverick with n = 2 (its
    // config.json), "every other layer" the same; the pattern n-1 dense layers, then a MoE one.
    int interleave = 0;
    static const std::regex kStep(R"(interleave_moe_layer_step\D{0,3}(\d+))");
    std::smatch step;
    if (std::regex_search(run.model, step, kStep)) {
      interleave = small_count(step[1].str()).value_or(0);
      if (interleave < 1 || interleave > model::MoeSpec::kMaxLayerPeriod) {
        return "interleave_moe_layer_step " + step[1].str() + " outside 1-" +
               std::to_string(model::MoeSpec::kMaxLayerPeriod);
      }
    } else if (named({"maverick", "every other layer", "alternating dense"})) {
      interleave = 2;
    }
    // Dense layers before the first MoE layer where the model text states them; MLA models (DeepSeek-V3:
    // 3, Kimi K2: 1) always have some, so for them the text must say how many.
    const auto stated_dense = first_dense_layers(run.model);
    if (mla && !stated_dense) return "the number of dense layers before the MoE layers is not in the model text";
    const int dense = stated_dense.value_or(0);
    if ((dense > 0 || interleave > 1) && !run.ffn_hidden) return "dense layers without ffn_hidden";
    m.moe = {.num_experts = *run.moe_experts,
             .top_k = *run.moe_topk,
             .expert_ffn_hidden_size = *run.moe_ffn_hidden,
             .num_shared_experts = run.shared_experts.value_or(0),
             .shared_expert_ffn_hidden_size = *run.moe_ffn_hidden,  // README §2: each of moe_ffn_hidden
             .first_k_dense_layers = dense,
             // Every MoE source in the set forces balanced routing (capacity padding, fake balanced
             // gate, forced balance): the busiest EP rank holds the mean.
             .load_imbalance = 1.0};
    if (interleave > 1) {
      m.moe.layer_period = interleave;
      m.moe.layer_mask = std::uint64_t{1} << (interleave - 1);
    }
    // NeMo AutoModel's "fake balanced gate" (FakeBalancedGate, nemo_automodel/components/moe/
    // layers.py: indices = arange(tokens * k).view(-1, k) % n_experts) gives each token k
    // consecutive experts, on one or two GPUs of one node, so its DeepEP traffic is a fraction of
    // a trained router's. Priced so, the four O-AM rows (fit split) come out 13-27 % fast: their
    // step holds a cost of about that size the model lacks (docs/validation-measured.md). Until it
    // is found they keep a trained router's spread, which the model prices.
  }
  return std::nullopt;
}

// ---- text columns -> features ----------------------------------------------------------------------

struct Recompute {
  std::optional<model::RecomputeKind> kind{};
  std::string why_not{};
  int every_nth = 0;          // torchtitan selective_ac_option: k (full recompute of every k-th layer)
  bool torchtitan_op = false; // torchtitan selective_ac_option: op
};

Recompute recompute_of(const std::string& text) {
  const std::string t = lower(text);
  if (t.starts_with("none")) return {model::RecomputeKind::kNone, ""};
  if (t.starts_with("not stated")) return {std::nullopt, "recompute not stated by the source"};
  if (t.find("per-layer") != std::string::npos) {
    // torchtitan selective_ac_option: k, with k read from the text ("every 2nd layer").
    static const std::regex kEvery(R"(every (\d+)(st|nd|rd|th) layer)");
    std::smatch m;
    const auto k = std::regex_search(t, m, kEvery) ? small_count(m[1].str()) : std::nullopt;
    if (!k || *k < 1) return {std::nullopt, "per-layer selective activation checkpointing without its layer frequency"};
    return {.kind = model::RecomputeKind::kFull, .every_nth = *k};
  }
  if (t.find("op-level") != std::string::npos || t.find("per-op") != std::string::npos) {
    return {.kind = model::RecomputeKind::kSelective, .torchtitan_op = true};
  }
  if (t.starts_with("selective")) return {model::RecomputeKind::kSelective, ""};  // Megatron selective
  if (t.starts_with("full") || t.starts_with("activation checkpointing on")) return {model::RecomputeKind::kFull, ""};
  // Other stacks' words: Megatron's flag as written, "no ..." for none, and PyTorch / Hugging Face
  // activation (gradient) checkpointing, which recomputes each checkpointed layer whole.
  static const std::regex kGranularity(R"(granularity[ =:_-]{0,3}(full|selective))");
  std::smatch g;
  if (std::regex_search(t, g, kGranularity)) {
    return {g[1].str() == "full" ? model::RecomputeKind::kFull : model::RecomputeKind::kSelective, ""};
  }
  if (t == "no" || t == "off" || t == "false" || t == "disabled" || t.starts_with("no ") || t.starts_with("without ")) {
    return {model::RecomputeKind::kNone, ""};
  }
  if (t.find("gradient checkpointing") != std::string::npos || t.find("activation checkpointing") != std::string::npos) {
    return {model::RecomputeKind::kFull, ""};
  }
  return {std::nullopt, "recompute text not recognised: '" + text + "'"};
}

// The precision text as Megatron / Transformer Engine fields: bf16, or fp8 with its recipe. The
// recipe is read from the text alone (no per-row choice): MXFP8 where it says so; current scaling
// where it says current, tensorwise or dynamic (torchao's float8 linears scale each tensor from its
// own amax); otherwise TE's and Megatron's default, delayed scaling. Rows whose text names MXFP8
// only as a side value ("value in parentheses = MXFP8") are read as the default recipe.
struct Precision {
  model::Fp8Spec fp8{};
  bool fp16 = false;  // FP16 mixed precision instead of BF16
  std::string why_not{};
};

Precision precision_of(const std::string& text) {
  Precision p;
  if (!has(text, "fp8")) {
    // FP16 mixed precision (the stacks before BF16) runs its GEMMs and attention at the BF16 rates
    // (compute_time.cc) with FP16 parameters and FP32 main gradients, as Megatron's --fp16.
    if (!has(text, "bf16") && (has(text, "fp16") || has(text, "float16"))) {
      p.fp16 = true;
    } else if (has_any(text, {"nvfp4", "fp4"})) {
      p.why_not = "FP4 training (" + text + ") is not in the schema";
    } else if (!has(text, "bf16")) {
      p.why_not = "precision not recognised: '" + text + "'";
    }
    return p;
  }
  p.fp8.enabled = true;
  // The recipe a row names as its own is in its first clause ("MXFP8", "FP8-MX (MXFP8)", "FP8-CS");
  // a later clause may name another as a side value ("value in parentheses = MXFP8").
  const std::string t = lower(text);
  const std::string first = t.substr(0, t.find_first_of("(;,"));
  if (has_any(first, {"mxfp8", "fp8-mx", "mx fp8", "mx-fp8"})) {
    p.fp8.recipe = model::Fp8Recipe::kMxfp8;
  } else if (has_any(text, {"blockwise", "block-wise", "block scaling", "1x128"})) {
    // DeepSeek-V3's recipe: 1 x 128 activation tiles, 128 x 128 weight blocks (TE Float8BlockScaling).
    p.fp8.recipe = model::Fp8Recipe::kBlockwise;
  } else if (has_any(text, {"current scaling", "tensorwise", "dynamic scaling", "torchao"}) || has(first, "fp8-cs")) {
    // torchao's float8 linears scale each tensor from its own amax (dynamic tensorwise, its default).
    p.fp8.recipe = model::Fp8Recipe::kCurrent;
  } else {
    p.fp8.recipe = model::Fp8Recipe::kDelayed;
  }
  return p;
}

struct Sharding {
  bool distributed_optimizer = false;
  model::DpSharding level = model::DpSharding::kNone;  // kOptim with the distributed optimizer
  bool overlapped = false;  // the optimizer overlaps its gradient reduce with the backward
  int instances = 1;        // HSDP: optimizer shards within dp / instances ranks, replicated across
  std::string why_not{};
};

Sharding sharding_of(const std::string& text, int dp) {
  // FSDP2's full shard (reshard after forward, its default) is ZeRO-3: parameters, gradients and
  // optimizer state sharded over the DP group, each layer gathered for its forward and backward.
  // FSDP1 writes it FULL_SHARD, DeepSpeed ZeRO stage 3.
  if (has_any(text, {"full shard", "full_shard", "fully sharded", "zero-3", "zero3", "zero stage 3", "stage 3"})) {
    return {.distributed_optimizer = true, .level = model::DpSharding::kOptimGradsParams};
  }
  // Hybrid sharding (FSDP HYBRID_SHARD, HSDP) shards within groups whose size the text must give
  // ("within groups of N", below); without it the layout is unknown.
  if (has_any(text, {"hybrid shard", "hybrid_shard", "hsdp"}) && !has(text, "within groups of")) {
    return {.why_not = "hybrid sharding without its shard group size ('within groups of N')"};
  }
  static const std::regex kGroups(R"(within groups of (\d+))");
  std::smatch m;
  if (std::regex_search(text, m, kGroups) && small_count(m[1].str()).value_or(std::numeric_limits<int>::max()) < dp) {
    // InternLM's zero1 = g: optimizer state sharded within groups of g DP ranks and replicated
    // across them, i.e. HSDP with dp / g instances (Megatron's num_distributed_optimizer_instances).
    // The gradients then reduce-scatter within the group and all-reduce across the dp / g
    // replicas, as Megatron does; InternLM's own reduce moves the same bytes per rank.
    const int group = small_count(m[1].str()).value_or(0);
    if (group < 1 || dp % group != 0) {
      return {.why_not = "ZeRO-1 within groups of " + m[1].str() + " ranks that do not divide dp = " + std::to_string(dp)};
    }
    return {.distributed_optimizer = true, .instances = dp / group};
  }
  if (has(text, "overlappeddistributedoptimizer")) return {.distributed_optimizer = true, .overlapped = true};
  // ZeRO-2 (DeepSpeed stage 2, FSDP SHARD_GRAD_OP): gradients and optimizer state sharded.
  if (has_any(text, {"zero-2", "zero2", "zero stage 2", "stage 2", "shard_grad_op", "shard grad op"})) {
    return {.distributed_optimizer = true, .level = model::DpSharding::kOptimGrads};
  }
  if (has_any(text, {"distributed optimizer", "distributedoptimizer", "zero-1", "zero1", "zero stage 1", "stage 1",
                     "distributed (fused) adam"})) {
    return {.distributed_optimizer = true};
  }
  // Nothing sharded: "none ...", plain DDP, NO_SHARD.
  if (lower(text).starts_with("none") || lower(text).starts_with("ddp") || has_any(text, {"no_shard", "no shard"})) {
    return {};
  }
  // FSDP named without a strategy ("FSDP2", "FSDP", "fully_shard"): PyTorch's default, full shard
  // (FSDP1 ShardingStrategy.FULL_SHARD; FSDP2 fully_shard with reshard_after_forward=True), and
  // Megatron-Core's FSDP (optim_grads_params) where a row says FSDP=1.
  if (names_fsdp_on(text)) {
    return {.distributed_optimizer = true, .level = model::DpSharding::kOptimGradsParams};
  }
  return {.why_not = "optimizer sharding not recognised: '" + text + "'"};
}

// Transformer Engine's userbuffers TP-comm overlap, where a row's notes say it ran ("TP-comm
// overlap", every O-MLP row; not "... overlap disabled", O-SMXB's non-overlap contract): MoFa(20)
// with tp pieces. TE's ring exchange, which NeMo's userbuffer configs use for the all-gather side
// (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad), sends one of the tp shards per step and runs the
// GEMM on the shard already there, i.e. tp pieces. The reduce-scatter side (proj_fprop, fc2_fprop)
// is ring exchange too in the FP8 Llama 3.1 405B configs (tp pieces, exact); where a config runs it
// as "pipeline" with num_splits 4, the model's one piece count splits it finer than TE does at tp 8
// (chunks 4 instead: fit split 10.09 % against 10.04 %, docs/validation-measured.md). The bulk overlaps of the dgrad/wgrad GEMMs with the
// all-gather / reduce-scatter of the backward are not modelled.
// torchtitan's async TP (O-TT rows whose notes say "async TP", against "vanilla TP") is the same
// decomposition in PyTorch: micro-pipelined all-gather + matmul and matmul + reduce-scatter over
// symmetric memory, one shard per step (torch.distributed._symmetric_memory fused_all_gather_matmul /
// fused_matmul_reduce_scatter), so tp pieces as well.
// `recipe_overlaps`: the row's recipe runs TE's userbuffers overlap (nvidia_recipe_overlaps).
model::OverlapSpec tp_comm_overlap_of(const std::string& notes, int tp, bool recipe_overlaps) {
  if (tp < 2) return {};
  const bool te_userbuffers = recipe_overlaps || (has(notes, "TP-comm overlap") && !has(notes, "overlap disabled"));
  if (!te_userbuffers && !has(notes, "async TP")) return {};
  return {.enabled = true, .chunks = tp};
}

}  // namespace

const std::vector<std::string>& open_fit_sources() {
  static const std::vector<std::string> kFit = {"O-SMXB", "O-ILM", "O-AM", "O-MLP"};
  return kFit;
}

std::string open_split(const std::string& source_group) {
  const auto& fit = open_fit_sources();
  return std::find(fit.begin(), fit.end(), source_group) != fit.end() ? "fit" : "test";
}

OpenCase map_open_run(const OpenRun& run) {
  OpenCase out;
  out.split = open_split(run.source_group());
  out.gpu_family = run.gpu;
  std::vector<std::string>& why = out.reasons;
  if (!run.unreadable.empty()) {  // the reader could not read the row (measured_open_reader.h)
    why.push_back(run.unreadable);
    return out;
  }

  // Device.
  const GpuClass* gpu = nullptr;
  for (const GpuClass& g : gpu_classes()) {
    if (gpu_class_matches(g, run.gpu)) {
      gpu = &g;
      break;
    }
  }
  std::optional<model::HardwareSpec> hardware;
  if (gpu == nullptr) {
    why.push_back("GPU '" + run.gpu + "' not recognised");
  } else {
    out.gpu_family = gpu->family;
    for (const char* preset : gpu->presets) {
      hardware = load_preset(preset);
      if (hardware) break;
    }
    if (!hardware) {
      why.push_back(gpu->presets.empty() ? std::string(gpu->no_preset_why)
                                         : "no hardware preset for " + std::string(gpu->family) + " (tried '" +
                                               gpu->presets.front() + "')");
    }
  }

  // Network.
  topology::TopologySpec topo{.gpus = run.gpus, .gpus_per_node = std::min(run.gpus, run.gpus_per_node)};
  if (gpu != nullptr) {
    const double intra = has(run.interconnect, "no nvlink") ? kPcieBusBandwidth : gpu->nvlink_bus_bandwidth;
    const double intra_latency = has(run.interconnect, "no nvlink") ? kIntraLatency : gpu->nvlink_latency;
    topo.intra_node = {.bandwidth = intra, .latency = intra_latency};
  }
  // A 72-GPU NVLink domain on a rack-scale part, or where the text names one ("72-GPU NVLink5 domain").
  const bool nvl72 = (gpu != nullptr && gpu->rack_scale) ||
                     has_any(run.interconnect + "; " + run.gpu, {"72-GPU NVLink", "NVL72", "NVL 72", "NVL-72"});
  const bool one_rack = nvl72 && gpu != nullptr && run.gpus <= 72 && 72 % run.gpus_per_node == 0 &&
                        open_nvl72_nodes_per_domain(run.notes, run.gpus, run.gpus_per_node) * run.gpus_per_node >= run.gpus;
  if (run.gpus > run.gpus_per_node && one_rack) {
    // A run inside one 72-GPU NVLink domain: its trays talk over NVLink only, no NIC rate needed.
    topo.inter_node = {.bandwidth = gpu->nvlink_bus_bandwidth, .latency = gpu->nvlink_latency};
  } else if (run.gpus > run.gpus_per_node) {
    // The rate the text states, else the data-sheet rate of a system it names (named_system_bytes_per_node).
    auto per_node = open_inter_node_bytes_per_node(run.interconnect, run.gpus_per_node);
    if (!per_node) per_node = named_system_bytes_per_node(run.interconnect + "; " + run.gpu, run.gpus_per_node);
    if (!per_node) {
      why.push_back("inter-node bandwidth not stated in the interconnect text");
    } else {
      const topology::LinkSpec scale_out{.bandwidth = *per_node / run.gpus_per_node, .latency = kInterLatency};
      if (nvl72 && gpu != nullptr && 72 % run.gpus_per_node == 0) {
        // GB200 NVL72: the 72-GPU NVLink domain is a supernode; trays talk over NVLink inside it.
        // Where the notes say the run used N racks ("4x NVL72"), the GPUs are spread evenly over
        // them (MLPerf runs 64 of each rack's 72 GPUs: 256 GPUs on "4x NVL72").
        topo.nodes_per_supernode = open_nvl72_nodes_per_domain(run.notes, run.gpus, run.gpus_per_node);
        if (topo.nodes_per_supernode == 0) {
          why.push_back("the run's " + std::to_string(run.gpus / run.gpus_per_node) +
                        " trays do not split evenly over the NVL72 racks it needs (the schema's NVLink domains are equal)");
        }
        topo.inter_node = {.bandwidth = gpu->nvlink_bus_bandwidth, .latency = gpu->nvlink_latency};
        topo.inter_supernode = scale_out;
      } else {
        topo.inter_node = scale_out;
      }
    }
  }

  // Model and training features.
  model::ModelSpec m;
  m.attention_impl = model::AttentionImpl::kFused;  // every source runs flash / cuDNN fused attention
  if (const auto bad = set_architecture(run, m)) why.push_back(*bad);
  Recompute recompute = recompute_of(run.recompute);
  // A NVIDIA performance-summary row leaves recompute to the recipe: the recipe's, where its
  // model's recipe was read (measured_open_recipes.h).
  std::optional<model::RecomputeModules> recipe_modules;
  if (!recompute.kind && recompute_left_to_nvidia_recipe(run)) {
    if (const auto other = nvidia_recipe_not_expressible(run)) why.push_back(*other);
    if (const auto recipe = nvidia_recipe_recompute(run)) {
      recompute = {.kind = recipe->kind};
      if (recipe->kind == model::RecomputeKind::kSelective) recipe_modules = recipe->modules;
    } else {
      recompute.why_not = std::string("recompute left to a ") + nvidia_recipe_set_name(nvidia_recipe_set(run)) +
                          " performance recipe not read for model '" + run.model + "'";
    }
  }
  if (recompute.kind) {
    out.recompute = *recompute.kind;
  } else {
    why.push_back(recompute.why_not);
  }
  const Precision precision = precision_of(run.precision);
  if (!precision.why_not.empty()) why.push_back(precision.why_not);
  if (hardware && precision.fp8.enabled && !(hardware->peak_flops_fp8 > 0)) {
    why.push_back("FP8 training on a GPU preset without an FP8 peak");
  }
  if (hardware && precision.fp8.recipe == model::Fp8Recipe::kMxfp8 && precision.fp8.enabled &&
      hardware->kernels.family != model::GpuFamily::kBlackwell) {
    why.push_back("MXFP8 on a GPU that is not Blackwell");
  }
  const Sharding sharding = sharding_of(run.optimizer_sharding, run.dp);
  if (!sharding.why_not.empty()) why.push_back(sharding.why_not);
  if (const auto bad = quantity_not_comparable(run)) why.push_back(*bad);
  // The scenario loader's budget (sim/scenario/budgets.h): micro-batches x layers x 2 passes x 32
  // ops; a bigger step is refused there, so it is not simulated here either.
  const double micro_batches = static_cast<double>(run.global_batch) / (static_cast<double>(run.dp) * run.micro_batch);
  const double tasks = micro_batches * run.layers * 2 * 32;
  if (tasks > scenario::kMaxTasksPerStep) {
    why.push_back("an estimated " + std::to_string(static_cast<long long>(tasks)) +
                  " simulator tasks per step exceed the scenario budget of 2e7");
  }
  const SourceFramework framework = source_framework(run);
  const OpenStack stack = open_stack(run);
  // The scenario schema's rule (validate_rules.cc): FlashAttention-1's measured curves exist for
  // Ampere and Hopper only (flash-attn 1 has no Blackwell kernel).
  if (hardware && stack.attention == model::AttentionImpl::kFlash1 &&
      hardware->compute_model == model::ComputeModelKind::kKernel &&
      hardware->kernels.family != model::GpuFamily::kAmpere && hardware->kernels.family != model::GpuFamily::kHopper) {
    why.push_back("FlashAttention-1 on a GPU without its measured curves (ampere and hopper only)");
  }
  if (!why.empty()) return out;

  MeasuredCase c;
  c.model = m;
  c.model.kernel_stack = stack.kernels;
  if (c.model.is_moe()) c.model.moe.token_dispatcher = stack.dispatcher;
  c.model.attention_impl = stack.attention;
  c.hardware = *hardware;
  c.parallel = model::ParallelSpec{
      .tp = run.tp,
      .cp = run.cp,
      .pp = run.pp,
      .vpp = run.vpp,
      .dp = run.dp,
      .ep = run.ep,
      .micro_batch = run.micro_batch,
      .global_batch = run.global_batch,
      .sequence_parallel = stack.sequence_parallel && run.tp > 1,
      .schedule = run.vpp > 1 ? model::ScheduleKind::kInterleaved1F1B : model::ScheduleKind::k1F1B,
  };
  c.features = model::FeatureSpec{
      .dp_overlap = {.enabled = stack.dp_overlap || sharding.overlapped},
      .distributed_optimizer = sharding.distributed_optimizer,
      .dp_sharding = sharding.distributed_optimizer ? std::max(sharding.level, model::DpSharding::kOptim)
                                                    : model::DpSharding::kNone,
      .recompute = out.recompute,
  };
  c.features.dist_opt_instances = sharding.instances;
  c.features.pp_overlap.enabled = stack.interleaved_p2p_overlap && run.pp > 1 && run.vpp > 1;
  // InternEvo's ZeRO-1 over the whole DP group (zero1 = -1) all-reduces the gradients and has each
  // owner broadcast its parameters (HybridZeroOptimizer.broadcast_params; model/zero_broadcast.h).
  // Its zero1 = g < dp rows stay HSDP above: the schema's broadcast sync has one instance only.
  if (stack.zero_broadcast && sharding.distributed_optimizer && sharding.instances == 1) {
    c.features.param_sync = model::DpParamSync::kBroadcast;
  }
  c.features.fp8 = precision.fp8;
  if (precision.fp16) {
    c.features.compute_dtype = model::DType::kFp16;
    c.features.param_dtype = model::DType::kFp16;
  }
  // MLPerf's rows whose notes say "CUDA graphs" (their configs are the *_cg.sh ones) replay each
  // layer's kernels from a graph: no host launch per kernel.
  c.features.cuda_graphs = has(run.notes, "CUDA graphs");
  const RecipeOverlaps recipe_overlaps = nvidia_recipe_overlaps(run);
  c.features.tp_overlap = tp_comm_overlap_of(run.notes, run.tp, recipe_overlaps.tp);
  c.features.ep_overlap.enabled = recipe_overlaps.ep;
  if (recompute.every_nth > 0) {
    c.features.recompute_method = model::RecomputeMethod::kEveryNth;
    c.features.recompute_num_layers = recompute.every_nth;
  }
  if (recipe_modules) c.features.recompute_modules = *recipe_modules;
  if (recompute.torchtitan_op) c.features.recompute_modules = model::torchtitan_op_modules(precision.fp8.enabled);
  c.topology = topo;
  // A layout whose chunks do not divide the layers: the split the source's framework uses, when
  // its rule is known (measured_open_split.h); otherwise the schema's refusal below lists the row.
  // AutoModel's pipeline runs one schedule per local batch (measured_open_split.h): the spec is one
  // of the GA flushes, the validation repeats it.
  if (framework == SourceFramework::kAutomodel && run.pp > 1) {
    const auto flushes = automodel_pipeline_flushes(run.notes, run.global_batch, run.dp);
    if (!flushes) {
      why.push_back("an AutoModel pipeline row whose notes give no local batch dividing global_batch / dp");
      return out;
    }
    out.pipeline_flushes = *flushes;
    c.parallel.global_batch = run.global_batch / *flushes;
  }
  // The scenario schema's rule (validate.cc): the interleaved schedule needs the micro-batches of
  // one pipeline flush to be a multiple of pp.
  if (c.parallel.schedule == model::ScheduleKind::kInterleaved1F1B) {
    const long long per_flush = c.parallel.global_batch / (static_cast<long long>(run.dp) * run.micro_batch);
    if (per_flush % run.pp != 0) {
      why.push_back("interleaved 1F1B with " + std::to_string(per_flush) +
                    " micro-batches per pipeline flush, not a multiple of pp = " + std::to_string(run.pp));
      return out;
    }
  }
  const int chunks = run.pp * run.vpp;
  // A Megatron-Bridge summary row runs its recipe's model and, for an uneven split, its layout.
  const auto recipe_model = recompute_left_to_nvidia_recipe(run) ? nvidia_recipe_model(run, chunks) : std::nullopt;
  if (recipe_model) c.model.mtp_depth = recipe_model->mtp_depth;
  if (chunks > 1 && run.layers % chunks != 0) {
    if (recipe_model && !recipe_model->stage_layers.empty()) {
      c.parallel.stage_layers = recipe_model->stage_layers;
    } else {
      (void)apply_open_source_split(framework, run.layers, c.parallel);
    }
  }
  try {
    model::validate_model(c.model);
    model::validate_parallel(c.model, c.parallel);
    (void)model::chunk_layers(c.model, c.parallel);  // an uneven split needs the source's rule
    c.topology.validate();
  } catch (const std::invalid_argument& e) {
    why.push_back(std::string("the schema rejects the layout: ") + e.what());
    return out;
  }
  out.spec = std::move(c);
  return out;
}

}  // namespace mofasim::analysis
