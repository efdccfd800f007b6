// Throughput of the fused (flash) attention kernel a Transformer Engine layer runs, from published
// kernel curves per GPU family, interpolated in sequence length and head dimension.
//
// The curves are embedded in attention_cost.cc (each point names its row of the public kernel
// measurements it comes from); nothing is read at run time. Rates follow the FlashAttention FLOP
// convention: forward 4*b*s^2*heads*d, halved when causal; backward 2.5 x forward.
// Interpolation is linear in log2(seq) and linear in head dim between table points, and clamped at
// the table's ends (no extrapolation). GQA: the kernels' FLOPs and rate are those of the query heads;
// the measured GQA rows on B200 sit within the spread of the MHA rows, so no separate curve.
#pragma once

namespace mofasim::model::kernels {

enum class GpuFamily { kUnspecified, kAmpere, kHopper, kBlackwell };
const char* gpu_family_name(GpuFamily family);

// Attained fraction of the GPU's dense BF16 peak for a causal flash-attention pass of sequence
// length `seq` (per kernel call) and head dim `head_dim` (the q/k dim), forward or backward.
// `head_batches` is the kernel call's query heads x batch (0: unknown, the curve as it is). On
// Blackwell the curve's rows have the most query heads measured (128 at seq 4096); a call with fewer
// 128-query tiles (head_batches x seq / 128) leaves SMs idle, and its rate takes the factor the
// B200 rows at seq 4096 measured for that many tiles (blackwell_tile_factor). Hopper and Ampere
// have no per-heads rows: head_batches is ignored there.
// Throws std::invalid_argument for kUnspecified or a non-positive seq / head dim.
double attention_peak_fraction(GpuFamily family, double seq, double head_dim, bool backward,
                               double head_batches = 0);

// The Blackwell factor above: the rate of a causal hdim-128 call at seq 4096 with `tiles` 128-query
// tiles (tiles = 32 x query heads at batch 1) over the 128-head call's (4096 tiles), linear in
// log2(tiles) between the measured head counts, 1 at or above 4096 tiles, clamped below 128.
double blackwell_tile_factor(double tiles, bool backward);

// The same for FlashAttention-1 (flash-attn < 2.0), causal, forward or backward alike: only its
// fwd+bwd rate was published (FlashAttention-2 paper figures, A100 and H100), so both passes take
// it and the pair's time is exact. Ampere and Hopper only (FlashAttention-1 has no Blackwell
// kernel): std::invalid_argument otherwise.
double flash1_peak_fraction(GpuFamily family, double seq, double head_dim);

}  // namespace mofasim::model::kernels
