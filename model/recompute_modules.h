// Megatron's selective recompute by module (--recompute-modules): which activations each module
// drops and which forward work it re-runs before the layer's backward, applied to a layer's op
// table. The op table (op_table.h) is built for the default module, core_attn; with_recompute_modules
// rewrites each op's selective fields (selective_dropped_bytes, recomputed_by_selective,
// selective_recompute_fraction) for any module set, so the memory model, the step simulation and
// the analytic model, which all read those fields, agree on every set.
//
// Per token of one micro-batch (op_table.h charges each stored tensor to the op whose backward
// reads it; T_sp = tokens after sequence parallelism, bf16 activations):
//   core_attn      drops what the attention core keeps beyond its inputs (flash: the softmax
//                  statistics; unfused: the s^2 scores), re-runs QK^T, softmax and PV.
//   layernorm      drops the two norm outputs (2h*T_sp each: the QKV input and the fc1 / router
//                  input), re-runs the input and pre-MLP norms; the norm inputs stay.
//   mlp            (dense layers) drops the fc1 outputs and the activation output (6f per token for
//                  SwiGLU), re-runs fc1, the activation and fc2; the MLP input stays.
//   moe            drops everything the MoE block keeps but its input (router probabilities,
//                  shared and routed expert intermediates, dispatched copies, the combine's gate
//                  probabilities), re-runs router, shared experts, experts and combine.
//   moe_act        drops the routed experts' activation output (fc2 input), re-runs the activation.
//   shared_experts drops the shared experts' intermediates, re-runs them.
//   mla_up_proj    (MLA) drops the up-projected Q, K and V the attention core keeps, re-runs the
//                  up-projections: the share r_q*a*d_qk + r_kv*a*(d_nope + d_v) of the QKV op's
//                  weights (its HBM bytes are scaled by the same share).
//   torchtitan_op  torchtitan's per-op policy (selective_ac_option: op) on a dense Llama layer with
//                  bf16 linears: keeps wq, wv, w1 and w2 outputs and attention's, re-runs wk, wo, w3,
//                  the norms, RoPE, the attention residual and the activation (recompute_modules.cc).
//   torchtitan_op_scaled_mm  the same policy with float8 linears (torch._scaled_mm, all kept):
//                  re-runs only the norms, RoPE, the attention residual and the activation.
// Modules that drop the same tensor count it once. The forward collectives inside a re-run part run
// again with it (CommOp::recomputed_by_selective): mlp's TP all-gather and reduce-scatter, moe's
// all-to-alls and its expert-TP and shared-expert collectives, shared_experts' TP collectives,
// mla_up_proj's gather of the q and kv latents (sequence parallelism), and torchtitan_op's TP
// all-gathers (all-reduces without sequence parallelism; its save list keeps the reduce-scatters).
#pragma once

#include "model/op_table.h"
#include "model/spec.h"

namespace mofasim::model {

// `ops` (a transformer layer from ops_for_layer) with the selective fields of every op set for
// `modules`. Embedding, head and MTP-projection tables are returned unchanged.
LayerOps with_recompute_modules(const LayerOps& ops, const ModelSpec& model, const ParallelSpec& parallel,
                                RecomputeModules modules);

// What a table's ops keep for the backward under the features: FP8 activation storage (below),
// then, for a transformer layer with selective recompute's module list, with_recompute_modules.
// Every consumer of stored activations (the memory model, the rank plan the step simulation and the
// closed form read) builds its tables through this, so they agree.
//
// FP8 activation storage (precision fp8 with fp8_wgrad; report = DeepSeek-V3 technical report §3.3):
// Transformer Engine quantises each FP8 linear's input for the forward GEMM and keeps that FP8 copy
// (Hopper: the transposed copy its wgrad GEMM reads) instead of the bf16 input ("the FP8 Wgrad GEMM
// allows activations to be stored in FP8", report §3.3.1): OpCost::fp8_linear_input_bytes shrink to
// fp8_activation_bytes_per_element / 2 of their size (the head only with fp8_output_layer). Two
// tensors are not plain linear inputs:
//   output projection  its input is the attention output O, which the flash-attention backward
//                      reads too. Transformer Engine's recipes keep the bf16 O for the attention and
//                      an FP8 copy for the linear (+1 B per element); the blockwise recipe is
//                      DeepSeek-V3's, which keeps one E5M6 copy (1.5 B) for both (report §3.3.3 (1)).
//   MoE SwiGLU inputs  (routed and shared experts' fc1 outputs) under blockwise: DeepSeek-V3 caches
//                      them in FP8 too (report §3.3.3 (2)); TE's recipes keep them in bf16.
// An input read by two FP8 linears that the op table charges once (MLA's q and kv down-projections)
// is counted as one FP8 copy.
LayerOps with_activation_storage(const LayerOps& ops, const ModelSpec& model, const ParallelSpec& parallel,
                                 const FeatureSpec& features);

// Bytes per element of an FP8 activation kept for the backward, scales included: 1 for delayed and
// current scaling (one scale per tensor), 1 + 1/32 for mxfp8 (one E8M0 scale per 32 elements),
// 1 + 4/128 for blockwise (one fp32 scale per 1 x 128 tile, report §3.3.2).
double fp8_activation_bytes_per_element(Fp8Recipe recipe);

// torchtitan's per-op policy as a module set: the _scaled_mm form when the linears run in FP8.
inline RecomputeModules torchtitan_op_modules(bool fp8_linears) {
  return recompute_bit(fp8_linears ? RecomputeModule::kTorchtitanOpScaledMm : RecomputeModule::kTorchtitanOp);
}

// The forward work selective recompute re-runs for one op: forward * selective_recompute_fraction.
PhaseCost selective_recompute_cost(const OpCost& op);

// Hardware FLOPs of one step (the HFU numerator): model FLOPs plus what recompute re-runs, for any
// module set and full-recompute method. Selective [core_attn] and full uniform are
// flops.h's hardware_flops_per_step; other module sets add each transformer layer's re-run forward
// from its op table, and full block leaves out the forward of the layers it does not recompute
// (op-table FLOPs of one GPU and micro-batch times tp * cp * global_batch / micro_batch GPU
// micro-batches; routed experts at their load imbalance).
double hardware_flops_per_step(const ModelSpec& model, const ParallelSpec& parallel, const FeatureSpec& features);

// Megatron's name of a module ("core_attn", ...).
const char* recompute_module_name(RecomputeModule m);

}  // namespace mofasim::model
