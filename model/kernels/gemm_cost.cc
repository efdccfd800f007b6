// GEMM time from its shape (see gemm_cost.h).
#include "model/kernels/gemm_cost.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mofasim::model::kernels {
namespace {

void require_positive(double value, const char* what) {
  if (!(value > 0)) throw std::invalid_argument(std::string(what) + " must be > 0, got " + std::to_string(value));
}

// Whole waves of tiles; a grid smaller than one wave splits k over the idle SMs (gemm_cost.h).
void wave_schedule(const GemmDevice& device, double k, int groups, GemmTime& t) {
  const double sms = device.sm_count;
  if (t.tiles < sms) {
    const double most_splits = std::max(1.0, std::floor(k / kMinSplitK));
    t.split_k = std::clamp(std::floor(sms / t.tiles), 1.0, most_splits);
  }
  t.waves = std::ceil(t.tiles * t.split_k / sms);
  require_positive(device.grouped_fraction, "hardware.kernels.grouped_gemm_fraction");
  const double ceiling = groups > 1 ? device.ceiling_flops * device.grouped_fraction : device.ceiling_flops;
  t.compute_seconds = t.waves * 2.0 * device.tile_m * device.tile_n * (k / t.split_k + kTileFillK) / (ceiling / sms);
}

}  // namespace

GemmTime gemm_time(const GemmDevice& device, double m, double n, double k, int groups, double hbm_bytes) {
  require_positive(m, "gemm m");
  require_positive(n, "gemm n");
  require_positive(k, "gemm k");
  require_positive(groups, "gemm groups");
  require_positive(device.sm_count, "hardware.kernels.sm_count");
  require_positive(device.tile_m, "hardware.kernels.gemm_tile_m");
  require_positive(device.tile_n, "hardware.kernels.gemm_tile_n");
  require_positive(device.ceiling_flops, "hardware.kernels.gemm_ceiling (of the compute dtype)");
  GemmTime t;
  t.tiles = groups * std::ceil(m / device.tile_m) * std::ceil(n / device.tile_n);
  if (device.stream_k && groups == 1) {
    const double sms = device.sm_count;
    const double full = std::floor(t.tiles / sms);
    const double rest = t.tiles - full * sms;
    const double rest_steps = rest > 0 ? std::max(rest * k / sms, std::min(k, kMinSplitK)) + kTileFillK : 0;
    t.waves = t.tiles / sms;
    t.compute_seconds =
        (full * (k + kTileFillK) + rest_steps) * 2.0 * device.tile_m * device.tile_n / (device.ceiling_flops / sms);
  } else {
    wave_schedule(device, k, groups, t);
  }
  if (hbm_bytes > 0) {
    require_positive(device.hbm_bandwidth, "hardware.hbm_bandwidth");
    require_positive(device.hbm_fraction, "hardware.kernels.hbm_fraction");
    t.memory_seconds = hbm_bytes / (device.hbm_fraction * device.hbm_bandwidth);
  }
  t.seconds = std::max(t.compute_seconds, t.memory_seconds);
  return t;
}

}  // namespace mofasim::model::kernels
