// From a measured row to the sealed specs the step models consume: the fixed conditions of a
// measurement campaign (device, network, architecture family, training features) plus the row's
// shape and layout. The default conditions are those of vTrain's public A100 measurements
// (VIA-Research/vTrain, MICRO 2024; its validation configs): NVIDIA A100, 8 GPUs per node,
// 150 GB/s intra-node, 800 Gb/s inter-node per node, Megatron-DeepSpeed GPT (learned positions,
// MHA, 4h GeLU MLP, LayerNorm, biases, tied embeddings, GPT-2 vocabulary of 50,257 padded as
// Megatron pads it), full activation recompute, 1F1B, no sequence parallelism, no distributed
// optimizer, one gradient all-reduce after the backward (no bucketing, no overlap), and the
// non-flash (unfused) attention of Megatron-LM with attention dropout.
#pragma once

#include <string>

#include "model/spec.h"
#include "sim/analysis/measured_reader.h"
#include "topology/topology_spec.h"

namespace mofasim::analysis {

// The conditions every row of a measurement campaign shares.
struct MeasuredConditions {
  model::HardwareSpec hardware;           // the device (efficiencies included)
  int gpus_per_node = 8;
  topology::LinkSpec intra_node{};        // per GPU, one direction (bus bandwidth)
  double inter_node_bandwidth_per_node = 0;  // bytes/s a whole node gets across its NICs
  double inter_node_latency = 0;          // seconds per algorithm step
  int vocab_size = 50257;                 // before padding
  int vocab_divisible_by = 128;           // Megatron's --make-vocab-size-divisible-by (times tp)
  int ffn_multiplier = 4;                 // f = ffn_multiplier * h
  // Megatron-DeepSpeed's GPT of these runs predates flash attention: CoreAttention's unfused path
  // (baddbmm / fused scale-mask-softmax / dropout / bmm), with Megatron-LM's default
  // --attention-dropout 0.1.
  model::AttentionImpl attention_impl = model::AttentionImpl::kUnfused;
  double attention_dropout = 0.1;
  // Megatron-DeepSpeed's --fp16 (the runs predate bf16 training on A100 in Megatron-DeepSpeed's
  // examples; vTrain's own predictor sizes parameters and gradients at 2 bytes, src/predictor.py
  // ParamInfo): fp16 weights, compute and gradients, so the DP all-reduce moves 2 bytes per
  // parameter. The measurements rule out fp32 gradients on their own: the dp-2 all-reduce of the
  // 1.31B-parameter model (h 2048, 24 layers, tp 1) adds 13 ms to the step intercept (dp-1 rows:
  // 26 ms, extrapolated from tp 2/4/8; dp-2: 40 ms), i.e. 2.6 GB / 13 ms = 200 GB/s with fp16
  // gradients but 400 GB/s with fp32, above the A100's 300 GB/s of NVLink per direction.
  model::DType precision = model::DType::kFp16;
  double bandwidth_scale = 1.0;           // μ_b of every link level (TopologySpec::bandwidth_scale)
};

// The hardware preset `preset` (a name under scenarios/presets/hardware/), loaded through the
// scenario loader so the preset files stay the single source of device numbers. Throws
// scenario::ScenarioError when the preset is unknown.
model::HardwareSpec hardware_from_preset(const std::string& preset);

// vTrain's conditions on `hardware` (usually hardware_from_preset("a100-80gb") or a calibrated copy):
// 8 GPUs per node; intra-node 150 GB/s per GPU, 2 us per step (latency: an assumption, NVLink-class);
// inter-node 800 Gb/s = 100 GB/s per node, i.e. 12.5 GB/s per GPU with one NIC per GPU, 5 us per
// step (latency: an assumption, InfiniBand-class). The device is timed with the roofline model
// (MoFa(19)): the unfused attention's batched GEMMs stream the s x s scores and are memory-bound
// on an A100 (head dim 64-128 FLOP per score byte, below its 312e12 / 2.04e12 = 153 FLOP/byte ridge).
MeasuredConditions vtrain_a100_conditions(const model::HardwareSpec& hardware);

// Megatron's padded vocabulary: the smallest multiple of divisible_by * tp that is >= vocab
// (50,257 -> 50,304 at tp 1, 50,432 at tp 2, 50,688 at tp 4, 51,200 at tp 8).
int padded_vocab(int vocab, int divisible_by, int tp);

// Everything one step prediction needs for one row.
struct MeasuredCase {
  model::ModelSpec model;
  model::HardwareSpec hardware;
  model::ParallelSpec parallel;
  model::FeatureSpec features;
  topology::TopologySpec topology;
};

// The row's model, layout and cluster under `conditions`. Throws std::invalid_argument naming the
// row (file:line) when the shape does not fit the model (e.g. heads not divisible by tp).
MeasuredCase to_measured_case(const MeasuredRow& row, const MeasuredConditions& conditions);

}  // namespace mofasim::analysis
