// Per-op FLOPs, bytes, activation and communication of one layer on one GPU (see op_table.h).
#include "model/op_table.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "model/attention_window.h"
#include "model/moe_dispatch.h"
#include "model/shape.h"
#include "model/stack_kernels.h"
#include "sim/units/check.h"

namespace mofasim::model {
namespace {

constexpr double kAct = 2;          // bytes per activation element (bf16)
constexpr double kStatBytes = 4;    // fp32 softmax statistics per head and token
constexpr double kIdBytes = 8;      // int64 token ids
constexpr double kLogitBytes = 4;   // fp32 logits kept for the cross-entropy backward
constexpr double kProbBytes = 4;    // fp32 router probabilities
constexpr double kSmallGemmTokens = 2048;  // GEMMs with fewer rows than this are "small" (ref §7)

// Shapes of one micro-batch on one GPU.
struct Ctx {
  const ModelSpec& model;
  const ParallelSpec& parallel;
  double h = 0;
  double t = 1;
  double tokens = 0;      // T
  double tokens_sp = 0;   // T_sp
  double tokens_moe = 0;  // T_g
  double seq = 0;         // s (keys each query attends over, across the CP ring)
  bool sp = false;
  double window_share = 1;  // scored pairs over a causal layer's (attention_window.h)
};

Ctx make_ctx(const ModelSpec& model, const ParallelSpec& parallel) {
  validate_model(model);
  validate_parallel(model, parallel);
  if (!(model.attention_dropout >= 0 && model.attention_dropout < 1)) {
    throw std::invalid_argument("model.attention_dropout must be in [0, 1), got " +
                                std::to_string(model.attention_dropout));
  }
  Ctx c{.model = model, .parallel = parallel};
  c.h = model.hidden_size;
  c.t = parallel.tp;
  c.seq = model.seq_length;
  c.tokens = static_cast<double>(parallel.micro_batch) * model.seq_length / parallel.cp;
  c.sp = parallel.sequence_parallel && parallel.tp > 1;
  c.tokens_sp = c.sp ? c.tokens / c.t : c.tokens;
  c.tokens_moe = c.tokens / c.t;
  c.window_share = attention_window_share(model);
  return c;
}

double gemm_bytes(double m, double n, double k) { return kAct * (m * k + k * n + m * n); }

}  // namespace

bool is_fp8_linear(OpKind op) {
  switch (op) {
    case OpKind::kQkvProjection:
    case OpKind::kOutputProjection:
    case OpKind::kMlpLinear1:
    case OpKind::kMlpLinear2:
    case OpKind::kSharedLinear1:
    case OpKind::kSharedLinear2:
    case OpKind::kExpertLinear1:
    case OpKind::kExpertLinear2:
    case OpKind::kMtpProjection: return true;
    default: return false;
  }
}

namespace {

// A GEMM op: forward, B and W each 2*m*n*k per instance; stores its input (m x k) unless told otherwise.
// Kernel shapes: forward Y = X W (m x n, reduce k); B: dX = dY W^T (m x k, reduce n); W: dW = X^T dY
// (k x n, reduce m).
OpCost gemm_op(OpKind kind, double m, double n, double k, int instances, double stored_input) {
  const double flops = 2 * m * n * k * instances;
  const double bytes = gemm_bytes(m, n, k) * instances;
  auto shape = [&](double mm, double nn, double kk) {
    return KernelShape{.kind = KernelKind::kGemm, .m = mm, .n = nn, .k = kk, .groups = instances};
  };
  OpCost op{.op = kind,
            .op_class = OpClass::kGemm,
            .forward = {flops, bytes, shape(m, n, k)},
            .backward_input = {flops, bytes, shape(m, k, n)},
            .backward_weight = {flops, bytes, shape(k, n, m)},
            .gemm = {.m = m, .n = n, .k = k, .instances = instances},
            .activation_bytes = stored_input};
  if (is_fp8_linear(kind) || kind == OpKind::kHead) op.fp8_linear_input_bytes = stored_input;
  if (is_fp8_linear(kind)) {
    op.forward.fp8 = Fp8Gemm::kFprop;
    op.backward_input.fp8 = Fp8Gemm::kDgrad;
    op.backward_weight.fp8 = Fp8Gemm::kWgrad;
  } else if (kind == OpKind::kHead) {
    op.forward.fp8 = Fp8Gemm::kHeadFprop;
    op.backward_input.fp8 = Fp8Gemm::kHeadDgrad;
    op.backward_weight.fp8 = Fp8Gemm::kHeadWgrad;
  }
  return op;
}

// A memory-bound op reading `in` and writing `out` elements forward; backward reads input and
// output-grad and writes input-grad. W (norm scales) is fused into B.
OpCost elementwise_op(OpKind kind, double in_elems, double out_elems, double stored) {
  OpCost op;
  op.op = kind;
  op.op_class = OpClass::kElementwise;
  op.forward = {0, kAct * (in_elems + out_elems)};
  op.backward_input = {0, kAct * (2 * in_elems + out_elems)};
  op.activation_bytes = stored;
  return op;
}

void add_collective(LayerOps& ops, CollectiveKind kind, LayerGroup group, int n, Phase phase, OpKind op,
                    bool before, double bytes, int count = 1) {
  if (n <= 1 || count <= 0 || bytes <= 0) return;
  const double frac = static_cast<double>(n - 1) / n;
  double wire = bytes;
  switch (kind) {
    case CollectiveKind::kAllReduce: wire = 2 * frac * bytes; break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll: wire = frac * bytes; break;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kSendRecv:
    case CollectiveKind::kRingStep: wire = bytes; break;
    case CollectiveKind::kAllToAllScaleOut:
    case CollectiveKind::kAllToAllScaleUp: MOFASIM_UNREACHABLE("the DeepEP hops are added by moe_dispatch.cc");
  }
  add_comm_op(ops, kind, group, n, phase, op, before, bytes, wire, count);
}

// The TP collectives around a column-parallel `first` GEMM and a row-parallel `last` GEMM:
// all-reduces without SP; all-gather / reduce-scatter pairs with SP (plus the re-gather of the
// sharded input that the weight gradient of `first` needs). `first_bytes` is the tensor `first`
// reads (gathered with SP, its gradient all-reduced without), `last_bytes` the one `last` writes;
// both are S = 2*T*h except for MLA, whose column-parallel GEMMs read the latents (add_attention).
void add_tp_pair(LayerOps& ops, const Ctx& c, OpKind first, OpKind last, LayerGroup group, int n, double first_bytes,
                 double last_bytes) {
  if (n <= 1) return;
  if (!c.sp) {
    add_collective(ops, CollectiveKind::kAllReduce, group, n, Phase::kForward, last, false, last_bytes);
    add_collective(ops, CollectiveKind::kAllReduce, group, n, Phase::kInputGrad, first, false, first_bytes);
    return;
  }
  add_collective(ops, CollectiveKind::kAllGather, group, n, Phase::kForward, first, true, first_bytes);
  add_collective(ops, CollectiveKind::kReduceScatter, group, n, Phase::kForward, last, false, last_bytes);
  add_collective(ops, CollectiveKind::kAllGather, group, n, Phase::kInputGrad, last, true, last_bytes);
  add_collective(ops, CollectiveKind::kReduceScatter, group, n, Phase::kInputGrad, first, false, first_bytes);
  add_collective(ops, CollectiveKind::kAllGather, group, n, Phase::kWeightGrad, first, true, first_bytes);
}

// The tensor MLA's column-parallel GEMMs read, per token in elements (Megatron-Core's TE layer
// spec, multi_latent_attention.py): the down-projections are duplicated linears (TELinear,
// parallel_mode "duplicated") that run on this rank's own tokens, so the hidden state is never
// gathered; the up-projections are column-parallel and read the q (q_lora_rank) and kv
// (kv_lora_rank) latents, gathered across TP under SP. Without a q latent (q_lora_rank 0) the
// query projection is column-parallel over the hidden state itself. The rope key is gathered on
// its own (add_attention).
double mla_column_input_elements(const ModelSpec& m) {
  const MlaSpec& a = m.mla;
  return (a.q_lora_rank > 0 ? a.q_lora_rank : m.hidden_size) + a.kv_lora_rank;
}

// What one GPU's attention kernels see. Ring and all-gather CP: this rank's T = b*s/c queries of
// every local head against all s keys, the flash kernel called per CP chunk (s/c queries against
// s/c keys). Ulysses (cp_comm_type a2a): after the all-to-all the rank holds the whole sequence
// (b*s queries) for heads/c query heads and kv/c KV heads, and one kernel call covers all s keys.
// The FLOPs are the same (b*s * heads/c = T * heads); the kernel's sequence length is c times
// longer, which the attention curves (model/kernels/attention_cost.h) price at a higher rate.
struct AttentionView {
  double queries = 0;     // query tokens per head
  double heads = 0;       // query heads
  double kv = 0;          // KV heads
  double kernel_seq = 0;  // sequence length of one kernel call
};

AttentionView attention_view(const Ctx& c, double heads, double kv) {
  const int cp = c.parallel.cp;
  if (c.parallel.cp_comm_type == CpCommType::kA2a && cp > 1) {
    return {.queries = c.tokens * cp, .heads = heads / cp, .kv = kv / cp, .kernel_seq = c.seq};
  }
  return {.queries = c.tokens, .heads = heads, .kv = kv, .kernel_seq = c.seq / cp};
}

// Flash attention (one fused kernel per pass): QK^T and PV count causal-halved FLOPs over all s
// keys, backward twice the forward; the softmax keeps only fp32 log-sum-exp statistics.
void add_fused_core(LayerOps& ops, const Ctx& c, const AttentionView& v, double d_qk, double d_v) {
  const double heads = v.heads;
  const double kv = v.kv;
  const double T = v.queries;
  // QK^T over all s keys, causal: 2*T*s*d*heads/2 forward; backward (dQ, dK) twice that.
  // Sliding window (attention_window.h): the scored pairs shrink by the window share (the model's
  // mean, or the layer's own: AttentionSpan). The kernel keeps the causal rate of the full sequence
  // (no windowed kernel measurements in ../shared/data/kernels: an assumption) and reads the same
  // Q, K and V.
  const double window = c.window_share;
  const double map_flops = T * c.seq * d_qk * heads * window;
  const double map_bytes = kAct * (T * heads * d_qk + c.seq * kv * d_qk);
  OpCost map;
  map.op = OpKind::kAttentionMap;
  map.op_class = OpClass::kAttention;
  const KernelShape fwd{.kind = KernelKind::kAttention,
                        .seq = v.kernel_seq,
                        .head_dim = d_qk,
                        .head_batches = heads * c.parallel.micro_batch,
                        .flash1 = c.model.attention_impl == AttentionImpl::kFlash1};
  KernelShape bwd = fwd;
  bwd.backward = true;
  map.forward = {map_flops, map_bytes, fwd};
  map.backward_input = {2 * map_flops, 2 * map_bytes, bwd};
  map.activation_bytes = kAct * T * (heads + kv) * d_qk;  // Q and K
  map.recomputed_by_selective = true;
  ops.add(map);

  const double stats = kStatBytes * T * heads;
  OpCost softmax;  // fused into the attention kernels: no work of its own
  softmax.op = OpKind::kSoftmax;
  softmax.op_class = OpClass::kElementwise;
  softmax.activation_bytes = stats;
  softmax.selective_dropped_bytes = stats;
  softmax.recomputed_by_selective = true;
  ops.add(softmax);

  const double pv_flops = T * c.seq * d_v * heads * window;
  const double pv_bytes = kAct * (c.seq * kv * d_v + T * heads * d_v);
  OpCost pv;
  pv.op = OpKind::kAttentionValue;
  pv.op_class = OpClass::kAttention;
  pv.forward = {pv_flops, pv_bytes, fwd};
  pv.backward_input = {2 * pv_flops, 2 * pv_bytes, bwd};
  pv.activation_bytes = kAct * T * kv * d_v;  // V
  pv.recomputed_by_selective = true;
  ops.add(pv);
}

// Megatron-LM's non-flash attention (CoreAttention), per GPU with E = T*s*heads score elements:
//   QK^T: torch.baddbmm over the full s x s matrix (the causal mask is applied afterwards, so no
//     causal halving): 2*T*s*d*heads FLOPs; writes the fp16 scores (2E bytes). Backward dQ = dS K and
//     dK = dS^T Q: twice the FLOPs, reads dS twice (4E).
//   softmax: FusedScaleMaskSoftmax, one pass reading the scores and writing the probabilities
//     (4E); backward reads the output gradient and the probabilities and writes the input gradient (6E).
//   attention dropout (p > 0; Megatron-LM's default --attention-dropout is 0.1): torch dropout reads
//     the probabilities, writes the output and a 1-byte mask (5E); backward reads gradient and mask and
//     writes the gradient (5E). Charged to the softmax op (OpKind::kSoftmax stands for both).
//   PV: torch.bmm reading the (dropped-out) probabilities (2E); backward dP = dO V^T writes 2E and
//     dV = P^T dO reads P again (2E).
// Stored for the backward (Korthikanti et al. 2022, "Reducing activation recomputation", sec. 4.1):
// softmax output 2E, dropout mask E and dropout output 2E, i.e. 5E with dropout and 2E without;
// selective recompute drops all of them. The batched GEMMs keep the attention op class; their s x s
// traffic makes them memory-bound on most devices under ComputeModelKind::kRoofline.
void add_unfused_core(LayerOps& ops, const Ctx& c, const AttentionView& v, double d_qk, double d_v) {
  const double heads = v.heads;
  const double kv = v.kv;
  const double T = v.queries;
  const double scores = T * c.seq * heads;  // E
  const bool dropout = c.model.attention_dropout > 0;

  // No window share here, unlike add_fused_core: an unfused core scores every pair and masks the
  // ones outside the window, so it runs the full s x s work while the model FLOPs (flops.cc) count
  // only the windowed pairs; the masked work is time without model FLOPs, as on the GPU.
  const double map_flops = 2 * T * c.seq * d_qk * heads;
  const double qk_bytes = kAct * (T * heads * d_qk + c.seq * kv * d_qk);
  OpCost map;
  map.op = OpKind::kAttentionMap;
  map.op_class = OpClass::kAttention;
  // Batched GEMMs over b*heads (query rows T/b per sequence: s/c, or s under Ulysses; keys s);
  // each backward runs two batched GEMMs of the forward's size (dQ, dK; dP, dV), shaped here as
  // 2*b*heads groups.
  const double q_rows = T / c.parallel.micro_batch;
  const int groups = static_cast<int>(std::lround(c.parallel.micro_batch * heads));
  auto batched = [&](double m, double n, double k, int g) {
    return KernelShape{.kind = KernelKind::kGemm, .m = m, .n = n, .k = k, .groups = g};
  };
  map.forward = {map_flops, qk_bytes + kAct * scores, batched(q_rows, c.seq, d_qk, groups)};
  map.backward_input = {2 * map_flops, 2 * (qk_bytes + kAct * scores), batched(q_rows, d_qk, c.seq, 2 * groups)};
  map.activation_bytes = kAct * T * (heads + kv) * d_qk;  // Q and K
  map.recomputed_by_selective = true;
  ops.add(map);

  const double kept = (dropout ? 2 * kAct + 1 : kAct) * scores;
  OpCost softmax;
  softmax.op = OpKind::kSoftmax;
  softmax.op_class = OpClass::kElementwise;
  softmax.forward = {0, (2 * kAct + (dropout ? 2 * kAct + 1 : 0)) * scores};
  softmax.backward_input = {0, (3 * kAct + (dropout ? 2 * kAct + 1 : 0)) * scores};
  softmax.activation_bytes = kept;
  softmax.selective_dropped_bytes = kept;
  softmax.recomputed_by_selective = true;
  softmax.model_flops = false;
  ops.add(softmax);

  const double pv_flops = 2 * T * c.seq * d_v * heads;
  const double v_bytes = kAct * (c.seq * kv * d_v + T * heads * d_v);
  OpCost pv;
  pv.op = OpKind::kAttentionValue;
  pv.op_class = OpClass::kAttention;
  pv.forward = {pv_flops, v_bytes + kAct * scores, batched(q_rows, d_v, c.seq, groups)};
  pv.backward_input = {2 * pv_flops, 2 * (v_bytes + kAct * scores), batched(q_rows, c.seq, d_v, 2 * groups)};
  pv.activation_bytes = kAct * T * kv * d_v;  // V
  pv.recomputed_by_selective = true;
  ops.add(pv);
}

void add_attention(LayerOps& ops, const Ctx& c) {
  const ModelSpec& m = c.model;
  const double heads = m.num_attention_heads / c.t;  // a/t per GPU
  const bool mla = m.attention == AttentionKind::kMla;
  // KV heads per GPU: g/t, or one replicated head group when g < t.
  const double kv = mla ? heads : std::max(1.0, kv_heads(m) / c.t);
  const double d_qk = mla ? m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim : head_dim(m);
  const double d_v = mla ? m.mla.v_head_dim : head_dim(m);
  const double T = c.tokens;

  ops.add(norm_kernel(OpKind::kInputNorm, m.kernel_stack, c.tokens_sp * c.h, true, false));

  if (mla) {
    // Down/up projections as one op; width N is the per-GPU weight count over h.
    const MlaSpec& a = m.mla;
    const double hh = c.h;
    const double q = a.q_lora_rank > 0 ? a.q_lora_rank * (hh + m.num_attention_heads * d_qk)
                                       : hh * m.num_attention_heads * d_qk;
    const double kv_w = hh * (a.kv_lora_rank + a.qk_rope_head_dim) +
                        static_cast<double>(a.kv_lora_rank) * m.num_attention_heads * (a.qk_nope_head_dim + d_v);
    const double n = (q + kv_w) / (c.t * hh);
    // Keeps its input and the latents (before and after their norms) and the rope key; the linears
    // read the input (down-projections) and the normed latents (up-projections).
    const double latents = (a.q_lora_rank + a.kv_lora_rank) * 2.0 + a.qk_rope_head_dim;
    const double latent_tokens = c.sp ? c.tokens_sp : T;
    OpCost qkv = gemm_op(OpKind::kQkvProjection, T, n, hh, 1, kAct * (c.tokens_sp * hh + latent_tokens * latents));
    qkv.fp8_linear_input_bytes = kAct * (c.tokens_sp * hh + latent_tokens * (a.q_lora_rank + a.kv_lora_rank));
    ops.add(qkv);
  } else {
    const double n = (heads + 2 * kv) * d_qk;
    ops.add(gemm_op(OpKind::kQkvProjection, T, n, c.h, 1, kAct * c.tokens_sp * c.h));
  }

  const bool stack_kernels = m.kernel_stack != KernelStack::kMofaTable2;
  if (stack_kernels && m.qk_layernorm && !mla) {
    // Megatron's q_layernorm / k_layernorm over each head of this GPU's queries and keys, after the
    // QKV split and before RoPE; it keeps its input (the unnormed q and k) for the backward.
    ops.add(norm_kernel(OpKind::kQkNorm, m.kernel_stack, T * (heads + kv) * d_qk, false, false));
  }
  if (stack_kernels && m.position == PositionKind::kRope) {
    // MLA rotates only the decoupled rope part and lays out query, key and value (stack_kernels.h).
    ops.add(mla ? mla_rope_kernel(m.kernel_stack, T, heads, m.mla) : rope_kernel(m.kernel_stack, T * (heads + kv) * d_qk));
  }

  const AttentionView view = attention_view(c, heads, kv);
  if (m.attention_impl == AttentionImpl::kUnfused) {  // Megatron's CoreAttention path
    add_unfused_core(ops, c, view, d_qk, d_v);
  } else {
    add_fused_core(ops, c, view, d_qk, d_v);
  }

  ops.add(gemm_op(OpKind::kOutputProjection, T, c.h, heads * d_v, 1, kAct * T * heads * d_v));
  if (stack_kernels) {
    ops.add(residual_kernel(OpKind::kAttentionResidual, m.kernel_stack, c.tokens_sp * c.h, m.linear_bias));
  }
  ops.add(norm_kernel(OpKind::kPostAttentionNorm, m.kernel_stack, c.tokens_sp * c.h, true, true));

  const double s_bytes = kAct * T * c.h;
  const double qkv_input_bytes = mla ? kAct * T * mla_column_input_elements(m) : s_bytes;
  add_tp_pair(ops, c, OpKind::kQkvProjection, OpKind::kOutputProjection, LayerGroup::kTp, c.parallel.tp,
              qkv_input_bytes, s_bytes);
  if (mla && c.sp) {
    // MLA's rope key comes out of the duplicated kv down-projection sequence-sharded and is
    // gathered after it (gather_from_sequence_parallel_region(k_pos_emb)), outside the
    // up-projections: after the merged QKV op forward, its gradient reduce-scattered before the
    // op's backward. It feeds no GEMM, so no weight-gradient re-gather.
    const double rope_key = kAct * T * m.mla.qk_rope_head_dim;
    add_collective(ops, CollectiveKind::kAllGather, LayerGroup::kTp, c.parallel.tp, Phase::kForward,
                   OpKind::kQkvProjection, false, rope_key);
    add_collective(ops, CollectiveKind::kReduceScatter, LayerGroup::kTp, c.parallel.tp, Phase::kInputGrad,
                   OpKind::kQkvProjection, true, rope_key);
  }
  const int cp = c.parallel.cp;
  const double kv_block = kAct * T * kv * (d_qk + d_v);  // this rank's K and V
  switch (c.parallel.cp_comm_type) {
    case CpCommType::kP2p:
      // Ring attention: each of c-1 steps passes the local K and V block on (backward also dK, dV).
      add_collective(ops, CollectiveKind::kSendRecv, LayerGroup::kCp, cp, Phase::kForward, OpKind::kAttentionMap, true,
                     kv_block, cp - 1);
      add_collective(ops, CollectiveKind::kSendRecv, LayerGroup::kCp, cp, Phase::kInputGrad, OpKind::kAttentionMap,
                     false, 2 * kv_block, cp - 1);
      break;
    case CpCommType::kAllGather:
      // Transformer Engine's AttnFuncWithCPAndKVAllGather (Llama 3 §3.3.2): all-gather the whole
      // sequence's K and V (c blocks) before the attention; the backward gathers them again and
      // reduce-scatters dK, dV. Buffers are the gathered size, nccl-tests convention.
      add_collective(ops, CollectiveKind::kAllGather, LayerGroup::kCp, cp, Phase::kForward, OpKind::kAttentionMap, true,
                     cp * kv_block);
      add_collective(ops, CollectiveKind::kAllGather, LayerGroup::kCp, cp, Phase::kInputGrad, OpKind::kAttentionMap,
                     true, cp * kv_block);
      add_collective(ops, CollectiveKind::kReduceScatter, LayerGroup::kCp, cp, Phase::kInputGrad,
                     OpKind::kAttentionMap, false, cp * kv_block);
      break;
    case CpCommType::kA2a: {
      // DeepSpeed-Ulysses: one all-to-all of this rank's Q, K, V (sequence-sharded in, head-sharded
      // out) before the attention and one of its output O after; the backward mirrors them (dO
      // before, dQ, dK, dV after). Each sends (c-1)/c of its local tensor.
      const double qkv = kAct * T * (heads * d_qk + kv * (d_qk + d_v));
      const double o = kAct * T * heads * d_v;
      add_collective(ops, CollectiveKind::kAllToAll, LayerGroup::kCp, cp, Phase::kForward, OpKind::kAttentionMap, true, qkv);
      add_collective(ops, CollectiveKind::kAllToAll, LayerGroup::kCp, cp, Phase::kForward, OpKind::kAttentionMap, false, o);
      add_collective(ops, CollectiveKind::kAllToAll, LayerGroup::kCp, cp, Phase::kInputGrad, OpKind::kAttentionMap, true, o);
      add_collective(ops, CollectiveKind::kAllToAll, LayerGroup::kCp, cp, Phase::kInputGrad, OpKind::kAttentionMap,
                     false, qkv);
      break;
    }
  }
}

// One FFN of width f over `tokens` (TP-sharded over t); stores_input says whether fc1 keeps its
// input (false when the router already keeps the same tensor).
void add_ffn(LayerOps& ops, const Ctx& c, double f, OpKind l1, OpKind act, OpKind l2, bool stores_input) {
  const double c_ffn = ffn_gemms(c.model.mlp);
  const double ft = f / c.t;
  const double T = c.tokens;
  ops.add(gemm_op(l1, T, (c_ffn - 1) * ft, c.h, 1, stores_input ? kAct * c.tokens_sp * c.h : 0));
  ops.add(activation_kernel(act, c.model.kernel_stack, c.model.mlp == MlpKind::kSwiglu, T * ft, c.tokens_sp * c.h));
  ops.add(gemm_op(l2, T, c.h, ft, 1, kAct * T * ft));
  add_tp_pair(ops, c, l1, l2, LayerGroup::kTp, c.parallel.tp, kAct * T * c.h, kAct * T * c.h);
}

void add_moe(LayerOps& ops, const Ctx& c) {
  const MoeSpec& moe = c.model.moe;
  const ParallelSpec& par = c.parallel;
  const double E = moe.num_experts;
  const double k = moe.top_k;
  const double Tg = c.tokens_moe;

  OpCost router = gemm_op(OpKind::kRouter, Tg, E, c.h, 1, kAct * c.tokens_sp * c.h + 4 * Tg * E);
  router.op_class = OpClass::kSmallGemm;
  router.model_flops = false;
  ops.add(router);
  if (c.model.kernel_stack != KernelStack::kMofaTable2) {
    ops.add(moe_permute_kernel(Tg, Tg * k, c.h, tokens_sorted_by_local_expert(moe, par, Tg)));
  }

  if (moe.num_shared_experts > 0) {
    add_ffn(ops, c, shared_ffn(c.model), OpKind::kSharedLinear1, OpKind::kSharedActivation, OpKind::kSharedLinear2,
            /*stores_input=*/false);
  }

  const double c_ffn = ffn_gemms(c.model.mlp);
  const int local_experts = moe.num_experts / par.ep;
  // The busiest EP rank computes (and receives) f times the mean share of routed tokens: the load
  // imbalance between EP ranks, capped or padded by the capacity factor (moe_dispatch.h).
  const double imbalance = routed_token_factor(moe, par.ep);
  const double per_expert = static_cast<double>(par.ep) * par.etp * Tg * k * imbalance / E;
  const double fe = static_cast<double>(moe.expert_ffn_hidden_size) / par.etp;
  const double routed_tokens = per_expert * local_experts;
  OpCost l1 = gemm_op(OpKind::kExpertLinear1, per_expert, (c_ffn - 1) * fe, c.h, local_experts,
                      kAct * routed_tokens * c.h);
  l1.routed_expert = true;
  if (per_expert < kSmallGemmTokens) l1.op_class = OpClass::kSmallGemm;
  ops.add(l1);
  // The stack's activation kernel, as the dense FFN's (InternEvo's experts are its FeedForward too).
  OpCost act = activation_kernel(OpKind::kExpertActivation, c.model.kernel_stack, c.model.mlp == MlpKind::kSwiglu,
                                 routed_tokens * fe, routed_tokens * c.h);
  act.routed_expert = true;
  ops.add(act);
  OpCost l2 = gemm_op(OpKind::kExpertLinear2, per_expert, c.h, fe, local_experts, kAct * routed_tokens * fe);
  l2.routed_expert = true;
  l2.op_class = l1.op_class;
  ops.add(l2);
  // Combine: sum each token's k expert outputs. Megatron-core applies the gate in the experts'
  // activation (activation_func_with_probs), so it keeps only the dispatched fp32 probabilities.
  ops.add(elementwise_op(OpKind::kExpertCombine, k * Tg * c.h, Tg * c.h, kProbBytes * routed_tokens));

  add_moe_collectives(ops, c.model, par, Tg, routed_tokens);
}

}  // namespace

int add_comm_op(LayerOps& ops, CollectiveKind kind, LayerGroup group, int n, Phase phase, OpKind op, bool before,
                double bytes, double wire, int count, int pipelined_with, double pipeline_chunks) {
  if (n <= 1 || count <= 0 || bytes <= 0) return -1;
  ops.add(CommOp{.collective = kind,
                 .group = group,
                 .group_size = n,
                 .phase = phase,
                 .op = op,
                 .before_op = before,
                 .bytes = bytes,
                 .wire_bytes = wire,
                 .count = count,
                 .pipelined_with = pipelined_with,
                 .pipeline_chunks = pipeline_chunks});
  return static_cast<int>(ops.comms().size()) - 1;
}

void LayerOps::add(const OpCost& op) {
  MOFASIM_CHECK(num_ops_ < kMaxOps, "LayerOps: more than kMaxOps ops");
  ops_[static_cast<std::size_t>(num_ops_++)] = op;
  totals_.forward = totals_.forward + op.forward;
  totals_.backward_input = totals_.backward_input + op.backward_input;
  totals_.backward_weight = totals_.backward_weight + op.backward_weight;
  if (op.model_flops) totals_.model_flops += op.forward.flops;
  totals_.activation_bytes += op.activation_bytes;
  totals_.selective_dropped_bytes += op.selective_dropped_bytes;
  if (op.recomputed_by_selective) {
    const double f = op.selective_recompute_fraction;
    totals_.selective_recompute =
        totals_.selective_recompute + PhaseCost{op.forward.flops * f, op.forward.hbm_bytes * f};
  }
  if (op.routed_expert) {
    totals_.routed_activation_bytes += op.activation_bytes;
    if (op.op == OpKind::kExpertLinear1) totals_.routed_input_bytes += op.activation_bytes;
  }
}

void LayerOps::add(const CommOp& comm) {
  MOFASIM_CHECK(num_comms_ < kMaxComms, "LayerOps: more than kMaxComms collectives");
  // A pipelined pair is two comms: the second names an earlier one that names none itself.
  MOFASIM_CHECK((comm.pipelined_with < 0) == (comm.pipeline_chunks <= 0), "a pipelined hop carries its chunk count");
  MOFASIM_CHECK(comm.pipelined_with < num_comms_ &&
                    (comm.pipelined_with < 0 || comms_[static_cast<std::size_t>(comm.pipelined_with)].pipelined_with < 0),
                "a hop is pipelined with an earlier comm of its layer that is paired with none");
  comms_[static_cast<std::size_t>(num_comms_++)] = comm;
  totals_.comm_wire_bytes += comm.wire_bytes * comm.count;
}

LayerOps ops_for_layer(const ModelSpec& model, const ParallelSpec& parallel, int layer, AttentionSpan span) {
  Ctx c = make_ctx(model, parallel);
  if (layer < 0 || layer >= model.num_layers) {
    throw std::invalid_argument("layer index must be in [0, num_layers = " + std::to_string(model.num_layers) +
                                "), got " + std::to_string(layer));
  }
  if (span == AttentionSpan::kLayer && model.window_size > 0) {
    c.window_share = is_window_layer(model, layer) ? window_pair_ratio(model.seq_length, model.window_size) : 1.0;
  }
  LayerOps ops;
  ops.set_input_bytes(kAct * c.tokens_sp * c.h);
  add_attention(ops, c);
  if (model.is_moe_layer(layer)) {
    add_moe(ops, c);
  } else {
    add_ffn(ops, c, model.ffn_hidden_size, OpKind::kMlpLinear1, OpKind::kMlpActivation, OpKind::kMlpLinear2,
            /*stores_input=*/true);
  }
  if (model.kernel_stack != KernelStack::kMofaTable2) {
    ops.add(residual_kernel(OpKind::kMlpResidual, model.kernel_stack, c.tokens_sp * c.h, model.linear_bias));
  }
  return ops;
}

LayerOps ops_for_embedding(const ModelSpec& model, const ParallelSpec& parallel) {
  const Ctx c = make_ctx(model, parallel);
  LayerOps ops;
  const double positions = model.position == PositionKind::kLearned ? 1 : 0;
  // Gather T rows (plus position rows) and write T x h; the W pass scatter-adds the output grad.
  OpCost lookup;
  lookup.op = OpKind::kEmbedding;
  lookup.op_class = OpClass::kElementwise;
  lookup.forward = {0, kAct * c.tokens * c.h * (2 + positions)};
  lookup.backward_weight = {0, kAct * c.tokens * c.h * (2 + positions)};
  lookup.activation_bytes = kIdBytes * c.tokens;
  lookup.model_flops = false;
  ops.add(lookup);
  // Vocab-parallel lookup: partial rows are summed across TP (reduce-scatter with SP).
  const double bytes = kAct * c.tokens * c.h;
  if (c.sp) {
    add_collective(ops, CollectiveKind::kReduceScatter, LayerGroup::kTp, parallel.tp, Phase::kForward,
                   OpKind::kEmbedding, false, bytes);
    add_collective(ops, CollectiveKind::kAllGather, LayerGroup::kTp, parallel.tp, Phase::kWeightGrad,
                   OpKind::kEmbedding, true, bytes);
  } else {
    add_collective(ops, CollectiveKind::kAllReduce, LayerGroup::kTp, parallel.tp, Phase::kForward, OpKind::kEmbedding,
                   false, bytes);
  }
  return ops;
}

LayerOps ops_for_head(const ModelSpec& model, const ParallelSpec& parallel) {
  const Ctx c = make_ctx(model, parallel);
  LayerOps ops;
  const double T = c.tokens;
  const double vt = static_cast<double>(model.vocab_size) / c.t;
  ops.set_input_bytes(kAct * c.tokens_sp * c.h);
  OpCost norm = norm_kernel(OpKind::kFinalNorm, model.kernel_stack, c.tokens_sp * c.h, false, false);
  norm.model_flops = false;
  ops.add(norm);
  ops.add(gemm_op(OpKind::kHead, T, vt, c.h, 1, kAct * c.tokens_sp * c.h));
  // Vocab-parallel cross-entropy in fp32: read logits, write the softmax; keep it for the backward.
  OpCost loss;
  loss.op = OpKind::kLoss;
  loss.op_class = OpClass::kElementwise;
  loss.forward = {0, 2 * kLogitBytes * T * vt};
  loss.backward_input = {0, 2 * kLogitBytes * T * vt};
  if (model.kernel_stack == KernelStack::kUnfused) {
    loss.forward = loss.forward + unfused_loss_extra_forward(T * vt);
    loss.backward_input = loss.backward_input + unfused_loss_extra_backward(T * vt);
  }
  loss.activation_bytes = kLogitBytes * T * vt;
  loss.model_flops = false;
  ops.add(loss);
  const int tp = parallel.tp;
  const double bytes = kAct * T * c.h;
  if (c.sp) {
    add_collective(ops, CollectiveKind::kAllGather, LayerGroup::kTp, tp, Phase::kForward, OpKind::kHead, true, bytes);
    add_collective(ops, CollectiveKind::kReduceScatter, LayerGroup::kTp, tp, Phase::kInputGrad, OpKind::kHead, false,
                   bytes);
    add_collective(ops, CollectiveKind::kAllGather, LayerGroup::kTp, tp, Phase::kWeightGrad, OpKind::kHead, true,
                   bytes);
  } else {
    add_collective(ops, CollectiveKind::kAllReduce, LayerGroup::kTp, tp, Phase::kInputGrad, OpKind::kHead, false,
                   bytes);
  }
  // Loss: all-reduce of the per-token max, sum of exponentials and target logit (3 fp32 values).
  add_collective(ops, CollectiveKind::kAllReduce, LayerGroup::kTp, tp, Phase::kForward, OpKind::kLoss, true,
                 3 * kLogitBytes * T);
  return ops;
}

LayerOps ops_for_mtp_projection(const ModelSpec& model, const ParallelSpec& parallel) {
  const Ctx c = make_ctx(model, parallel);
  LayerOps ops;
  const double T = c.tokens;
  ops.set_input_bytes(kAct * c.tokens_sp * c.h);
  // Two norms (hidden state, embedding of the shifted tokens) as one op over 2h per token.
  OpCost norms = elementwise_op(OpKind::kMtpProjection, 2 * c.tokens_sp * c.h, 2 * c.tokens_sp * c.h,
                                2 * kAct * c.tokens_sp * c.h);
  norms.model_flops = false;
  ops.add(norms);
  ops.add(gemm_op(OpKind::kMtpProjection, T, c.h / c.t, 2 * c.h, 1, 2 * kAct * c.tokens_sp * c.h));
  const double bytes = 2 * kAct * T * c.h;
  if (c.sp) {
    add_collective(ops, CollectiveKind::kAllGather, LayerGroup::kTp, parallel.tp, Phase::kForward,
                   OpKind::kMtpProjection, true, bytes);
    add_collective(ops, CollectiveKind::kReduceScatter, LayerGroup::kTp, parallel.tp, Phase::kInputGrad,
                   OpKind::kMtpProjection, false, bytes);
  } else {
    add_collective(ops, CollectiveKind::kAllReduce, LayerGroup::kTp, parallel.tp, Phase::kInputGrad,
                   OpKind::kMtpProjection, false, bytes);
  }
  return ops;
}

LayerOps pp_boundary_comm(const ModelSpec& model, const ParallelSpec& parallel) {
  const Ctx c = make_ctx(model, parallel);
  LayerOps ops;
  const double bytes = kAct * c.tokens_sp * c.h;
  add_collective(ops, CollectiveKind::kSendRecv, LayerGroup::kPp, parallel.pp, Phase::kForward, OpKind::kInputNorm,
                 true, bytes);
  add_collective(ops, CollectiveKind::kSendRecv, LayerGroup::kPp, parallel.pp, Phase::kInputGrad,
                 OpKind::kInputNorm, false, bytes);
  return ops;
}

}  // namespace mofasim::model
