// Compute-time models (see compute_time.h).
#include "model/compute_time.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/kernels/attention_cost.h"
#include "model/kernels/gemm_cost.h"
#include "model/stack_kernels.h"
#include "sim/units/check.h"

namespace mofasim::model {
namespace {

void require_positive(double value, const char* field) {
  if (!(value > 0)) throw std::invalid_argument(std::string(field) + " must be > 0, got " + std::to_string(value));
}

// FlashAttention counts the backward as 2.5 x the forward FLOPs; the op table charges 2 x, so
// the backward of an attention op phase runs 2.5 / 2 of its op-table FLOPs at the curve's rate.
constexpr double kFlashBackwardFlopsPerOpFlop = 1.25;

double gemm_ceiling(const HardwareSpec& hw, DType dtype) {
  switch (dtype) {
    case DType::kFp8: return hw.kernels.gemm_ceiling_fp8;
    case DType::kBf16:
    case DType::kFp16: return hw.kernels.gemm_ceiling_bf16;
    case DType::kFp32: return peak_flops(hw, DType::kFp32);
  }
  MOFASIM_UNREACHABLE("unknown DType");
}

// Whether `work` is a GEMM phase Fp8Spec runs in FP8.
bool runs_in_fp8(const PhaseCost& work, const Fp8Spec& fp8) {
  if (!fp8.enabled) return false;
  switch (work.fp8) {
    case Fp8Gemm::kNone: return false;
    case Fp8Gemm::kFprop: return fp8.fprop;
    case Fp8Gemm::kDgrad: return fp8.dgrad;
    case Fp8Gemm::kWgrad: return fp8.wgrad;
    case Fp8Gemm::kHeadFprop: return fp8.output_layer && fp8.fprop;
    case Fp8Gemm::kHeadDgrad: return fp8.output_layer && fp8.dgrad;
    case Fp8Gemm::kHeadWgrad: return fp8.output_layer && fp8.wgrad;
  }
  MOFASIM_UNREACHABLE("unknown Fp8Gemm");
}

// The dtype a phase's GEMM runs in: FP8 where Fp8Spec says so, else the compute dtype.
DType phase_dtype(const PhaseCost& work, const FeatureSpec& features) {
  return runs_in_fp8(work, features.fp8) ? DType::kFp8 : features.compute_dtype;
}

// The recipe's factor on the FP8 rate for a phase Fp8Spec runs in FP8; 1 otherwise (and for the
// legacy compute_dtype fp8, which runs every op at the FP8 rate).
double recipe_factor(DType dtype, const FeatureSpec& features) {
  return dtype == DType::kFp8 && features.fp8.enabled ? fp8_recipe_gemm_factor(features.fp8.recipe) : 1;
}

// ComputeModelKind::kKernel: the device time of one kernel from its shape (compute_time.h).
double kernel_seconds(const PhaseCost& work, const HardwareSpec& hw, const FeatureSpec& features) {
  const KernelSpec& kn = hw.kernels;
  double memory = 0;
  if (work.hbm_bytes > 0) {
    require_positive(hw.hbm_bandwidth, "hardware.hbm_bandwidth");
    require_positive(kn.hbm_fraction, "hardware.kernels.hbm_fraction");
    memory = work.hbm_bytes / (kn.hbm_fraction * hw.hbm_bandwidth);
  }
  if (work.flops <= 0) return memory;
  // The measured kernel rates are of kernels run alone; inside a step they keep in_step_rate of it.
  const double step_rate = features.compute_scale * kn.in_step_rate;
  const KernelShape& sh = work.shape;
  if (sh.kind == KernelKind::kGemm) {
    const DType dtype = phase_dtype(work, features);
    const double recipe = recipe_factor(dtype, features);
    const kernels::GemmDevice device{.sm_count = kn.sm_count,
                                     .tile_m = kn.gemm_tile_m,
                                     .tile_n = kn.gemm_tile_n,
                                     .ceiling_flops = gemm_ceiling(hw, dtype) * step_rate * recipe,
                                     .hbm_bandwidth = hw.hbm_bandwidth,
                                     .hbm_fraction = kn.hbm_fraction,
                                     .grouped_fraction = kn.grouped_gemm_fraction,
                                     .stream_k = kn.gemm_stream_k};
    return kernels::gemm_time(device, sh.m, sh.n, sh.k, sh.groups, work.hbm_bytes).seconds;
  }
  if (sh.kind == KernelKind::kAttention) {
    // Attention stays in BF16 under FP8 training (Transformer Engine runs only GEMMs in FP8).
    const double fraction = sh.flash1 ? kernels::flash1_peak_fraction(kn.family, sh.seq, sh.head_dim)
                                      : kernels::attention_peak_fraction(kn.family, sh.seq, sh.head_dim, sh.backward, sh.head_batches);
    const double rate = fraction * peak_flops(hw, DType::kBf16) * step_rate;
    const double flops = sh.backward ? kFlashBackwardFlopsPerOpFlop * work.flops : work.flops;
    return std::max(flops / rate, memory);
  }
  // FLOPs without a kernel shape (a part of an op: selective recompute of a module): the best-shape
  // GEMM rate of the phase's dtype.
  const DType dtype = phase_dtype(work, features);
  const double recipe = recipe_factor(dtype, features);
  const double ceiling = gemm_ceiling(hw, dtype) * step_rate * recipe;
  require_positive(ceiling, "hardware.kernels.gemm_ceiling (of the compute dtype)");
  return std::max(work.flops / ceiling, memory);
}

}  // namespace

double fp8_recipe_gemm_factor(Fp8Recipe recipe) {
  switch (recipe) {
    // Per-tensor scaled FP8 GEMMs attain the best-shape FP8 ceiling: H200-NVL, TE's 5B-layer GEMMs
    // with pre-quantised inputs, FP8 CurrentScaling 1.90x BF16 (fp8.csv) against the MAMF ratio
    // 1.83x (fp8.csv, H200-SXM). Delayed scaling runs the same kernels.
    case Fp8Recipe::kDelayed:
    case Fp8Recipe::kCurrent: return 1.0;
    // Block-scaled GEMMs (1x128 / 128x128 scales applied in the main loop) are slower: H200-NVL,
    // same layer, autocast: CurrentScaling 20.285 ms vs Block Scaling 22.882 ms (fp8.csv): 0.8865.
    case Fp8Recipe::kBlockwise: return 20.285 / 22.882;
    // MXFP8 on B300, same layer, pre-quantised inputs: CurrentScaling 6.812 ms vs MXFP8 7.161 ms
    // (fp8.csv): 0.9513.
    case Fp8Recipe::kMxfp8: return 6.812 / 7.161;
  }
  MOFASIM_UNREACHABLE("unknown Fp8Recipe");
}

double peak_flops(const HardwareSpec& hw, DType dtype) {
  switch (dtype) {
    case DType::kBf16:
    case DType::kFp16: require_positive(hw.peak_flops_bf16, "hardware.peak_flops_bf16"); return hw.peak_flops_bf16;
    case DType::kFp8: require_positive(hw.peak_flops_fp8, "hardware.peak_flops_fp8 (fp8 compute)"); return hw.peak_flops_fp8;
    case DType::kFp32:
      if (hw.peak_flops_fp32 > 0) return hw.peak_flops_fp32;
      require_positive(hw.peak_flops_bf16, "hardware.peak_flops_bf16");
      return hw.peak_flops_bf16 / 16;
  }
  MOFASIM_UNREACHABLE("unknown DType");
}

double class_efficiency(const HardwareSpec& hw, OpClass op_class) {
  switch (op_class) {
    case OpClass::kGemm: return hw.efficiency.gemm;
    case OpClass::kAttention: return hw.efficiency.attention;
    case OpClass::kSmallGemm: return hw.efficiency.small_gemm;
    case OpClass::kElementwise: return hw.efficiency.memory;
  }
  MOFASIM_UNREACHABLE("unknown OpClass");
}

double optimizer_update_seconds(double bytes, const HardwareSpec& hw, const FeatureSpec& features) {
  const double eta = hw.efficiency.optimizer_memory;
  if (eta <= 0 || hw.compute_model == ComputeModelKind::kKernel || bytes <= 0) {
    return phase_seconds(PhaseCost{0, bytes}, OpClass::kElementwise, hw, features);
  }
  require_positive(hw.hbm_bandwidth, "hardware.hbm_bandwidth");
  return bytes / (eta * hw.hbm_bandwidth);
}

double phase_seconds(const PhaseCost& work, OpClass op_class, const HardwareSpec& hw, const FeatureSpec& features) {
  if (work.flops <= 0 && work.hbm_bytes <= 0) return 0;
  require_positive(features.compute_scale, "features.compute_scale");
  auto memory_seconds = [&] {
    if (work.hbm_bytes <= 0) return 0.0;
    require_positive(hw.hbm_bandwidth, "hardware.hbm_bandwidth");
    require_positive(hw.efficiency.memory, "hardware.efficiency.memory");
    return work.hbm_bytes / (hw.efficiency.memory * hw.hbm_bandwidth);
  };
  double seconds = 0;
  if (hw.compute_model == ComputeModelKind::kKernel) {
    seconds = kernel_seconds(work, hw, features);
    // An eager launch costs host time; the queue drains when kernels are shorter than that.
    if (!features.cuda_graphs) seconds = std::max(seconds, hw.kernels.host_launch_seconds);
  } else if (op_class == OpClass::kElementwise || work.flops <= 0) {
    seconds = memory_seconds();
  } else {
    const double eta = class_efficiency(hw, op_class);
    require_positive(eta, "hardware.efficiency (of the op class)");
    const DType dtype = phase_dtype(work, features);
    const double recipe = recipe_factor(dtype, features);
    const double peak = peak_flops(hw, dtype) * recipe;
    switch (hw.compute_model) {
      case ComputeModelKind::kFixedEfficiency:  // MoFa(1) with MoFa(17)
        seconds = work.flops / (eta * peak * features.compute_scale);
        break;
      case ComputeModelKind::kRoofline:  // MoFa(19)
        seconds = std::max(work.flops / (eta * peak * features.compute_scale), memory_seconds());
        break;
      case ComputeModelKind::kModifiedRoofline: {  // MoFa §5.7
        const double intensity = work.hbm_bytes > 0 ? work.flops / work.hbm_bytes : 0;
        double attained = peak * eta;
        if (work.hbm_bytes > 0) attained = std::min(attained, hw.roofline_slope * intensity + hw.roofline_intercept);
        attained *= features.compute_scale;
        require_positive(attained, "modified roofline attained rate (hardware.roofline_slope/intercept)");
        seconds = work.flops / attained;
        break;
      }
      case ComputeModelKind::kKernel: MOFASIM_UNREACHABLE("handled above");
    }
  }
  // The quantise kernels feeding an FP8 GEMM phase: memory-bound kernels of their own.
  const double quantise_bytes = runs_in_fp8(work, features.fp8) ? fp8_quantise_bytes(features.fp8, work) : 0;
  if (quantise_bytes > 0) {
    if (hw.compute_model == ComputeModelKind::kKernel) {
      double q = quantise_bytes / (hw.kernels.hbm_fraction * hw.hbm_bandwidth);
      if (!features.cuda_graphs) q = std::max(q, hw.kernels.host_launch_seconds);
      seconds += q;
    } else {
      require_positive(hw.efficiency.memory * hw.hbm_bandwidth, "hardware.hbm_bandwidth * efficiency.memory");
      seconds += quantise_bytes / (hw.efficiency.memory * hw.hbm_bandwidth);
    }
  }
  // Two launch charges, of which CUDA graphs remove only the host's:
  //  - op_dispatch (like host_launch above) is host time to issue the phase, a floor: the device
  //    waits only when its work is shorter. A graph replay issues nothing from the host.
  //  - kernel_launch is the fitted fixed cost per op phase. Graphs do not remove it: the one open-set
  //    pair that isolates graphs (O-MLP-16 graphed, O-MLP-17 eager, same layout and NeMo release)
  //    measured 19.49 s and 19.32 s (docs/validation-measured.md, "What CUDA graphs remove").
  const double dispatch = features.cuda_graphs ? 0 : hw.op_dispatch_seconds;
  return std::max(seconds, dispatch) + hw.kernel_launch_seconds;
}

LayerSeconds layer_compute_seconds(const LayerOps& ops, const HardwareSpec& hw, const FeatureSpec& features) {
  LayerSeconds s;
  for (const OpCost& op : ops.ops()) {
    const double fwd = phase_seconds(op.forward, op.op_class, hw, features);
    s.forward += fwd;
    s.backward_input += phase_seconds(op.backward_input, op.op_class, hw, features);
    s.backward_weight += phase_seconds(op.backward_weight, op.op_class, hw, features);
    if (op.recomputed_by_selective) s.selective_recompute += fwd;
  }
  return s;
}

}  // namespace mofasim::model
