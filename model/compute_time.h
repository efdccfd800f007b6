// How long an op takes on one GPU: MoFa's compute-time models.
//   kFixedEfficiency  t = FLOPs / (eta_class * P * mu_c)                          MoFa(1) MoFa(17)
//   kRoofline         t = max(FLOPs / (eta_class * P * mu_c), bytes / (eta_m * BW)) MoFa(19)
//   kModifiedRoofline attained = min(P * eta_class, slope * AI + intercept) * mu_c, t = FLOPs / attained
//                     (MoFa §5.7: a linear fit of measured points, AI = FLOPs / HBM byte)
//   kKernel           per kernel from PhaseCost::shape and HardwareSpec::kernels:
//                     GEMM: tiles and waves on the SMs under the best-shape ceiling of the dtype,
//                       max'd with its HBM bytes (model/kernels/gemm_cost.h);
//                     attention: the flash-attention curve of the GPU family at (seq, head dim,
//                       fwd/bwd) times the BF16 peak (model/kernels/attention_cost.h), with the
//                       backward's FLOPs in the FlashAttention convention (2.5 x forward);
//                     memory-bound: bytes / (kernels.hbm_fraction * BW);
//                     each kernel takes at least kernels.host_launch_seconds unless
//                     FeatureSpec::cuda_graphs (eager launches are host-bound below that).
//                     The efficiency classes are not used.
// P is the dense peak of the compute dtype (bf16/fp16, fp8, fp32). Elementwise ops carry no FLOPs
// and are memory-bound under every model: t = bytes / (eta_m * BW). An op phase with work takes at
// least HardwareSpec::op_dispatch_seconds (the host issuing it: t = max(t, t_dispatch)), unless
// FeatureSpec::cuda_graphs, then adds HardwareSpec::kernel_launch_seconds once, graphs or not.
// FeatureSpec::cuda_graphs removes the host's charges only (the kernels.host_launch and op_dispatch
// floors); the kernel presets set kernel_launch to a fixed cost per op phase fitted on the open set
// (their yaml), which graphs do not remove (docs/validation-measured.md, "What CUDA graphs remove").
#pragma once

#include "model/op_table.h"
#include "model/spec.h"

namespace mofasim::model {

// Dense peak FLOP/s for the dtype. fp32 falls back to bf16/16 when peak_flops_fp32 is 0.
// Throws std::invalid_argument when the peak is not positive (e.g. fp8 on a device without it).
double peak_flops(const HardwareSpec& hw, DType dtype);

// Throughput of an FP8 GEMM under `recipe` relative to the per-tensor-scaled FP8 ceiling
// (hardware.kernels.gemm_ceiling_fp8 / peak_fp8); each value's fp8.csv rows are named in the .cc.
// Under FeatureSpec::fp8 the GEMM phases Fp8Spec names run at that ceiling times this factor, plus
// their quantise kernels (stack_kernels.h: fp8_quantise_bytes) as memory-bound kernels; every other
// op runs in compute_dtype (bf16).
double fp8_recipe_gemm_factor(Fp8Recipe recipe);

// The efficiency eta the hardware spec gives an op class (memory efficiency for elementwise).
double class_efficiency(const HardwareSpec& hw, OpClass op_class);

// Seconds for `work` of one op phase; 0 for a phase with neither FLOPs nor bytes.
// Throws std::invalid_argument on a hardware spec without the rates the chosen model needs.
double phase_seconds(const PhaseCost& work, OpClass op_class, const HardwareSpec& hw, const FeatureSpec& features);

// Seconds of the GPU optimizer step's `bytes` of HBM traffic: at efficiency.optimizer_memory of
// the HBM bandwidth when set (roofline-family models), otherwise as an elementwise phase.
double optimizer_update_seconds(double bytes, const HardwareSpec& hw, const FeatureSpec& features);

struct LayerSeconds {
  double forward = 0;
  double backward_input = 0;
  double backward_weight = 0;
  double selective_recompute = 0;  // forward time of the ops selective recompute re-runs

  [[nodiscard]] double backward() const { return backward_input + backward_weight; }
};

// Compute seconds of every op of `ops`, per phase (no communication). No allocation.
LayerSeconds layer_compute_seconds(const LayerOps& ops, const HardwareSpec& hw, const FeatureSpec& features);

}  // namespace mofasim::model
