// Time of one (grouped) GEMM from its shape on one GPU: the kernel model's GEMM cost.
//
// The output of each of `groups` GEMMs (m x n, reduction k) is cut into tile_m x tile_n tiles;
// one tile runs on one SM at the GPU's best-shape throughput per SM (ceiling / sm_count, the MAMF
// number of ml-engineering for the dtype), the tiles run in waves of sm_count, and each tile pays a
// fixed pipeline fill and epilogue worth kTileFillK reduction steps. A grid smaller than one wave
// splits k across the idle SMs (split-K / stream-K, as cuBLAS does for thin outputs) down to
// kMinSplitK per split. The HBM bound (operand and output bytes at the achieved bandwidth) is the
// other roofline side; the GEMM takes the larger of the two:
//   tiles = groups * ceil(m / tile_m) * ceil(n / tile_n)
//   split = tiles < sms ? clamp(floor(sms / tiles), 1, floor(k / kMinSplitK)) : 1
//   waves = ceil(tiles * split / sms)
//   t_compute = waves * 2 * tile_m * tile_n * (k / split + kTileFillK) / (ceiling / sms)
//               (ceiling x grouped_fraction when groups > 1)
//   t_memory = bytes / (hbm_fraction * hbm_bandwidth)
//   t = max(t_compute, t_memory)
//
// Stream-K schedule (GemmDevice::stream_k, Hopper and Blackwell presets): the persistent kernels of
// cuBLAS / CUTLASS 3 on SM90 and SM100 run the full waves of tiles data-parallel and spread the
// last, partial wave's k-iterations evenly over all SMs (CUTLASS's "data-parallel + one stream-K
// wave" hybrid), so a partial wave costs its share of the work plus one tile fill, not a whole wave:
//   full = floor(tiles / sms), rest = tiles - full * sms
//   steps = full * (k + kTileFillK) + (rest > 0 ? max(rest * k / sms, min(k, kMinSplitK)) + kTileFillK : 0)
//   t_compute = steps * 2 * tile_m * tile_n / (ceiling / sms)
// Grouped GEMMs keep the wave schedule (Transformer Engine's grouped kernels schedule whole tiles).
#pragma once

namespace mofasim::model::kernels {

// Per-tile fixed cost in reduction steps (k elements). Fitted ONCE on the even-numbered A100-PCIe
// rows of ../shared/data/kernels/gemm.csv (SimuMax per-shape measurements, 97 rows): the value
// minimising their mean |error| among {0, 64, 128, 192, 256, 384, 512} (mean 4.55 %); every other
// row of gemm.csv is held out (docs/validation-measured.md).
inline constexpr double kTileFillK = 256;
// Smallest reduction length one split-K piece keeps (assumption: below this the partial-sum
// reduction costs more than the idle SMs it fills).
inline constexpr double kMinSplitK = 1024;

struct GemmDevice {
  int sm_count = 0;          // SMs that run GEMM tiles
  int tile_m = 128;          // output tile rows per SM
  int tile_n = 256;          // output tile columns per SM
  double ceiling_flops = 0;  // best-shape GEMM throughput of the whole GPU for the dtype, FLOP/s
  double hbm_bandwidth = 0;  // bytes/s
  double hbm_fraction = 0;   // achieved fraction of hbm_bandwidth
  // A grouped GEMM (groups > 1) computes at grouped_fraction x ceiling_flops: Transformer Engine's
  // grouped GEMMs reach less of the best shape than one dense GEMM of the same tiles (measured
  // per GPU, hardware.kernels.grouped_gemm_fraction).
  double grouped_fraction = 1;
  bool stream_k = false;  // the last partial wave as stream-K (above); false: whole waves
};

struct GemmTime {
  double seconds = 0;
  double compute_seconds = 0;
  double memory_seconds = 0;
  double tiles = 0;
  double split_k = 1;
  double waves = 0;
};

// Throws std::invalid_argument on a non-positive dimension, group count or device parameter.
GemmTime gemm_time(const GemmDevice& device, double m, double n, double k, int groups, double hbm_bytes);

}  // namespace mofasim::model::kernels
