// Compute-time models (see compute_time.h).
#include "model/compute_time.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/units/check.h"

namespace mofasim::model {
namespace {

void require_positive(double value, const char* field) {
  if (!(value > 0)) throw std::invalid_argument(std::string(field) + " must be > 0, got " + std::to_string(value));
}

}  // namespace

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
  if (op_class == OpClass::kElementwise || work.flops <= 0) {
    seconds = memory_seconds();
  } else {
    const double eta = class_efficiency(hw, op_class);
    require_positive(eta, "hardware.efficiency (of the op class)");
    const double peak = peak_flops(hw, features.compute_dtype);
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
    }
  }
  // A host-bound op phase waits for the host to issue it (the asynchronous launch queue is empty).
  return std::max(seconds, hw.op_dispatch_seconds) + hw.kernel_launch_seconds;
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
