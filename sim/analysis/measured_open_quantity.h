// An open-set row is compared in its own measured quantity: a predicted step time T (seconds, one
// global batch) becomes the row's quantity as the source defines it, and the measured value becomes
// a step time for the scatter. step_s and tokens_per_s_per_gpu are exact transformations
// (tokens/s/GPU = global_batch * seq / (T * gpus), the set's README §2); tflops_per_gpu needs the
// source's FLOP convention, and only conventions whose formula the row states are converted (the
// README: convert the prediction with the row's convention, never the published number with ours).
#pragma once

#include <optional>
#include <string>

#include "model/spec.h"
#include "sim/analysis/measured_open_reader.h"

namespace mofasim::analysis {

enum class FlopConvention {
  // InternLM's get_megatron_flops, as the row's flops_convention states it (HFU-style, non-causal):
  // f·((8 + 4·1.5·r)·B·s·h² + 4·B·s²·h)·L + 6·B·s·h·V per step, r the config's mlp_ratio (8/3
  // when ffn_hidden is InternLM's rounding of 8h/3 up to a multiple of 256, e.g. 11008 for
  // h = 4096; else ffn_hidden / hidden), f = 4 with activation checkpointing, 3 without; B
  // sequences per step. With it, O-ILM-33's derived step gives 193.4 TFLOPS/GPU; InternLM
  // published 193.
  kInternLmMegatron,
  // Narayanan et al. 2021 (the Megatron-LM PTD-P paper's formula), a GPT layer with full activation recompute,
  // attention counted non-causal: 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)) per step, whatever the run's
  // own recompute (the paper's "achieved teraFLOP/s" counts it for every run). Named by the text:
  // "Narayanan", "PTD-P" or the formula "96·B·s·L·h²".
  kNarayanan,
  // Korthikanti et al. 2022 model FLOPs (for MFU; no recompute, non-causal attention):
  // 72·B·s·L·h²·(1 + s/(6h) + V/(12·h·L)). Named by "Korthikanti" or "72·B·s·L·h²".
  kKorthikantiModel,
  // torchtitan's get_num_flop_per_token (PaLM's MFU count, Chowdhery et al. 2022 App. B):
  // 6·N + 12·L·H·Q·T per token, N the parameters without the token embedding (the output layer
  // counted), H heads of Q = hidden / heads, T = seq (attention counted non-causal). Dense
  // Llama-style rows only: N is counted from the row's columns (wq, wk, wv, wo, w1, w2, w3, two
  // norms a layer, the final norm and the output layer). Named by the text: "6*N" with
  // "12*L*H*Q*T" (·, * or nothing between the letters).
  kSixNPlusAttention,
};

// torchtitan's N (kSixNPlusAttention above) of a dense Llama-style row, or nothing when the row is
// MoE or lacks kv_heads / ffn_hidden, or hidden is not a multiple of heads.
std::optional<double> six_n_parameters(const OpenRun& run);

// The peak an mfu row divides by (FLOP/s per GPU): the one peak its flops_convention and notes
// state ("MFU vs 312 TF"), else the dense BF16 datasheet peak of the GPU the gpu column names, the
// peak the open set's README gives for MFU (A100 312, H100 / H200 / H800 989, B200 / B300 2250,
// GB200 / GB300 2500 TFLOPS; torchtitan quotes 989 for its 96 GB H100s too), twice that where
// the text says the FP8 peak. Nothing for a GPU without one.
std::optional<double> mfu_peak_flops(const OpenRun& run);

// The convention a flops_convention text names, when its formula is one we implement.
std::optional<FlopConvention> recognised_flop_convention(const std::string& text);

// FLOPs per optimizer step of `run` under `convention`; `recompute` says whether the run
// checkpoints activations (the InternLM factor f).
double convention_flops_per_step(const OpenRun& run, FlopConvention convention, model::RecomputeKind recompute);

// Why the row's quantity cannot be compared, or nothing when it can: a tflops_per_gpu or mfu row whose
// convention we do not implement (or a 6·N row we cannot count N for), an mfu row without a peak.
std::optional<std::string> quantity_not_comparable(const OpenRun& run);

// True for tokens/s, TFLOPS and MFU: a larger value is a faster run.
bool is_throughput(OpenQuantity q);

// The predicted step time `step_s` in the row's quantity. Needs quantity_not_comparable(run) empty.
double predicted_quantity(const OpenRun& run, double step_s, model::RecomputeKind recompute);

// The measured value as seconds per step (the inverse of predicted_quantity).
double measured_step_seconds(const OpenRun& run, model::RecomputeKind recompute);

}  // namespace mofasim::analysis
