// Byte counts of the stack kernels (see stack_kernels.h for each derivation).
#include "model/stack_kernels.h"

namespace mofasim::model {
namespace {

constexpr double kAct = 2;      // bf16 activation bytes
constexpr double kIndex = 8;    // int64 sort keys and indices

OpCost memory_op(OpKind kind, double forward_bytes, double backward_bytes) {
  OpCost op;
  op.op = kind;
  op.op_class = OpClass::kElementwise;
  op.forward = {0, forward_bytes};
  op.backward_input = {0, backward_bytes};
  op.model_flops = false;
  return op;
}

}  // namespace

OpCost rope_kernel(KernelStack stack, double elements) {
  const double passes = stack == KernelStack::kUnfused ? 9 : 2;
  return memory_op(OpKind::kRope, passes * kAct * elements, passes * kAct * elements);
}

OpCost mla_rope_kernel(KernelStack stack, double tokens, double heads, const MlaSpec& mla) {
  const double n = mla.qk_nope_head_dim;
  const double r = mla.qk_rope_head_dim;
  const double v = mla.v_head_dim;
  const double per_head = 2 * (n + r) + (n + v) + (n + r) + v;
  double bytes = kAct * (tokens * heads * per_head + tokens * r);
  if (stack == KernelStack::kUnfused) bytes += rope_kernel(stack, tokens * (heads + 1) * r).forward.hbm_bytes;
  return memory_op(OpKind::kRope, bytes, bytes);
}

OpCost residual_kernel(OpKind kind, KernelStack stack, double elements, bool linear_bias) {
  double forward = 3 * kAct * elements;
  if (linear_bias && stack == KernelStack::kUnfused) forward += 2 * kAct * elements;
  const double backward = linear_bias ? kAct * elements : 0;
  return memory_op(kind, forward, backward);
}

OpCost norm_kernel(OpKind kind, KernelStack stack, double elements, bool recomputed, bool recomputes_add) {
  constexpr double kFp32 = 4;
  if (stack != KernelStack::kInternLm) {
    OpCost op = memory_op(kind, 2 * kAct * elements, 3 * kAct * elements);
    op.activation_bytes = kAct * elements;
    op.model_flops = true;
    return op;
  }
  const double cast = (kAct + kFp32) * elements;  // bf16 -> fp32, or back
  const double norm_forward = (kFp32 + kAct) * elements;
  double backward = (kAct + 2 * kFp32) * elements + cast;
  if (recomputed) backward += cast + norm_forward + (recomputes_add ? 3 * kAct * elements : 0);
  OpCost op = memory_op(kind, cast + norm_forward, backward);
  op.activation_bytes = (recomputed ? kAct : kFp32) * elements;
  op.model_flops = true;
  return op;
}

OpCost activation_kernel(OpKind kind, KernelStack stack, bool gated, double elements, double input_elements) {
  OpCost op;
  if (stack == KernelStack::kInternLm && gated) {
    op = memory_op(kind, 5 * kAct * elements, 9 * kAct * elements + 3 * kAct * input_elements);
    op.activation_bytes = 3 * kAct * elements;
  } else {
    const double in = (gated ? 2 : 1) * elements;
    op = memory_op(kind, kAct * (in + elements), kAct * (2 * in + elements));
    op.activation_bytes = kAct * in;
  }
  op.model_flops = true;
  return op;
}

OpCost moe_permute_kernel(double tokens, double routed, double hidden, double sorted) {
  constexpr double kProb = 4;  // fp32 router probability per routed copy
  const double sort = 2 * 2 * kIndex * routed;
  const double gather = kAct * (tokens + routed) * hidden;
  const double local_order = 2 * (2 * kAct * sorted * hidden) + 2 * kProb * sorted;
  OpCost op = memory_op(OpKind::kMoePermute, sort + gather + local_order, gather + local_order);
  op.routed_expert = true;
  return op;
}

double fp8_quantise_bytes(const Fp8Spec& fp8, const PhaseCost& work) {
  if (!fp8.enabled || work.shape.kind != KernelKind::kGemm) return 0;
  const KernelShape& sh = work.shape;
  const bool head = work.fp8 == Fp8Gemm::kHeadFprop || work.fp8 == Fp8Gemm::kHeadDgrad;
  if (head && !fp8.output_layer) return 0;
  double elements = 0;
  int copies = 0;
  if (work.fp8 == Fp8Gemm::kFprop || work.fp8 == Fp8Gemm::kHeadFprop) {
    elements = sh.m * sh.k * sh.groups;  // X, m x k
    copies = (fp8.fprop ? 1 : 0) + (fp8.wgrad ? 1 : 0);
  } else if (work.fp8 == Fp8Gemm::kDgrad || work.fp8 == Fp8Gemm::kHeadDgrad) {
    elements = sh.m * sh.k * sh.groups;  // dY, m x n of the forward = m x (the dgrad's reduction)
    copies = (fp8.dgrad ? 1 : 0) + (fp8.wgrad ? 1 : 0);
  }
  if (copies == 0) return 0;
  double per_element = kAct + copies * 1.0;
  if (fp8.recipe == Fp8Recipe::kCurrent) per_element += kAct;
  if (fp8.recipe == Fp8Recipe::kBlockwise) per_element += copies * 4.0 / 128;
  if (fp8.recipe == Fp8Recipe::kMxfp8) per_element += copies * 1.0 / 32;
  return per_element * elements;
}

PhaseCost unfused_loss_extra_forward(double elements) { return {0, 30 * elements}; }
PhaseCost unfused_loss_extra_backward(double elements) { return {0, 14 * elements}; }

}  // namespace mofasim::model
