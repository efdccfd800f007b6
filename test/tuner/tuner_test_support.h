// Shared fixtures of the tuner tests: the tiny-llama problem on a few GPUs, and a synthetic cost
// model simple enough to reason about by hand (the tuner's logic is tested against it; the
// analytic MoFa model is plugged in by analytic_tune_test.cc).
#pragma once

#include <algorithm>

#include "model/spec.h"
#include "sim/tuner/evaluator.h"
#include "sim/tuner/search_space.h"

namespace mofasim::tuner::testing {

// tiny-llama (scenarios/presets/models/tiny-llama.yaml): 4 layers, h 256, 8 heads, 4 KV heads.
inline model::ModelSpec tiny_llama() {
  model::ModelSpec m;
  m.name = "tiny-llama";
  m.num_layers = 4;
  m.hidden_size = 256;
  m.num_attention_heads = 8;
  m.num_kv_heads = 4;
  m.head_dim = 32;
  m.ffn_hidden_size = 688;
  m.vocab_size = 1024;
  m.seq_length = 256;
  return m;
}

inline TuneProblem tiny_problem(int gpus, int gpus_per_node, int global_batch) {
  TuneProblem p;
  p.model = tiny_llama();
  p.hardware.name = "test-gpu";
  p.hardware.peak_flops_bf16 = 100e12;
  p.hardware.gpu_memory_bytes = 16e9;
  p.hardware.hbm_bandwidth = 1e12;
  p.hardware.h2d_bandwidth = 20e9;
  p.hardware.d2h_bandwidth = 20e9;
  p.hardware.cpu_optimizer_params_per_second = 1e9;
  p.topology.gpus = gpus;
  p.topology.gpus_per_node = gpus_per_node;
  p.topology.intra_node = {.bandwidth = 100e9, .latency = 2e-6};
  p.topology.inter_node = {.bandwidth = 10e9, .latency = 5e-6};
  p.global_batch = global_batch;
  return p;
}

// A synthetic step model (seconds), monotone in the ways the pruning rules assume: an overlap
// hides part of its communication, recompute and offload only add time. 1000 s of work split
// over all GPUs; TP/PP/DP communication grows with the group size; the 1F1B bubble is
// (p - 1)/(m·v) of the compute.
inline StepEvaluation synthetic_step(const ConfigView& v) {
  const Layout& l = v.candidate.layout;
  const FeatureChoice& f = v.candidate.features;
  const int gpus = l.tp * l.cp * l.pp * l.dp;
  const int m = v.parallel.microbatches();
  double compute = 1000.0 / gpus;
  if (f.recompute == model::RecomputeKind::kSelective) compute *= 1.1;
  if (f.recompute == model::RecomputeKind::kFull) compute *= 1.33;
  if (f.activation_offload) compute *= 1.05;
  StepEvaluation e;
  e.breakdown.compute = compute;
  e.breakdown.tp_exposed = (l.tp - 1) * 2.0 * (f.tp_overlap ? 0.25 : 1.0);
  e.breakdown.pp_bubble = compute * (l.pp - 1) / (m * l.vpp);
  e.breakdown.pp_exposed = (l.pp - 1) * 0.5 * l.vpp * (f.pp_overlap ? 0.5 : 1.0);
  e.breakdown.dp_exposed = (l.dp * l.cp - 1) * 1.5 * (f.dp_overlap ? 0.5 : 1.0) / l.micro_batch;
  e.breakdown.optimizer = f.optimizer == OptimizerMode::kCpu ? 3.0 : (f.optimizer == OptimizerMode::kDistributed ? 0.5 : 1.0);
  const StepBreakdown& b = e.breakdown;
  e.step_time_s = b.compute + b.tp_exposed + b.pp_bubble + b.pp_exposed + b.dp_exposed + b.optimizer;
  e.tflops_per_gpu = 1000.0 / e.step_time_s;
  e.peak_memory_bytes = 0;
  return e;
}

// Synthetic memory (GB): 24 GB of weights and optimizer split over t·p (optimizer state 3/4 of it,
// sharded over d by the distributed optimizer, gone with the CPU optimizer), activations 4 GB per
// micro-batch in flight, halved by selective recompute, / 4 by full recompute, / 2 by offload.
inline MemoryVerdict synthetic_memory(const ConfigView& v, double capacity_gb) {
  const Layout& l = v.candidate.layout;
  const FeatureChoice& f = v.candidate.features;
  const double model_gb = 24.0 / (l.tp * l.pp);
  double opt = 0.75 * model_gb;
  if (f.optimizer == OptimizerMode::kDistributed) opt /= l.dp;
  if (f.optimizer == OptimizerMode::kCpu) opt = 0;
  double act = 4.0 * l.micro_batch * std::min(l.pp, v.parallel.microbatches()) / (l.tp * l.pp);
  if (f.recompute == model::RecomputeKind::kSelective) act /= 2;
  if (f.recompute == model::RecomputeKind::kFull) act /= 4;
  if (f.activation_offload) act /= 2;
  const double peak = 0.25 * model_gb + opt + act;
  return MemoryVerdict{.peak_memory_bytes = peak * 1e9, .fits = peak <= capacity_gb};
}

inline Evaluator synthetic_evaluator(double capacity_gb) {
  Evaluator ev;
  ev.memory = [capacity_gb](const ConfigView& v) { return synthetic_memory(v, capacity_gb); };
  ev.step = [capacity_gb](const ConfigView& v) {
    StepEvaluation e = synthetic_step(v);
    const MemoryVerdict m = synthetic_memory(v, capacity_gb);
    e.peak_memory_bytes = m.peak_memory_bytes;
    e.fits = m.fits;
    return e;
  };
  return ev;
}

}  // namespace mofasim::tuner::testing
