// Row -> sealed specs under a campaign's fixed conditions (see measured_specs.h for the readings).
#include "sim/analysis/measured_specs.h"

#include <algorithm>
#include <stdexcept>

#include "model/shape.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/to_spec.h"

namespace mofasim::analysis {
namespace {

// Effectively "one bucket holds every gradient": no bucketing, as in the measured runs.
constexpr double kOneBucketBytes = 1e18;

}  // namespace

model::HardwareSpec hardware_from_preset(const std::string& preset) {
  // The smallest complete scenario around the preset; only its hardware section is used.
  const std::string text =
      "name: hardware-preset\n"
      "model: {preset: gpt3-175b}\n"
      "hardware: {preset: " + preset + "}\n"
      "topology:\n"
      "  gpus: 8\n"
      "  gpus_per_node: 8\n"
      "  intra_node: {bandwidth: \"150 GB/s\"}\n"
      "  inter_node: {bandwidth: \"12.5 GB/s\"}\n"
      "parallelism: {tp: 8, global_batch: 8}\n";
  return scenario::load_scenario_from_string(text, "hardware preset " + preset).hardware;
}

MeasuredConditions vtrain_a100_conditions(const model::HardwareSpec& hardware) {
  model::HardwareSpec device = hardware;
  device.compute_model = model::ComputeModelKind::kRoofline;
  // The optimizer step streams its bytes at 0.91 of HBM peak: the A100's generic memory-bound op
  // class (kernels/hbm.csv: SimuMax a100_pcie.json 'default', 1,456 of 1,600 GB/s).
  // The fitted efficiency.memory (0.66) stands for a layer's short elementwise ops.
  device.efficiency.optimizer_memory = 0.91;
  return MeasuredConditions{
      .hardware = device,
      .gpus_per_node = 8,
      .intra_node = {.bandwidth = 150e9, .latency = 2e-6},
      .inter_node_bandwidth_per_node = 800e9 / 8,  // 800 Gb/s = 100 GB/s per node
      .inter_node_latency = 5e-6,
      .vocab_size = 50257,
      .vocab_divisible_by = 128,
      .ffn_multiplier = 4,
  };
}

int padded_vocab(int vocab, int divisible_by, int tp) {
  if (vocab < 1) throw std::invalid_argument("vocab_size: must be >= 1, got " + std::to_string(vocab));
  if (divisible_by < 1 || tp < 1) {
    throw std::invalid_argument("vocab padding: divisible_by and tp must be >= 1, got " +
                                std::to_string(divisible_by) + " and " + std::to_string(tp));
  }
  const long long multiple = static_cast<long long>(divisible_by) * tp;
  return static_cast<int>((vocab + multiple - 1) / multiple * multiple);
}

MeasuredCase to_measured_case(const MeasuredRow& row, const MeasuredConditions& conditions) {
  const std::string where = row.source + ":" + std::to_string(row.line) + ": ";
  if (conditions.gpus_per_node < 1) {
    throw std::invalid_argument("conditions.gpus_per_node: must be >= 1, got " +
                                std::to_string(conditions.gpus_per_node));
  }
  if (row.hidden_size % row.attention_heads != 0) {
    throw std::invalid_argument(where + "hidden size " + std::to_string(row.hidden_size) +
                                " is not a multiple of the attention heads " + std::to_string(row.attention_heads));
  }
  MeasuredCase c;
  c.model = model::ModelSpec{
      .name = "gpt-h" + std::to_string(row.hidden_size) + "-l" + std::to_string(row.layers),
      .num_layers = row.layers,
      .hidden_size = row.hidden_size,
      .num_attention_heads = row.attention_heads,
      .num_kv_heads = row.attention_heads,
      .head_dim = row.hidden_size / row.attention_heads,
      .ffn_hidden_size = conditions.ffn_multiplier * row.hidden_size,
      .vocab_size = padded_vocab(conditions.vocab_size, conditions.vocab_divisible_by, row.tp),
      .seq_length = row.seq_length,
      .attention = model::AttentionKind::kMha,
      .mlp = model::MlpKind::kGelu,
      .norm = model::NormKind::kLayerNorm,
      .position = model::PositionKind::kLearned,
      .untie_embeddings = false,
      .linear_bias = true,
      .attention_impl = conditions.attention_impl,
      .attention_dropout = conditions.attention_dropout,
  };
  c.hardware = conditions.hardware;
  c.parallel = model::ParallelSpec{
      .tp = row.tp,
      .pp = row.pp,
      .dp = row.dp,
      .micro_batch = row.micro_batch,
      .global_batch = row.global_batch,
      .sequence_parallel = false,
      .schedule = model::ScheduleKind::k1F1B,
  };
  c.features = model::FeatureSpec{
      .distributed_optimizer = false,
      .param_dtype = conditions.precision,
      .grad_dtype = conditions.precision,
      .compute_dtype = conditions.precision,
      .recompute = model::RecomputeKind::kFull,
      .dp_bucket_bytes = kOneBucketBytes,
  };
  const int per_node = std::min(conditions.gpus_per_node, row.gpus);
  c.topology = topology::TopologySpec{
      .gpus = row.gpus,
      .gpus_per_node = per_node,
      .intra_node = conditions.intra_node,
      .inter_node = {.bandwidth = conditions.inter_node_bandwidth_per_node / conditions.gpus_per_node,
                     .latency = conditions.inter_node_latency},
      .bandwidth_scale = conditions.bandwidth_scale,
      .collectives = scenario::to_collective_tuning(c.hardware),
  };
  try {
    model::validate_model(c.model);
    model::validate_parallel(c.model, c.parallel);
    c.topology.validate();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + e.what());
  }
  return c;
}

}  // namespace mofasim::analysis
