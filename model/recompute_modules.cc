// Selective recompute by module (see recompute_modules.h).
#include "model/recompute_modules.h"

#include <algorithm>

#include "model/flops.h"
#include "model/memory.h"
#include "model/shape.h"
#include "model/stage_layout.h"

namespace mofasim::model {
namespace {

constexpr double kAct = 2;  // bytes per activation element (bf16), as op_table.cc
// DeepSeek-V3's format for the attention output it keeps for the output projection and the
// attention backward: 1 sign + 5 exponent + 6 mantissa bits (report §3.3.3 (1)).
constexpr double kE5m6Bytes = 1.5;

struct Drop {
  double bytes = 0;     // of the op's activation_bytes
  double fraction = 0;  // of the op's forward re-run
};

// The share of the MLA QKV op's weights that are up-projections (q_up and kv_up).
double mla_up_share(const ModelSpec& m) {
  const MlaSpec& a = m.mla;
  const double h = m.hidden_size;
  const double heads = m.num_attention_heads;
  const double d_qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  const double q_up = a.q_lora_rank > 0 ? a.q_lora_rank * heads * d_qk : 0;
  const double q = a.q_lora_rank > 0 ? a.q_lora_rank * h + q_up : h * heads * d_qk;
  const double kv_up = static_cast<double>(a.kv_lora_rank) * heads * (a.qk_nope_head_dim + a.v_head_dim);
  const double kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + kv_up;
  return (q_up + kv_up) / (q + kv);
}

// torchtitan's per-op policy (torchtitan/distributed/activation_checkpoint.py, _save_list and
// _custom_policy) on a dense layer. It keeps the output of every op in its save list: matmuls
// (aten.mm, but under bf16 only the odd-numbered ones of the layer), float8 matmuls
// (torch._scaled_mm, all of them), attention, max and reduce-scatter; every other op is re-run
// before the backward. A Llama layer calls its matmuls in the order wq, wk, wv, wo, w1, w3, w2, so
// under aten.mm wk, wo and w3 (numbers 2, 4, 6) are re-run and the rest kept. In op-table terms
// (one QKV op, one fc1 op for w1 and w3): the norms' outputs (QKV and fc1 inputs), the pre-MLP
// norm's input and the fc2 input are dropped; the norms, RoPE, the attention residual add and the
// activation are re-run; QKV re-runs its K share kv / (a + 2 kv) and fc1 half (w3), and with them
// the stored K and the w3 half of the activation's input are dropped; the attention core, fc2 and
// (under _scaled_mm) every GEMM are not re-run. Not counted: the kept outputs the backward does not
// read (wo's and w2's outputs, each T x h per GPU before the TP reduce) and the amax values.
Drop torchtitan_op_drop(const OpCost& op, const ModelSpec& model, const ParallelSpec& parallel, bool scaled_mm) {
  const double heads = static_cast<double>(model.num_attention_heads) / parallel.tp;
  const double kv = std::max(1.0, static_cast<double>(kv_heads(model)) / parallel.tp);
  const double k_share = kv / (heads + 2 * kv);
  switch (op.op) {
    case OpKind::kInputNorm:
    case OpKind::kRope:
    case OpKind::kAttentionResidual: return {0, 1};
    case OpKind::kPostAttentionNorm: return {op.activation_bytes, 1};  // its input, the residual sum
    case OpKind::kQkvProjection: return {op.activation_bytes, scaled_mm ? 0.0 : k_share};
    case OpKind::kAttentionMap: return {scaled_mm ? 0.0 : op.activation_bytes * kv / (heads + kv), 0};  // K of Q, K
    case OpKind::kOutputProjection: return {0, scaled_mm ? 0.0 : 1.0};
    case OpKind::kMlpLinear1: return {op.activation_bytes, scaled_mm ? 0.0 : 0.5};
    case OpKind::kMlpActivation: return {scaled_mm ? 0.0 : op.activation_bytes / 2, 1};  // w3's half of its input
    case OpKind::kMlpLinear2: return {op.activation_bytes, 0};
    default: return {};
  }
}

// norm_output_bytes: a norm output as the router keeps it (bf16); linear_norm_output_bytes: as an
// FP8-capable linear (QKV, fc1) keeps it, smaller under FP8 activation storage.
Drop drop(const OpCost& op, RecomputeModule module, const ModelSpec& model, const ParallelSpec& parallel,
          double norm_output_bytes, double linear_norm_output_bytes) {
  const OpKind k = op.op;
  const Drop all{op.activation_bytes, 1};
  switch (module) {
    case RecomputeModule::kCoreAttn:
      return {op.selective_dropped_bytes, op.recomputed_by_selective ? 1.0 : 0.0};
    case RecomputeModule::kLayernorm:
      if (k == OpKind::kInputNorm || k == OpKind::kPostAttentionNorm) return {0, 1};
      if (k == OpKind::kQkvProjection || k == OpKind::kMlpLinear1) {
        return {std::min(linear_norm_output_bytes, op.activation_bytes), 0};
      }
      if (k == OpKind::kRouter) return {std::min(norm_output_bytes, op.activation_bytes), 0};
      return {};
    case RecomputeModule::kMlp:
      if (k == OpKind::kMlpLinear1) return {0, 1};  // its input is the checkpoint's input
      if (k == OpKind::kMlpActivation || k == OpKind::kMlpLinear2) return all;
      return {};
    case RecomputeModule::kMoe:
      if (k == OpKind::kRouter) return {std::max(0.0, op.activation_bytes - norm_output_bytes), 1};
      if (k == OpKind::kSharedLinear1 || k == OpKind::kSharedActivation || k == OpKind::kSharedLinear2 ||
          k == OpKind::kExpertLinear1 || k == OpKind::kExpertActivation || k == OpKind::kExpertLinear2 ||
          k == OpKind::kExpertCombine) {
        return all;
      }
      return {};
    case RecomputeModule::kMoeAct:
      if (k == OpKind::kExpertActivation) return {0, 1};  // its input (the fc1 output) stays
      if (k == OpKind::kExpertLinear2) return {op.activation_bytes, 0};
      return {};
    case RecomputeModule::kSharedExperts:
      if (k == OpKind::kSharedLinear1) return {op.activation_bytes, 1};
      if (k == OpKind::kSharedActivation || k == OpKind::kSharedLinear2) return all;
      return {};
    case RecomputeModule::kMlaUpProj:
      if (model.attention != AttentionKind::kMla) return {};
      if (k == OpKind::kQkvProjection) return {0, mla_up_share(model)};
      if (k == OpKind::kAttentionMap || k == OpKind::kAttentionValue) return {op.activation_bytes, 0};
      return {};
    case RecomputeModule::kTorchtitanOp: return torchtitan_op_drop(op, model, parallel, false);
    case RecomputeModule::kTorchtitanOpScaledMm: return torchtitan_op_drop(op, model, parallel, true);
  }
  return {};
}

bool moe_block_op(OpKind k) {
  return k == OpKind::kRouter || k == OpKind::kSharedLinear1 || k == OpKind::kSharedActivation ||
         k == OpKind::kSharedLinear2 || k == OpKind::kExpertLinear1 || k == OpKind::kExpertActivation ||
         k == OpKind::kExpertLinear2 || k == OpKind::kExpertCombine;
}

// Whether `module` re-runs forward collective `c` with the part it recomputes: the collectives a
// checkpointed function calls run again when it is re-run.
//   mlp             Megatron checkpoints the MLP module, whose column-parallel fc1 gathers its input
//                   over TP (sequence parallel) and whose row-parallel fc2 reduces its output
//                   (megatron/core/transformer/transformer_layer.py, recompute_mlp).
//   moe             Megatron checkpoints the whole MoE layer: router, dispatch, experts, combine, so
//                   its EP all-to-alls (or DeepEP hops), expert-TP and shared-expert TP collectives
//                   run again (megatron/core/transformer/moe/moe_layer.py, moe_layer_recompute).
//   shared_experts  the shared experts' own TP collectives.
//   torchtitan_op   torchtitan's save list holds reduce_scatter_tensor but not all_gather_into_tensor
//                   or all_reduce: the sequence-parallel all-gathers before attention and the FFN are
//                   re-run, the reduce-scatters kept, and without sequence parallelism the forward
//                   all-reduces re-run (torchtitan/distributed/activation_checkpoint.py, _save_list).
//   mla_up_proj     Megatron checkpoints qkv_up_proj_and_rope_apply, whose column-parallel
//                   up-projections gather the q and kv latents under sequence parallelism
//                   (multi_latent_attention.py): the forward all-gather before the merged QKV op.
//                   The rope key's gather runs before that function (after the op) and is kept.
// The other modules re-run no collective.
bool module_reruns_comm(const CommOp& c, RecomputeModule module, const ModelSpec& model) {
  if (c.phase != Phase::kForward) return false;
  switch (module) {
    case RecomputeModule::kMlp: return c.op == OpKind::kMlpLinear1 || c.op == OpKind::kMlpLinear2;
    case RecomputeModule::kMoe: return moe_block_op(c.op);
    case RecomputeModule::kSharedExperts: return c.op == OpKind::kSharedLinear1 || c.op == OpKind::kSharedLinear2;
    case RecomputeModule::kTorchtitanOp:
    case RecomputeModule::kTorchtitanOpScaledMm:
      return c.group == LayerGroup::kTp &&
             (c.collective == CollectiveKind::kAllGather || c.collective == CollectiveKind::kAllReduce);
    case RecomputeModule::kMlaUpProj:
      return model.attention == AttentionKind::kMla && c.op == OpKind::kQkvProjection &&
             c.group == LayerGroup::kTp && c.collective == CollectiveKind::kAllGather && c.before_op;
    case RecomputeModule::kCoreAttn:
    case RecomputeModule::kMoeAct:
    case RecomputeModule::kLayernorm: return false;
  }
  return false;
}

bool transformer_layer_op(OpKind k) {
  return k != OpKind::kEmbedding && k != OpKind::kMtpProjection && k != OpKind::kFinalNorm && k != OpKind::kHead &&
         k != OpKind::kLoss;
}

// The modules applied to a layer whose FP8 linears keep `linear_input_ratio` of their bf16 inputs.
LayerOps apply_modules(const LayerOps& ops, const ModelSpec& model, const ParallelSpec& parallel,
                       RecomputeModules modules, double linear_input_ratio) {
  const auto list = ops.ops();
  const bool layer = !list.empty() && std::all_of(list.begin(), list.end(), [](const OpCost& op) {
    return transformer_layer_op(op.op);
  });
  if (!layer || modules == recompute_bit(RecomputeModule::kCoreAttn)) return ops;
  const bool sp = parallel.sequence_parallel && parallel.tp > 1;
  const double tokens = static_cast<double>(parallel.micro_batch) * model.seq_length / parallel.cp;
  const double norm_output_bytes = kAct * (sp ? tokens / parallel.tp : tokens) * model.hidden_size;
  const double linear_norm_output_bytes = norm_output_bytes * linear_input_ratio;
  LayerOps out;
  out.set_input_bytes(ops.totals().input_bytes);
  for (const OpCost& op : list) {
    Drop d;
    for (int i = 0; i < kNumRecomputeModules; ++i) {
      const auto m = static_cast<RecomputeModule>(i);
      if ((modules & recompute_bit(m)) == 0) continue;
      const Drop x = drop(op, m, model, parallel, norm_output_bytes, linear_norm_output_bytes);
      d.bytes = std::max(d.bytes, x.bytes);
      d.fraction = std::max(d.fraction, x.fraction);
    }
    OpCost o = op;
    o.selective_dropped_bytes = d.bytes;
    o.recomputed_by_selective = d.fraction > 0;
    o.selective_recompute_fraction = d.fraction > 0 ? d.fraction : 1;
    out.add(o);
  }
  for (const CommOp& c : ops.comms()) {
    CommOp rc = c;
    for (int i = 0; i < kNumRecomputeModules && !rc.recomputed_by_selective; ++i) {
      const auto m = static_cast<RecomputeModule>(i);
      rc.recomputed_by_selective = (modules & recompute_bit(m)) != 0 && module_reruns_comm(c, m, model);
    }
    out.add(rc);
  }
  return out;
}

}  // namespace

LayerOps with_recompute_modules(const LayerOps& ops, const ModelSpec& model, const ParallelSpec& parallel,
                                RecomputeModules modules) {
  return apply_modules(ops, model, parallel, modules, 1);
}

double fp8_activation_bytes_per_element(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::kDelayed:
    case Fp8Recipe::kCurrent: return 1;
    case Fp8Recipe::kMxfp8: return 1 + 1.0 / 32;
    case Fp8Recipe::kBlockwise: return 1 + 4.0 / 128;
  }
  return 1;
}

LayerOps with_activation_storage(const LayerOps& ops, const ModelSpec& model, const ParallelSpec& parallel,
                                 const FeatureSpec& features) {
  const bool fp8 = features.fp8.enabled && features.fp8.wgrad;
  const RecomputeModules modules = features.recompute_modules;
  if (!fp8) return apply_modules(ops, model, parallel, modules, 1);
  const bool blockwise = features.fp8.recipe == Fp8Recipe::kBlockwise;
  const double e8 = fp8_activation_bytes_per_element(features.fp8.recipe);
  const double ratio = e8 / kAct;
  LayerOps stored;
  stored.set_input_bytes(ops.totals().input_bytes);
  for (const OpCost& op : ops.ops()) {
    OpCost o = op;
    const double in = op.fp8_linear_input_bytes;
    if (op.op == OpKind::kOutputProjection) {
      o.activation_bytes += blockwise ? in * (kE5m6Bytes - kAct) / kAct : in * ratio;
    } else if (op.op != OpKind::kHead || features.fp8.output_layer) {
      o.activation_bytes -= in * (1 - ratio);
    }
    const bool moe_swiglu = op.op == OpKind::kExpertActivation || op.op == OpKind::kSharedActivation;
    if (blockwise && moe_swiglu) o.activation_bytes *= ratio;
    stored.add(o);
  }
  for (const CommOp& c : ops.comms()) stored.add(c);
  return apply_modules(stored, model, parallel, modules, ratio);
}

double hardware_flops_per_step(const ModelSpec& model, const ParallelSpec& parallel, const FeatureSpec& features) {
  const bool default_selective = features.recompute == RecomputeKind::kSelective &&
                                 features.recompute_modules == recompute_bit(RecomputeModule::kCoreAttn);
  const bool uniform_full =
      features.recompute == RecomputeKind::kFull && features.recompute_method == RecomputeMethod::kUniform;
  if (features.recompute == RecomputeKind::kNone || default_selective || uniform_full) {
    return hardware_flops_per_step(model, parallel, features.recompute);
  }
  // One GPU's micro-batch FLOPs to the step's: every layer runs on tp * cp GPUs for each of the
  // global_batch / micro_batch micro-batches.
  const double scale = static_cast<double>(parallel.tp) * parallel.cp * parallel.global_batch / parallel.micro_batch;
  if (features.recompute == RecomputeKind::kSelective) {
    double rerun = 0;
    for (int l = 0; l < model.num_layers; ++l) {
      const LayerOps ops = with_recompute_modules(ops_for_layer(model, parallel, l), model, parallel, features.recompute_modules);
      rerun += ops.totals().selective_recompute.flops;
    }
    return model_flops_per_step(model, parallel) + rerun * scale;
  }
  // Full, block: the uniform count less the forward of the layers left out.
  double left_out = 0;
  for (const ChunkLayers& c : chunk_layers(model, parallel)) {
    for (int l = c.first_layer; l < c.first_layer + c.num_layers; ++l) {
      if (!full_recompute_applies(features, l - c.first_layer)) left_out += ops_for_layer(model, parallel, l).totals().model_flops;
    }
  }
  return hardware_flops_per_step(model, parallel, RecomputeKind::kFull) - left_out * scale;
}

PhaseCost selective_recompute_cost(const OpCost& op) {
  if (!op.recomputed_by_selective) return {};
  const double f = op.selective_recompute_fraction;
  // The whole op re-runs its forward kernels as they are (shape and FP8 quantise kernels included:
  // the closed form prices it as its forward time). A part of the op has no single kernel shape; its
  // FP8 slot goes with it (the re-run GEMM runs in the same dtype).
  if (f == 1) return op.forward;
  return {.flops = op.forward.flops * f, .hbm_bytes = op.forward.hbm_bytes * f, .fp8 = op.forward.fp8};
}

const char* recompute_module_name(RecomputeModule m) {
  switch (m) {
    case RecomputeModule::kCoreAttn: return "core_attn";
    case RecomputeModule::kMlp: return "mlp";
    case RecomputeModule::kMoe: return "moe";
    case RecomputeModule::kMoeAct: return "moe_act";
    case RecomputeModule::kLayernorm: return "layernorm";
    case RecomputeModule::kMlaUpProj: return "mla_up_proj";
    case RecomputeModule::kSharedExperts: return "shared_experts";
    case RecomputeModule::kTorchtitanOp: return "torchtitan_op";
    case RecomputeModule::kTorchtitanOpScaledMm: return "torchtitan_op_scaled_mm";
  }
  return "?";
}

}  // namespace mofasim::model
