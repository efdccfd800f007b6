// The embedded flash-attention curves (see attention_cost.h). Source of every number:
// ../shared/data/kernels/attention.csv (compiled from public sources; its README gives commits):
//   Ampere    A100-SXM4-80GB, kernel FlashAttention-2, fwd+bwd, causal, batch*seq = 16k tokens,
//             hidden 2048 (FA2 paper figure; assets/flash2_a100_fwd_bwd_benchmark.png). Only
//             fwd+bwd was published, so forward and backward both get the fwd+bwd rate (the pair's
//             total time is then exact). Reference peak 312 TFLOPS (A100 datasheet).
//   Hopper    H100-SXM5-80GB, kernel cuDNN (what Transformer Engine's fused attention runs on
//             sm90), fwd causal and non-causal, bwd non-causal (FA3 paper figures). The causal
//             backward was not published: it is the non-causal backward times the causal /
//             non-causal ratio of the forward at the same (seq, head dim). Head dim 256 has no
//             backward row: it takes the head-dim-128 backward (clamp). Reference peak 989.4.
//   Blackwell B200, kernel TE-DotProductAttention (causal; SimuMax measurements, tflops already
//             halved to the causal convention), batch 1; at each (seq, head dim) the row with the
//             most query heads is taken (fewer heads leave SMs idle at batch 1). No row below
//             seq 4096: shorter sequences take the 4096 rate (clamp, likely optimistic). Calls
//             with fewer 128-query tiles than the 128-head row take the measured factor of the
//             seq-4096 rows with fewer heads (blackwell_tile_factor).
//             Reference peak 2250 TFLOPS (SimuMax's nominal B200 peak that its rates divide).
#include "model/kernels/attention_cost.h"

#include <array>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string>

namespace mofasim::model::kernels {
namespace {

constexpr std::array<double, 6> kFaSeq = {512, 1024, 2048, 4096, 8192, 16384};

// A100 FA2 fwd+bwd causal TFLOPS at kFaSeq.
constexpr std::array<double, 6> kA100Hd64 = {88, 119, 140, 156, 165, 171};
constexpr std::array<double, 6> kA100Hd128 = {99, 133, 155, 173, 182, 189};

// FlashAttention-1 fwd+bwd causal TFLOPS at kFaSeq, batch*seq = 16k tokens, hidden 2048, the
// FlashAttention-1 bars of the same FA2 paper figures (attention.csv rows A100-SXM4-80GB resp.
// H100-SXM5-80GB, FlashAttention-1, causal true, fwd+bwd; reference peaks 312 and 989.4).
constexpr std::array<double, 6> kA100Flash1Hd64 = {58, 70, 77, 87, 92, 97};
constexpr std::array<double, 6> kA100Flash1Hd128 = {55, 62, 69, 76, 80, 83};
constexpr std::array<double, 6> kH100Flash1Hd64 = {104, 123, 136, 138, 149, 156};
constexpr std::array<double, 6> kH100Flash1Hd128 = {98, 109, 108, 126, 135, 137};

// H100 cuDNN TFLOPS at kFaSeq.
constexpr std::array<double, 6> kH100FwdCausalHd64 = {225, 288, 334, 363, 379, 388};
constexpr std::array<double, 6> kH100FwdCausalHd128 = {315, 410, 484, 518, 529, 539};
constexpr std::array<double, 6> kH100FwdCausalHd256 = {308, 391, 450, 483, 497, 509};
constexpr std::array<double, 6> kH100FwdFullHd64 = {335, 373, 395, 408, 412, 413};
constexpr std::array<double, 6> kH100FwdFullHd128 = {497, 574, 617, 609, 600, 595};
constexpr std::array<double, 6> kH100BwdFullHd64 = {266, 348, 395, 417, 432, 433};
constexpr std::array<double, 6> kH100BwdFullHd128 = {305, 408, 465, 499, 518, 516};

// B200 TE causal TFLOPS at seq 4096, 32768, 131072 (heads of the row taken in brackets).
constexpr std::array<double, 3> kB200Seq = {4096, 32768, 131072};
constexpr std::array<double, 3> kB200FwdHd128 = {1121.2, 1311.1, 1112.4};  // 128q/16kv, 16q/2kv, 16q/2kv
constexpr std::array<double, 3> kB200BwdHd128 = {935.5, 980.7, 930.0};     // same rows
constexpr std::array<double, 3> kB200FwdHd192 = {934.4, 913.8, 769.3};     // 128q, 64q, 64q (192/128)
constexpr std::array<double, 3> kB200BwdHd192 = {722.9, 730.0, 740.3};     // same rows

// B200 TE causal hdim 128 at seq 4096, batch 1, by query heads 4, 8, 16, 32, 64, 128 (the
// 128-query tiles of one call: 32 per head): the mean of attention.csv's rows at that head count
// (two KV-head counts each where measured; 4q: 1 kv), over the 128-head mean. Forward
// 188.1, 351.7, 649.7, 818.8, 960.0, 1092.95 TFLOPS; backward 387.35, 724.2, 839.0, 890.05,
// 818.25, 931.55 (the 64-head backward is measured below the 32-head one; kept as measured).
constexpr std::array<double, 6> kB200Tiles = {128, 256, 512, 1024, 2048, 4096};
constexpr std::array<double, 6> kB200FwdTiles = {188.1, 351.7, 649.7, 818.8, 960.0, 1092.95};
constexpr std::array<double, 6> kB200BwdTiles = {387.35, 724.2, 839.0, 890.05, 818.25, 931.55};

constexpr double kA100Peak = 312;
constexpr double kH100Peak = 989.4;
constexpr double kB200Peak = 2250;

// Where x falls on the axis xs, linear in log2(x) between its points, clamped at both ends.
// Worked out once per call and read off every curve sharing the axis (a Hopper backward reads
// six of them at one sequence length).
struct Bracket {
  int clamp = 0;      // -1: at or below xs.front(), +1: at or above xs.back() (or unordered)
  std::size_t i = 0;  // else between xs[i - 1] and xs[i]
  double w = 0;       // the weight of ys[i]
};

Bracket bracket_log(std::span<const double> xs, double x) {
  if (x <= xs.front()) return {.clamp = -1};
  if (x >= xs.back()) return {.clamp = 1};
  for (std::size_t i = 1; i < xs.size(); ++i) {
    if (x <= xs[i]) {
      return {.i = i, .w = (std::log2(x) - std::log2(xs[i - 1])) / (std::log2(xs[i]) - std::log2(xs[i - 1]))};
    }
  }
  return {.clamp = 1};
}

// The curve ys (on the bracket's axis) at the bracket.
double at(std::span<const double> ys, const Bracket& b) {
  if (b.clamp < 0) return ys.front();
  if (b.clamp > 0) return ys.back();
  return ys[b.i - 1] + b.w * (ys[b.i] - ys[b.i - 1]);
}

// Linear in head dim between two curves at d0 < d1, clamped.
double blend(double d, double d0, double y0, double d1, double y1) {
  if (d <= d0) return y0;
  if (d >= d1) return y1;
  return y0 + (d - d0) / (d1 - d0) * (y1 - y0);
}

double hopper_tflops(double seq, double d, bool backward) {
  const Bracket at_seq = bracket_log(kFaSeq, seq);
  auto fwd = [&](double hd) {
    if (hd <= 128) {
      return blend(hd, 64, at(kH100FwdCausalHd64, at_seq), 128, at(kH100FwdCausalHd128, at_seq));
    }
    return blend(hd, 128, at(kH100FwdCausalHd128, at_seq), 256, at(kH100FwdCausalHd256, at_seq));
  };
  if (!backward) return fwd(d);
  // Causal backward = non-causal backward x (causal / non-causal forward), at head dim 64 and 128.
  auto bwd_at = [&](std::span<const double> bwd_full, std::span<const double> fwd_causal,
                    std::span<const double> fwd_full) {
    return at(bwd_full, at_seq) * at(fwd_causal, at_seq) / at(fwd_full, at_seq);
  };
  return blend(d, 64, bwd_at(kH100BwdFullHd64, kH100FwdCausalHd64, kH100FwdFullHd64), 128,
               bwd_at(kH100BwdFullHd128, kH100FwdCausalHd128, kH100FwdFullHd128));
}

}  // namespace

const char* gpu_family_name(GpuFamily family) {
  switch (family) {
    case GpuFamily::kUnspecified: return "unspecified";
    case GpuFamily::kAmpere: return "ampere";
    case GpuFamily::kHopper: return "hopper";
    case GpuFamily::kBlackwell: return "blackwell";
  }
  return "unknown";
}

namespace {

void check_shape(double seq, double head_dim) {
  if (!(seq > 0) || !(head_dim > 0)) {
    throw std::invalid_argument("attention kernel: seq and head dim must be > 0, got " + std::to_string(seq) +
                                " and " + std::to_string(head_dim));
  }
}

}  // namespace

double blackwell_tile_factor(double tiles, bool backward) {
  if (!(tiles > 0)) throw std::invalid_argument("attention kernel: tiles must be > 0, got " + std::to_string(tiles));
  const auto& rates = backward ? kB200BwdTiles : kB200FwdTiles;
  return at(rates, bracket_log(kB200Tiles, tiles)) / rates.back();
}

double attention_peak_fraction(GpuFamily family, double seq, double head_dim, bool backward, double head_batches) {
  check_shape(seq, head_dim);
  switch (family) {
    case GpuFamily::kAmpere: {
      const Bracket at_seq = bracket_log(kFaSeq, seq);
      return blend(head_dim, 64, at(kA100Hd64, at_seq), 128, at(kA100Hd128, at_seq)) / kA100Peak;
    }
    case GpuFamily::kHopper: return hopper_tflops(seq, head_dim, backward) / kH100Peak;
    case GpuFamily::kBlackwell: {
      const auto& f128 = backward ? kB200BwdHd128 : kB200FwdHd128;
      const auto& f192 = backward ? kB200BwdHd192 : kB200FwdHd192;
      const Bracket at_seq = bracket_log(kB200Seq, seq);
      const double curve = blend(head_dim, 128, at(f128, at_seq), 192, at(f192, at_seq)) / kB200Peak;
      return head_batches > 0 ? curve * blackwell_tile_factor(head_batches * seq / 128, backward) : curve;
    }
    case GpuFamily::kUnspecified: break;
  }
  throw std::invalid_argument(
      "hardware.kernels.family must be ampere, hopper or blackwell for compute_model kernel (attention curves)");
}

double flash1_peak_fraction(GpuFamily family, double seq, double head_dim) {
  check_shape(seq, head_dim);
  switch (family) {
    case GpuFamily::kAmpere: {
      const Bracket at_seq = bracket_log(kFaSeq, seq);
      return blend(head_dim, 64, at(kA100Flash1Hd64, at_seq), 128, at(kA100Flash1Hd128, at_seq)) / kA100Peak;
    }
    case GpuFamily::kHopper: {
      const Bracket at_seq = bracket_log(kFaSeq, seq);
      return blend(head_dim, 64, at(kH100Flash1Hd64, at_seq), 128, at(kH100Flash1Hd128, at_seq)) / kH100Peak;
    }
    case GpuFamily::kBlackwell:
    case GpuFamily::kUnspecified: break;
  }
  throw std::invalid_argument(
      "model.attention_impl flash1 needs hardware.kernels.family ampere or hopper (FlashAttention-1 curves)");
}

}  // namespace mofasim::model::kernels
