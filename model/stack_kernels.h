// The memory-bound kernels a Megatron-Core layer runs beyond MoFa Table 2 (ModelSpec::kernel_stack):
// their HBM bytes per phase as Transformer Engine's fused kernels move them, or as an older eager
// stack's separate PyTorch ops move them. All carry no FLOPs (Megatron's model FLOPs do not count
// them) and are priced as memory-bound kernels by every compute model. Element counts are per GPU
// and micro-batch; activations are bf16 (2 bytes). The norms and activations of MoFa Table 2 take the
// stack's form here too (norm_kernel, activation_kernel).
#pragma once

#include "model/op_table.h"
#include "model/spec.h"

namespace mofasim::model {

// RoPE on q and k: `elements` = tokens * (q heads + kv heads) * rotary dim.
//   fused (TE fused_rope): read and write each element once, forward and backward: 4 B/element.
//   unfused (t*cos + rotate_half(t)*sin): rotate_half reads and writes (2 passes), two multiplies
//   read and write (4), the add reads two and writes one (3): 9 passes = 18 B/element, both ways.
OpCost rope_kernel(KernelStack stack, double elements);

// MLA's RoPE (Megatron-Core MLASelfAttention.get_query_key_value_tensors, NVIDIA/Megatron-LM
// megatron/core/transformer/multi_latent_attention.py, commit 003b4ce2): the rotation touches only
// the rope slice of q (qk_rope_head_dim per head) and the one shared k_pos_emb per token, but the
// attention needs query = [q_nope, q_rope], key = [k_nope, k_rope broadcast over heads] and value
// as contiguous tensors, so the kernel that rotates also lays them out (fused_apply_mla_rope_for_q
// and _for_kv under apply_rope_fusion; torch.cat and value.contiguous() otherwise). Per token and
// head, with n = qk_nope_head_dim, r = qk_rope_head_dim, v = v_head_dim (bf16 elements): read q
// (n + r) and write query (n + r); read kv (n + v), write key (n + r) and value (v); plus the
// token's k_pos_emb (r). The backward runs the inverse layout on the gradients (dquery -> dq,
// dkey + dvalue -> dkv, the k_pos_emb gradient summed over heads): the same bytes. DeepSeek-V3
// (n 128, r 64, v 128): 960 elements per token-head, 1,920 B, against 256 B for the rotation alone.
// The unfused stack adds its eager rotation passes (rope_kernel's 9 passes) on q_rope and k_rope.
OpCost mla_rope_kernel(KernelStack stack, double tokens, double heads, const MlaSpec& mla);

// The residual add after a block (Megatron's bias-dropout-add), `elements` = tokens_sp * hidden.
//   fused: reads the block output and the residual, writes the sum (6 B/element); with linear bias
//   the bias is added in the same pass and its gradient costs one read of the output gradient
//   (2 B/element) backward. Hidden dropout is taken as 0 (the schema has no field for it; LLaMA-
//   style runs use 0); the residual's own gradient is the incoming gradient (no kernel).
//   unfused: a separate bias add (read + write, 4 B/element) before the residual add (6).
OpCost residual_kernel(OpKind kind, KernelStack stack, double elements, bool linear_bias);

// A layer's RMSNorm over `elements` = tokens_sp * hidden, as a stack runs it.
//   kInternLm (InternLM/InternLM@0047876, internlm/model/modeling_internlm.py, PackedFlashBaseLayer1D
//   ._forward): norm1(residual.float()), i.e. a bf16 -> fp32 cast (read 2, write 4 B/element) and
//   apex's MixedFusedRMSNorm on the fp32 copy (read 4, write the bf16 output 2): 12 B/element
//   forward. Backward: the norm reads the bf16 output gradient and the fp32 input and writes an
//   fp32 input gradient (2 + 4 + 4), the cast's backward turns it back into bf16 (4 + 2): 16.
//   `recomputed`: the layer's dropout_selective_checkpoint (default True, not changed by the 7B
//   configs) wraps the dropout (p = 0: no kernel), the residual add and the norm in an activation
//   checkpoint, so the backward first re-runs the cast and the norm (+12) and, for the norm after
//   the attention (`recomputes_add`), the residual add dropped2 + residual1 (+6). The checkpoint
//   keeps its bf16 input (2 B/element); the final norm (not checkpointed) keeps the fp32 copy (4).
//   Any other stack: MoFa Table 2's norm, read and write 2 B/element forward (4), read input and
//   output gradient and write the input gradient backward (6), keeping the bf16 input (2).
OpCost norm_kernel(OpKind kind, KernelStack stack, double elements, bool recomputed, bool recomputes_add);

// The activation of an FFN with `gated` GLU (gate and up inputs) writing `elements` = tokens * f/t.
//   kInternLm with a gated FFN (internlm/model/linear.py, FeedForward.forward:
//   w3(F.silu(w1(x)) * w2(x))): w1 and w2 are separate GEMMs and the gating runs eagerly: silu
//   (read 2, write 2) then the multiply (read 4, write 2): 10 B/element forward; backward the
//   multiply's two gradients (6 + 6) and silu's (read gradient and input, write: 6): 18. It keeps
//   the w1 and w2 outputs and silu's output (6 B/element). x feeds both GEMMs, so autograd sums
//   their two input gradients: one more add over `input_elements` = tokens_sp * hidden (read 4,
//   write 2 B/element), charged here as the GEMMs carry no memory-bound work of their own.
//   Any other stack (or a plain FFN): MoFa Table 2's fused activation over (gated ? 2 : 1) inputs.
OpCost activation_kernel(OpKind kind, KernelStack stack, bool gated, double elements, double input_elements);

// MoE token permutation before dispatch (Megatron-Core moe_utils.permute): sort the `routed`
// = tokens * top_k (token, expert) pairs by expert (int64 keys and indices, a radix sort taken as
// two read+write passes: 32 B per pair), then gather each token's copies: read tokens * hidden,
// write routed * hidden (bf16). Backward scatter-adds the copies back: read routed * hidden, write
// tokens * hidden. The unfused stack runs the same kernels (torch.sort / index_select).
// `sorted` routed copies are moreover put into local-expert order after the all-to-all and back
// before the combine (moe_dispatch.h, tokens_sorted_by_local_expert): each of the two copies reads
// and writes sorted * hidden (bf16, 4 B/element), and the dispatch side also moves each copy's
// fp32 router probability (read + write, 8 B per copy); the backward runs the inverse copies of
// the gradients, the same bytes. Charged here with the permute (both are routing-order copies of
// the same tokens; the op table has one slot for them).
OpCost moe_permute_kernel(double tokens, double routed, double hidden, double sorted);

// Extra HBM bytes of an unfused vocab-parallel cross-entropy over `elements` = tokens * vocab/t
// logits, beyond the fused loss op of op_table (fp32 read logits + write softmax, 8 B forward and
// 8 B backward). Megatron-LM's eager VocabParallelCrossEntropy forward: cast bf16 to fp32 (2+4),
// max (4), subtract (4+4), exp (4+4), sum (4), divide (4+4) = 38 B, i.e. 30 B extra; backward:
// softmax - one-hot (4+4), scale by the gradient (4+4), cast to bf16 (4+2) = 22 B, 14 extra.
PhaseCost unfused_loss_extra_forward(double elements);
PhaseCost unfused_loss_extra_backward(double elements);

// HBM bytes of the Transformer Engine quantise kernels that feed one FP8 GEMM phase (`work` with
// a kGemm shape and an Fp8Gemm slot; 0 for any other phase or when fp8 is off). Each kernel reads
// the bf16 tensor (2 B/element) and writes one FP8 copy (1 B/element) per consumer: the forward
// quantises the input X (m x k) for fprop and, transposed, for wgrad; dgrad quantises the output
// gradient dY (m x n) for dgrad and, transposed, for wgrad (Hopper FP8 GEMMs take only the TN
// layout, so the transposes are real copies; TE's fused cast_transpose writes both in one pass).
// wgrad reuses both and quantises nothing. Per recipe:
//   delayed:   the scale comes from the amax history: one fused pass (2 + 1 per copy) B/element.
//   current:   the scale comes from this tensor's amax: one more read first (+2 B/element).
//   blockwise: one fused pass, plus a 4-byte fp32 scale per 128 elements per copy.
//   mxfp8:     one fused pass, plus a 1-byte E8M0 scale per 32 elements per copy.
// The FP8 weight copy and its transpose are cast once per step (TE's is_first_microbatch), not per
// micro-batch, and are not charged here.
double fp8_quantise_bytes(const Fp8Spec& fp8, const PhaseCost& work);

}  // namespace mofasim::model
