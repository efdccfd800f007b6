// Semantic validation of a Scenario (see validate.h).
#include "sim/scenario/validate.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/scenario/node_hardware.h"
#include "sim/scenario/perturbations.h"
#include "model/spec.h"
#include "topology/placement.h"
#include "topology/rank_order.h"
#include "sim/scenario/units.h"
#include "sim/scenario/validate_device_memory.h"
#include "sim/scenario/validate_layout.h"
#include "sim/scenario/validate_memory_fields.h"

namespace mofasim::scenario {
namespace {

namespace gpb = google::protobuf;

class Validator {
 public:
  Validator(const proto::Scenario& scenario, const SourceMap& sources, Diagnostics& diagnostics)
      : s_(scenario), sources_(sources), diagnostics_(diagnostics) {}

  void run() {
    check_model();
    check_hardware();
    check_topology();
    check_parallelism();
    check_optimizations();
    check_fault_tolerance();
    check_training();
    check_perturbations(s_, sources_, diagnostics_);
    check_node_hardware();
  }

 private:
  void fail(const std::string& path, const std::string& message) {
    diagnostics_.error(sources_.find(path), path, message);
  }
  FieldFail field_fail() {
    return [this](const std::string& path, const std::string& message) { fail(path, message); };
  }

  // Reports a missing required field; true when it is present.
  bool require(const gpb::Message& message, const std::string& section, std::string_view name,
               std::string_view why = "required") {
    const gpb::FieldDescriptor* field = message.GetDescriptor()->FindFieldByName(std::string(name));
    if (message.GetReflection()->HasField(message, field)) return true;
    std::string text = "missing (" + std::string(why) + ")";
    const proto::Unit unit = field->options().GetExtension(proto::unit);
    if (unit != proto::UNIT_NONE) text += ", e.g. \"" + std::string(unit_example(unit)) + "\"";
    fail(section + "." + std::string(name), text);
    return false;
  }

  // Reports a missing section with the fields it needs; true when present.
  bool require_section(bool has, const std::string& path, std::string_view needs) {
    if (has) return true;
    fail(path, "missing (required: " + std::string(needs) + ")");
    return false;
  }

  // `value` >= `min` when the field is set; true when it is set and in range.
  bool at_least(bool has, std::int64_t value, std::int64_t min, const std::string& path) {
    if (!has) return false;
    if (value >= min) return true;
    fail(path, "must be at least " + num(min) + ", got " + num(value));
    return false;
  }

  bool positive(bool has, double value, const std::string& path) {
    if (!has) return false;
    if (value > 0) return true;
    fail(path, "must be greater than 0, got " + num(value));
    return false;
  }

  void at_least_one(double value, const std::string& path) {
    if (value < 1) fail(path, "must be at least 1, got " + num(value));
  }

  void unit_fraction(double value, const std::string& path) {
    if (!(value > 0 && value <= 1)) fail(path, "must be in (0, 1], got " + num(value));
  }

  // ---- model ------------------------------------------------------------------------------
  void check_model() {
    if (!require_section(s_.has_model(), "model",
                         "num_layers, hidden_size, num_attention_heads, ffn_hidden_size, vocab_size, seq_length")) {
      return;
    }
    const proto::Model& m = s_.model();
    const std::string p = "model";
    const auto& pattern = m.moe().layer_pattern();
    const bool all_moe = m.has_moe() && m.moe().first_k_dense_layers() == 0 &&
                         std::all_of(pattern.begin(), pattern.end(), [](std::int32_t v) { return v == 1; });
    for (std::string_view name : {"num_layers", "hidden_size", "num_attention_heads"}) require(m, p, name);
    if (!all_moe) require(m, p, "ffn_hidden_size", "required for dense layers");
    require(m, p, "vocab_size");
    require(m, p, "seq_length");
    at_least(m.has_num_layers(), m.num_layers(), 1, "model.num_layers");
    const bool hidden_ok = at_least(m.has_hidden_size(), m.hidden_size(), 1, "model.hidden_size");
    const bool heads_ok = at_least(m.has_num_attention_heads(), m.num_attention_heads(), 1, "model.num_attention_heads");
    const bool kv_ok = at_least(m.has_num_kv_heads(), m.num_kv_heads(), 1, "model.num_kv_heads");
    at_least(m.has_head_dim(), m.head_dim(), 1, "model.head_dim");
    at_least(m.has_ffn_hidden_size(), m.ffn_hidden_size(), 1, "model.ffn_hidden_size");
    at_least(m.has_vocab_size(), m.vocab_size(), 1, "model.vocab_size");
    at_least(m.has_seq_length(), m.seq_length(), 1, "model.seq_length");
    if (heads_ok && kv_ok && m.num_attention_heads() % m.num_kv_heads() != 0) {
      fail("model.num_kv_heads", num(std::int64_t{m.num_kv_heads()}) + " does not divide num_attention_heads = " +
                                     num(std::int64_t{m.num_attention_heads()}));
    }
    if (hidden_ok && heads_ok && !m.has_head_dim() && m.hidden_size() % m.num_attention_heads() != 0) {
      fail("model.hidden_size", num(std::int64_t{m.hidden_size()}) + " is not a multiple of num_attention_heads = " +
                                    num(std::int64_t{m.num_attention_heads()}) + "; give head_dim explicitly");
    }
    if (heads_ok && m.has_attention()) {
      const int kv = m.has_num_kv_heads() ? m.num_kv_heads() : m.num_attention_heads();
      if (m.attention() == proto::MHA && kv != m.num_attention_heads()) {
        fail("model.attention", "mha needs num_kv_heads = num_attention_heads = " +
                                    num(std::int64_t{m.num_attention_heads()}) + ", got " + num(std::int64_t{kv}));
      }
      if (m.attention() == proto::MQA && kv != 1) {
        fail("model.attention", "mqa needs num_kv_heads = 1, got " + num(std::int64_t{kv}));
      }
    }
    const bool mla_kind = m.has_attention() ? m.attention() == proto::MLA : m.has_mla();
    if (mla_kind && !m.has_mla()) fail("model.mla", "missing (required when attention is mla)");
    if (mla_kind && m.qk_layernorm()) {
      fail("model.qk_layernorm", "not with attention: mla (its q and kv latent norms are part of the QKV projection)");
    }
    if (!mla_kind && m.has_mla()) {
      const std::string kind = proto::Attention_descriptor()->FindValueByNumber(m.attention())->options().GetExtension(
          proto::yaml);
      fail("model.mla", "given but attention is " + kind + "; set attention: mla or remove mla");
    }
    if (m.has_mla()) {
      const proto::MlaConfig& a = m.mla();
      const std::string q = "model.mla";
      for (std::string_view name : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
        require(a, q, name);
      }
      at_least(a.has_kv_lora_rank(), a.kv_lora_rank(), 1, q + ".kv_lora_rank");
      at_least(a.has_qk_nope_head_dim(), a.qk_nope_head_dim(), 1, q + ".qk_nope_head_dim");
      at_least(a.has_qk_rope_head_dim(), a.qk_rope_head_dim(), 1, q + ".qk_rope_head_dim");
      at_least(a.has_v_head_dim(), a.v_head_dim(), 1, q + ".v_head_dim");
    }
    if (!(m.attention_dropout() >= 0 && m.attention_dropout() < 1)) {
      fail("model.attention_dropout", "must be in [0, 1), got " + num(m.attention_dropout()));
    }
    if (m.has_moe()) check_moe(m);
  }

  void check_moe(const proto::Model& m) {
    const proto::MoeConfig& e = m.moe();
    const std::string q = "model.moe";
    for (std::string_view name : {"num_experts", "top_k", "expert_ffn_hidden_size"}) require(e, q, name);
    const bool experts_ok = at_least(e.has_num_experts(), e.num_experts(), 1, q + ".num_experts");
    const bool top_k_ok = at_least(e.has_top_k(), e.top_k(), 1, q + ".top_k");
    at_least(e.has_expert_ffn_hidden_size(), e.expert_ffn_hidden_size(), 1, q + ".expert_ffn_hidden_size");
    at_least(e.has_shared_expert_ffn_hidden_size(), e.shared_expert_ffn_hidden_size(), 1,
             q + ".shared_expert_ffn_hidden_size");
    if (experts_ok && top_k_ok && e.top_k() > e.num_experts()) {
      fail(q + ".top_k", num(std::int64_t{e.top_k()}) + " exceeds num_experts = " + num(std::int64_t{e.num_experts()}));
    }
    if (m.has_num_layers() && m.num_layers() >= 1 && e.first_k_dense_layers() >= m.num_layers()) {
      fail(q + ".first_k_dense_layers", num(std::int64_t{e.first_k_dense_layers()}) +
                                            " leaves no MoE layer in num_layers = " + num(std::int64_t{m.num_layers()}));
    }
    check_layer_pattern(e, m.has_num_layers() ? m.num_layers() : 0, q);
    at_least_one(e.load_imbalance(), q + ".load_imbalance");
    positive(true, e.dispatch_bytes_per_element(), q + ".dispatch_bytes_per_element");
    positive(true, e.combine_bytes_per_element(), q + ".combine_bytes_per_element");
    check_moe_routing(e, q);
  }

  // MoE layer pattern (entries 0 or 1: the field's limits): at least one MoE layer past the dense
  // ones.
  void check_layer_pattern(const proto::MoeConfig& e, std::int64_t layers, const std::string& q) {
    const auto& pattern = e.layer_pattern();
    if (pattern.empty()) return;
    bool any_moe = false;
    for (std::int64_t l = e.first_k_dense_layers(); l < layers && !any_moe; ++l) {
      any_moe = pattern[static_cast<int>(l % pattern.size())] == 1;
    }
    if (layers >= 1 && e.first_k_dense_layers() < layers && !any_moe) {
      fail(q + ".layer_pattern", "makes no layer MoE (every entry a layer past first_k_dense_layers takes is 0)");
    }
  }

  // Node-limited routing and capacity (model/moe_dispatch.h has the model's own copy of the rules).
  void check_moe_routing(const proto::MoeConfig& e, const std::string& q) {
    const std::int64_t groups = e.router_num_groups();
    const std::int64_t topk = e.router_group_topk();
    at_least(true, groups, 0, q + ".router_num_groups");
    at_least(true, topk, 0, q + ".router_group_topk");
    if (topk > 0 && groups == 0) fail(q + ".router_group_topk", "needs router_num_groups (the expert groups it picks from)");
    if (groups > 0 && e.num_experts() >= 1 && e.num_experts() % groups != 0) {
      fail(q + ".router_num_groups", num(groups) + " does not divide num_experts = " + num(std::int64_t{e.num_experts()}));
    }
    if (groups > 0 && (topk < 1 || topk > groups)) {
      fail(q + ".router_group_topk", num(topk) + " is outside [1, router_num_groups = " + num(groups) + "]");
    }
    if (groups > 0 && topk > e.top_k() && e.top_k() >= 1) {
      fail(q + ".router_group_topk", num(topk) + " exceeds top_k = " + num(std::int64_t{e.top_k()}) +
                                         ": a token cannot use more groups than experts");
    }
    if (e.has_expert_capacity_factor()) positive(true, e.expert_capacity_factor(), q + ".expert_capacity_factor");
    if (e.pad_expert_input_to_capacity() && !e.has_expert_capacity_factor()) {
      fail(q + ".pad_expert_input_to_capacity", "needs expert_capacity_factor (the capacity to pad to)");
    }
    if (e.pad_expert_input_to_capacity() && e.token_dispatcher_type() == proto::DISPATCHER_FLEX) {
      fail(q + ".pad_expert_input_to_capacity", "is not modelled with token_dispatcher_type flex");
    }
  }

  // ---- hardware ---------------------------------------------------------------------------
  void check_hardware() {
    if (!require_section(s_.has_hardware(), "hardware", "peak_bf16, gpu_memory, hbm_bandwidth")) return;
    check_hardware_fields(s_.hardware(), "hardware");
  }

  // Heterogeneous GPUs: each node_hardware entry's hardware by the hardware section's rules.
  void check_node_hardware() {
    const auto& entries = s_.topology().node_hardware();
    for (int i = 0; i < entries.size(); ++i) {
      const proto::NodeHardware& e = entries.Get(i);
      const std::string q = "topology.node_hardware[" + std::to_string(i) + "]";
      if (e.has_intra_node()) {
        if (require(e.intra_node(), q + ".intra_node", "bandwidth")) positive(true, e.intra_node().bandwidth(), q + ".intra_node.bandwidth");
        if (e.intra_node().has_latency()) fail(q + ".intra_node.latency", "only bandwidth differs per node (latency: topology.intra_node)");
      }
      if (!e.has_hardware()) {
        fail(q + ".hardware", "missing (the nodes' GPU, e.g. {preset: h200})");
        continue;
      }
      check_hardware_fields(e.hardware(), q + ".hardware");
      const proto::Optimizations& o = s_.optimizations();
      if (o.compute_dtype() == proto::FP8 || o.precision() == proto::FP8) {
        require(e.hardware(), q + ".hardware", "peak_fp8", "required by fp8 compute");
      }
    }
    check_node_hardware_nodes(s_, sources_, diagnostics_);
  }

  void check_hardware_fields(const proto::Hardware& h, const std::string& p) {
    for (std::string_view name : {"peak_bf16", "gpu_memory", "hbm_bandwidth"}) require(h, p, name);
    positive(h.has_peak_bf16(), h.peak_bf16(), p + ".peak_bf16");
    positive(h.has_peak_fp8(), h.peak_fp8(), p + ".peak_fp8");
    positive(h.has_peak_fp32(), h.peak_fp32(), p + ".peak_fp32");
    const bool memory_ok = positive(h.has_gpu_memory(), h.gpu_memory(), p + ".gpu_memory");
    positive(h.has_hbm_bandwidth(), h.hbm_bandwidth(), p + ".hbm_bandwidth");
    positive(h.has_h2d_bandwidth(), h.h2d_bandwidth(), p + ".h2d_bandwidth");
    positive(h.has_d2h_bandwidth(), h.d2h_bandwidth(), p + ".d2h_bandwidth");
    positive(h.has_host_memory(), h.host_memory(), p + ".host_memory");
    positive(h.has_cpu_optimizer_params_per_second(), h.cpu_optimizer_params_per_second(),
             p + ".cpu_optimizer_params_per_second");
    positive(h.has_disk_read_bandwidth(), h.disk_read_bandwidth(), p + ".disk_read_bandwidth");
    positive(h.has_disk_write_bandwidth(), h.disk_write_bandwidth(), p + ".disk_write_bandwidth");
    check_device_memory(h, p, memory_ok, [this](const std::string& path, const std::string& message) { fail(path, message); });
    const proto::Efficiency& e = h.efficiency();
    unit_fraction(e.gemm(), p + ".efficiency.gemm");
    unit_fraction(e.attention(), p + ".efficiency.attention");
    unit_fraction(e.memory(), p + ".efficiency.memory");
    unit_fraction(e.small_gemm(), p + ".efficiency.small_gemm");
    if (h.kernels().sm_count() > 0 && h.collective_sms() >= h.kernels().sm_count()) {
      fail(p + ".collective_sms", "must be below kernels.sm_count = " + num(std::int64_t{h.kernels().sm_count()}) +
                                      " (a communication kernel cannot hold every SM), got " +
                                      num(std::int64_t{h.collective_sms()}));
    }
    unit_fraction(h.nvls_efficiency(), p + ".nvls_efficiency");
    if (h.nvls_channels() < 2) {
      fail(p + ".nvls_channels", "must be >= 2, got " + num(std::int64_t{h.nvls_channels()}));
    }
    if (h.compute_model() == proto::MODIFIED_ROOFLINE && !(h.roofline_slope() > 0)) {
      fail(p + ".roofline_slope", "must be greater than 0 for compute_model modified-roofline, got " +
                                      num(h.roofline_slope()));
    }
    if (h.compute_model() == proto::KERNEL) check_kernel_params(h, p + ".kernels");
  }

  void check_kernel_params(const proto::Hardware& h, const std::string& p) {
    const proto::KernelParams& k = h.kernels();
    const std::string why = "required by compute_model kernel";
    if (k.family() == proto::GPU_FAMILY_UNSPECIFIED) fail(p + ".family", "missing (" + why + "): ampere, hopper or blackwell");
    if (k.sm_count() < 1) fail(p + ".sm_count", "must be at least 1 for compute_model kernel, got " + num(std::int64_t{k.sm_count()}));
    at_least_one(k.gemm_tile_m(), p + ".gemm_tile_m");
    at_least_one(k.gemm_tile_n(), p + ".gemm_tile_n");
    require(k, p, "gemm_ceiling_bf16", why);
    unit_fraction(k.hbm_fraction(), p + ".hbm_fraction");
    unit_fraction(k.grouped_gemm_fraction(), p + ".grouped_gemm_fraction");
    unit_fraction(k.in_step_rate(), p + ".in_step_rate");
    // FlashAttention-1's measured curves exist for A100 and H100 only (it has no Blackwell kernel).
    if (s_.model().attention_impl() == proto::FLASH1 && k.family() == proto::BLACKWELL) {
      fail("model.attention_impl", "flash1 has no Blackwell kernel (hardware.kernels.family blackwell); use fused");
    }
    // A GPU without FP8 (no peak_fp8) is reported once, at the scenario's FP8 field's rule
    // (hardware.peak_fp8 required by ...), not again at the preset's kernels block.
    if (s_.optimizations().compute_dtype() == proto::FP8 && h.has_peak_fp8()) {
      require(k, p, "gemm_ceiling_fp8", "required by compute_model kernel with compute_dtype fp8");
    }
    if (s_.optimizations().precision() == proto::FP8 && h.has_peak_fp8()) {
      require(k, p, "gemm_ceiling_fp8", "required by compute_model kernel with precision fp8");
    }
  }

  // ---- topology ---------------------------------------------------------------------------
  void check_link(bool has, const proto::LinkClass& link, const std::string& name) {
    const std::string path = "topology." + name;
    if (!has) {
      fail(path, "missing (required: bandwidth)");
      return;
    }
    if (require(link, path, "bandwidth")) positive(true, link.bandwidth(), path + ".bandwidth");
  }

  void check_topology() {
    if (!require_section(s_.has_topology(), "topology", "gpus, intra_node, inter_node")) return;
    const proto::Topology& t = s_.topology();
    const std::string p = "topology";
    require(t, p, "gpus");
    const bool gpus_ok = at_least(t.has_gpus(), t.gpus(), 1, p + ".gpus");
    const bool per_node_ok = at_least(true, t.gpus_per_node(), 1, p + ".gpus_per_node");
    if (gpus_ok && per_node_ok && t.gpus() > t.gpus_per_node() && t.gpus() % t.gpus_per_node() != 0) {
      fail(p + ".gpus", num(std::int64_t{t.gpus()}) + " does not fill whole nodes of gpus_per_node = " +
                            num(std::int64_t{t.gpus_per_node()}));
    }
    at_least(t.has_nics_per_node(), t.nics_per_node(), 1, p + ".nics_per_node");
    if (gpus_ok && per_node_ok && t.nodes_per_supernode() > 0) {
      const std::int64_t nodes = std::max(1, t.gpus() / t.gpus_per_node());
      if (nodes % t.nodes_per_supernode() != 0) {
        fail(p + ".nodes_per_supernode", "must divide the node count (" + num(nodes) + "), got " +
                                             num(std::int64_t{t.nodes_per_supernode()}));
      }
    }
    check_link(t.has_intra_node(), t.intra_node(), "intra_node");
    check_link(t.has_inter_node(), t.inter_node(), "inter_node");
    if (t.has_inter_supernode()) check_link(true, t.inter_supernode(), "inter_supernode");
    at_least_one(t.oversubscription(), p + ".oversubscription");
    unit_fraction(t.bandwidth_decay(), p + ".bandwidth_decay");
  }

  // ---- parallelism ------------------------------------------------------------------------
  void check_parallelism() {
    if (!require_section(s_.has_parallelism(), "parallelism", "global_batch")) return;
    const proto::Parallelism& x = s_.parallelism();
    const std::string p = "parallelism";
    require(x, p, "global_batch");
    bool ok = true;
    ok &= at_least(true, x.tp(), 1, p + ".tp");
    ok &= at_least(true, x.cp(), 1, p + ".cp");
    ok &= at_least(true, x.pp(), 1, p + ".pp");
    ok &= at_least(true, x.vpp(), 1, p + ".vpp");
    ok &= at_least(true, x.dp(), 1, p + ".dp");
    ok &= at_least(true, x.ep(), 1, p + ".ep");
    ok &= at_least(true, x.etp(), 1, p + ".etp");
    ok &= at_least(true, x.micro_batch(), 1, p + ".micro_batch");
    const bool batch_ok = at_least(x.has_global_batch(), x.global_batch(), 1, p + ".global_batch");
    const bool order_ok = check_rank_order_names(x.rank_order(), field_fail());
    if (!ok) return;  // the rules below divide by these sizes
    const std::int64_t tp = x.tp(), cp = x.cp(), pp = x.pp(), vpp = x.vpp(), dp = x.dp(), ep = x.ep();
    const std::int64_t etp = s_.model().has_moe() ? x.etp() : tp;  // a dense model has no expert layout
    if (order_ok && (tp * dp * cp) % (ep * etp) == 0) {
      try {  // what Megatron refuses for this order with these sizes
        topology::check_order_for_sizes({.tp = x.tp(), .cp = x.cp(), .ep = x.ep(), .dp = x.dp(), .pp = x.pp(),
                                         .etp = static_cast<int>(etp)},
                                        topology::RankOrder::parse(x.rank_order()));
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        const std::string prefix = "parallelism.rank_order: ";
        fail("parallelism.rank_order", what.starts_with(prefix) ? what.substr(prefix.size()) : what);
      }
    }
    const std::int64_t product = tp * cp * pp * dp;
    if (s_.has_topology() && s_.topology().has_gpus() && product != s_.topology().gpus()) {
      fail(p, "tp*cp*pp*dp = " + num(tp) + "*" + num(cp) + "*" + num(pp) + "*" + num(dp) + " = " + num(product) +
                  " but topology.gpus = " + num(std::int64_t{s_.topology().gpus()}));
    }
    const proto::Model& m = s_.model();
    const bool has_model = s_.has_model();
    if (has_model && m.num_attention_heads() >= 1 && m.num_attention_heads() % tp != 0) {
      fail(p + ".tp", num(tp) + " does not divide model.num_attention_heads = " +
                          num(std::int64_t{m.num_attention_heads()}));
    }
    if (has_model && m.has_num_kv_heads() && m.num_kv_heads() >= 1 && m.num_kv_heads() % tp != 0) {
      fail(p + ".tp", num(tp) + " does not divide model.num_kv_heads = " + num(std::int64_t{m.num_kv_heads()}));
    }
    check_stage_layers(x, has_model ? m.num_layers() : 0, field_fail());
    // Experts.
    if (ep > 1 && !(has_model && m.has_moe())) fail(p + ".ep", num(ep) + " needs a MoE model (model.moe)");
    if (has_model && m.has_moe() && m.moe().num_experts() >= 1 && m.moe().num_experts() % ep != 0) {
      fail(p + ".ep", num(ep) + " does not divide model.moe.num_experts = " + num(std::int64_t{m.moe().num_experts()}));
    }
    if (has_model && m.has_moe()) check_expert_layout(s_, x, m.moe(), field_fail());
    // Batch and schedule.
    const std::int64_t per_step = std::int64_t{x.micro_batch()} * dp;
    if (batch_ok && !model::batch_divides(x.global_batch(), x.micro_batch(), dp)) {
      fail(p + ".global_batch", num(std::int64_t{x.global_batch()}) + " is not a multiple of micro_batch*dp = " +
                                    num(std::int64_t{x.micro_batch()}) + "*" + num(dp) + " = " + num(per_step));
    }
    const std::int64_t m_count = batch_ok ? x.global_batch() / per_step : 0;
    const bool m_ok = batch_ok && model::batch_divides(x.global_batch(), x.micro_batch(), dp);
    const std::string m_text = "the micro-batch count m = global_batch/(micro_batch*dp) = " + num(m_count);
    if (x.schedule() == proto::INTERLEAVED_1F1B) {
      // One stage has nothing to interleave with: its chunks would talk to the same GPU.
      if (pp < 2) {
        fail(p + ".pp", "interleaved-1f1b needs pp > 1 (one stage has nothing to interleave; use 1f1b), got " + num(pp));
      }
      if (vpp < 2) fail(p + ".vpp", "interleaved-1f1b needs vpp > 1, got " + num(vpp));
      if (m_ok && m_count % pp != 0) fail(p + ".global_batch", "interleaved-1f1b needs " + m_text + " to be a multiple of pp = " + num(pp));
    } else if (vpp > 1) {
      fail(p + ".vpp", num(vpp) + " needs schedule: interleaved-1f1b");
    }
    if (x.schedule() == proto::DUALPIPE) {
      if (pp % 2 != 0) fail(p + ".pp", "dualpipe needs an even pp, got " + num(pp));
      if (m_ok && m_count % 2 != 0) fail(p + ".global_batch", "dualpipe needs " + m_text + " to be even");
    }
    if (has_model && m.seq_length() >= 1) {
      const std::int64_t s = m.seq_length();
      if (cp > 1 && s % (2 * cp) != 0) {
        fail(p + ".cp", "model.seq_length = " + num(s) + " is not divisible by 2*cp = " + num(2 * cp) +
                            " (causal load balancing gives each CP rank two chunks)");
      }
      if (x.cp_comm_type() == proto::CP_A2A && cp > 1) {
        // Ulysses hands each CP rank whole heads: heads and KV heads per TP rank split over cp.
        const std::int64_t heads = m.num_attention_heads() / tp;
        const std::int64_t kv = (m.has_num_kv_heads() ? m.num_kv_heads() : m.num_attention_heads()) / tp;
        if (heads % cp != 0 || kv % cp != 0) {
          fail(p + ".cp_comm_type", "a2a needs the attention heads (" + num(heads) + ") and KV heads (" + num(kv) +
                                        ") per TP rank divisible by cp = " + num(cp));
        }
      }
      if (x.sequence_parallel() && s % (tp * cp) != 0) {
        fail(p + ".sequence_parallel", "needs model.seq_length = " + num(s) + " divisible by tp*cp = " + num(tp * cp));
      }
    }
  }

  // ---- optimizations ----------------------------------------------------------------------
  void check_overlap(const proto::Overlap& o, const std::string& path) {
    at_least_one(o.alpha(), path + ".alpha");
    at_least_one(o.beta(), path + ".beta");
    at_least(true, o.chunks(), 1, path + ".chunks");
  }

  void check_optimizations() {
    const proto::Optimizations& o = s_.optimizations();
    const std::string p = "optimizations";
    positive(true, o.compute_scale(), p + ".compute_scale");
    positive(true, o.bandwidth_scale(), p + ".bandwidth_scale");
    positive(true, o.dp_bucket_size(), p + ".dp_bucket_size");
    check_overlap(o.tp_overlap(), p + ".tp_overlap");
    check_overlap(o.cp_overlap(), p + ".cp_overlap");
    check_overlap(o.ep_overlap(), p + ".ep_overlap");
    check_overlap(o.pp_overlap(), p + ".pp_overlap");
    check_overlap(o.dp_overlap(), p + ".dp_overlap");
    const proto::ActivationOffload& a = o.activation_offload();
    at_least_one(a.alpha(), p + ".activation_offload.alpha");
    at_least_one(a.beta(), p + ".activation_offload.beta");
    at_least_one(a.alpha_backward(), p + ".activation_offload.alpha_backward");
    at_least_one(a.beta_backward(), p + ".activation_offload.beta_backward");
    const proto::Hardware& h = s_.hardware();
    const bool has_hw = s_.has_hardware();
    if (a.enabled() && has_hw) {
      require(h, "hardware", "h2d_bandwidth", "required by optimizations.activation_offload");
      require(h, "hardware", "d2h_bandwidth", "required by optimizations.activation_offload");
    }
    if (o.optimizer().placement() == proto::CPU && has_hw) {
      const std::string why = "required by optimizations.optimizer.placement cpu";
      require(h, "hardware", "cpu_optimizer_params_per_second", why);
      require(h, "hardware", "h2d_bandwidth", why);
      require(h, "hardware", "d2h_bandwidth", why);
    }
    if (o.compute_dtype() == proto::FP8 && has_hw) require(h, "hardware", "peak_fp8", "required by compute_dtype fp8");
    check_precision(o, p, has_hw);
    if (o.memfine().enabled() && !(s_.has_model() && s_.model().has_moe())) {
      fail(p + ".memfine.enabled", "MemFine needs a MoE model (model.moe)");
    }
    check_memory_fields(s_, [this](const std::string& path, const std::string& message) { fail(path, message); });
  }

  // precision / fp8_*: bf16 or fp8 only; the fp8 fields only with precision fp8; mxfp8 only on
  // Blackwell (its 1x32 block scales are applied by Blackwell's tensor cores).
  void check_precision(const proto::Optimizations& o, const std::string& p, bool has_hw) {
    if (o.has_precision() && o.precision() != proto::BF16 && o.precision() != proto::FP8) {
      fail(p + ".precision", "must be bf16 or fp8 (fp16 / fp32 training: compute_dtype and optimizer.params_dtype)");
    }
    const bool fp8 = o.precision() == proto::FP8;
    if (!fp8) {
      for (const char* f : {"fp8_recipe", "fp8_fprop", "fp8_dgrad", "fp8_wgrad", "fp8_output_layer"}) {
        const auto* field = o.GetDescriptor()->FindFieldByName(f);
        if (o.GetReflection()->HasField(o, field)) fail(p + "." + f, "needs precision: fp8");
      }
      return;
    }
    if (o.compute_dtype() == proto::FP8) {
      fail(p + ".compute_dtype", "fp8 runs every op at the FP8 peak; with precision fp8 leave it bf16 (only the linear layers' GEMMs run in FP8)");
    }
    if (!has_hw) return;
    const proto::Hardware& h = s_.hardware();
    require(h, "hardware", "peak_fp8", "required by precision fp8");
    if (o.fp8_recipe() == proto::FP8_MXFP8 && h.kernels().family() != proto::BLACKWELL) {
      fail(p + ".fp8_recipe", std::string("mxfp8 needs a Blackwell GPU (hardware.kernels.family blackwell), got ") +
                                  (h.kernels().family() == proto::HOPPER   ? "hopper"
                                   : h.kernels().family() == proto::AMPERE ? "ampere"
                                                                           : "no family"));
    }
  }

  // ---- fault tolerance --------------------------------------------------------------------
  void check_fault_tolerance() {
    if (!s_.has_fault_tolerance()) return;
    const proto::FaultTolerance& f = s_.fault_tolerance();
    const std::string p = "fault_tolerance";
    require(f, p, "node_failure_rate_per_day");
    at_least(f.has_gpus_per_failure_unit(), f.gpus_per_failure_unit(), 1, p + ".gpus_per_failure_unit");
    std::set<std::string> names;
    for (int i = 0; i < f.failure_classes_size(); ++i) {
      const proto::FailureClass& c = f.failure_classes(i);
      const std::string q = p + ".failure_classes[" + std::to_string(i) + "]";
      if (require(c, q, "name") && !names.insert(c.name()).second) fail(q + ".name", "duplicate class '" + c.name() + "'");
      if (require(c, q, "weight")) positive(true, c.weight(), q + ".weight");
      if (c.distribution() == proto::EMPIRICAL) {
        if (c.samples_size() == 0) fail(q + ".samples", "missing (required by distribution empirical)");
      } else {
        require(c, q, "recovery");
        if (c.samples_size() > 0) fail(q + ".samples", "only used with distribution: empirical");
      }
      if (c.distribution() == proto::LOGNORMAL) positive(true, c.sigma(), q + ".sigma");
    }
    if (f.has_checkpoint()) {
      const proto::Checkpoint& c = f.checkpoint();
      const std::string q = p + ".checkpoint";
      if (require(c, q, "interval_steps")) at_least(true, c.interval_steps(), 1, q + ".interval_steps");
      if (c.has_storage()) {  // times come from the checkpoint I/O model
        if (c.has_save_time()) fail(q + ".save_time", "give save_time or storage, not both (storage simulates it)");
        if (c.has_snapshot_time()) fail(q + ".snapshot_time", "give snapshot_time or storage, not both (storage simulates it)");
        require(c.storage(), q + ".storage", "write_bandwidth");
        at_least(c.storage().has_drain_streams(), c.storage().drain_streams(), 1, q + ".storage.drain_streams");
        for (const char* drain : {"drain_streams", "drain_start"}) {  // a blocking save has no drain
          const gpb::FieldDescriptor* field = c.storage().GetDescriptor()->FindFieldByName(drain);
          if (c.mode() != proto::ASYNC && c.storage().GetReflection()->HasField(c.storage(), field)) {
            fail(q + ".storage." + drain, "only used with mode: async (a blocking save has no background drain)");
          }
        }
      } else {
        const bool save_ok = require(c, q, "save_time", "required unless storage is given");
        if (save_ok && c.mode() == proto::ASYNC && c.snapshot_time() > c.save_time()) {
          fail(q + ".snapshot_time", num(c.snapshot_time()) + " s exceeds save_time = " + num(c.save_time()) + " s");
        }
        // The per-node storage bandwidths are inputs of the I/O model only: refused rather than ignored.
        for (const char* disk : {"disk_write_bandwidth", "disk_read_bandwidth"}) {
          if (s_.hardware().GetReflection()->HasField(s_.hardware(), s_.hardware().GetDescriptor()->FindFieldByName(disk))) {
            fail(std::string("hardware.") + disk, "changes nothing while fault_tolerance.checkpoint.save_time is given; "
                                                  "give checkpoint.storage to simulate the checkpoint I/O, or remove it");
          }
        }
      }
    }
    if (f.process() == proto::EMPIRICAL_PROCESS) require(f, p, "failure_records", "required by process empirical");
    positive(true, f.weibull_shape(), p + ".weibull_shape");
    positive(f.has_step_time(), f.step_time(), p + ".step_time");
  }

  // ---- training ---------------------------------------------------------------------------
  void check_training() {
    if (!s_.has_training()) return;
    const proto::Training& t = s_.training();
    if (t.has_tokens() == t.has_steps()) {
      fail("training", t.has_tokens() ? "give tokens or steps, not both" : "give tokens or steps");
      return;
    }
    at_least(t.has_steps(), t.steps(), 1, "training.steps");
    if (positive(t.has_tokens(), t.tokens(), "training.tokens") && s_.model().seq_length() >= 1 &&
        s_.parallelism().global_batch() >= 1) {
      const double per_step = static_cast<double>(s_.parallelism().global_batch()) * s_.model().seq_length();
      constexpr double kMaxSteps = 1e9;  // as training.steps (max)
      if (std::ceil(t.tokens() / per_step) > kMaxSteps) {
        fail("training.tokens", num(t.tokens()) + " tokens give " + num(std::ceil(t.tokens() / per_step)) +
                                    " steps, more than the limit of 1e9 steps");
      }
    }
  }

  const proto::Scenario& s_;
  const SourceMap& sources_;
  Diagnostics& diagnostics_;
};

}  // namespace

void validate_scenario(const proto::Scenario& scenario, const SourceMap& sources, Diagnostics& diagnostics) {
  Validator(scenario, sources, diagnostics).run();
}


}  // namespace mofasim::scenario
