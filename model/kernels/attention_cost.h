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
// Throws std::invalid_argument for kUnspecified or a non-positive seq / head dim.
double attention_peak_fraction(GpuFamily family, double seq, double head_dim, bool backward);

// The same for FlashAttention-1 (flash-attn < 2.0), causal, forward or backward alike: only its
// fwd+bwd rate was published (FlashAttention-2 paper figures, A100 and H100), so both passes take
// it and the pair's time is exact. Ampere and Hopper only (FlashAttention-1 has no Blackwell
// kernel): std::invalid_argument otherwise.
double flash1_peak_fraction(GpuFamily family, double seq, double head_dim);

}  // namespace mofasim::model::kernels
