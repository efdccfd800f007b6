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
};

// The convention a flops_convention text names, when its formula is one we implement.
std::optional<FlopConvention> recognised_flop_convention(const std::string& text);

// FLOPs per optimizer step of `run` under `convention`; `recompute` says whether the run
// checkpoints activations (the InternLM factor f).
double convention_flops_per_step(const OpenRun& run, FlopConvention convention, model::RecomputeKind recompute);

// Why the row's quantity cannot be compared, or nothing when it can: an mfu row (the CSV names no
// peak), a tflops_per_gpu row whose convention we do not implement.
std::optional<std::string> quantity_not_comparable(const OpenRun& run);

// True for tokens/s, TFLOPS and MFU: a larger value is a faster run.
bool is_throughput(OpenQuantity q);

// The predicted step time `step_s` in the row's quantity. Needs quantity_not_comparable(run) empty.
double predicted_quantity(const OpenRun& run, double step_s, model::RecomputeKind recompute);

// The measured value as seconds per step (the inverse of predicted_quantity).
double measured_step_seconds(const OpenRun& run, model::RecomputeKind recompute);

}  // namespace mofasim::analysis
