// Small fixtures for the executor tests: a uniform StepPlan with closed-form costs (one compute
// op per pass, no communication), a one-node topology with free links, and a tiny real model.
#pragma once

#include <vector>

#include "model/spec.h"
#include "sim/executor/simulate_step.h"
#include "sim/executor/step_plan.h"
#include "topology/topology_spec.h"

namespace mofasim::executor::testing {

// `layers` layers; every layer: F = f s, B-input = bi s, W = w s on one compute op each, stored
// activation `act` bytes; no communication, no optimizer, no DP gradients.
inline StepPlan uniform_plan(int layers, int stages, double f, double bi, double w, double act = 0) {
  StepPlan plan;
  for (int l = 0; l < layers; ++l) {
    LayerPlan lp;
    lp.forward.ops.push_back({.name = "fwd", .seconds = f});
    lp.input_grad.ops.push_back({.name = "bwd_input", .seconds = bi});
    lp.weight_grad.ops.push_back({.name = "bwd_weight", .seconds = w});
    lp.activation_bytes = lp.activation_bytes_selective = lp.activation_bytes_full = act;
    plan.layers.push_back(lp);
  }
  plan.stages.resize(static_cast<std::size_t>(stages));
  return plan;
}

// One node holding every GPU, links so fast and latency-free that communication is free.
inline topology::TopologySpec free_topology(int gpus) {
  return {.gpus = gpus, .gpus_per_node = gpus, .intra_node = {.bandwidth = 1e18, .latency = 0},
          .inter_node = {.bandwidth = 1e18, .latency = 0}};
}

// A 4-layer GQA model small enough to simulate at full fidelity in a test.
inline model::ModelSpec tiny_model() {
  return {.name = "tiny", .num_layers = 4, .hidden_size = 512, .num_attention_heads = 8, .num_kv_heads = 4,
          .head_dim = 64, .ffn_hidden_size = 1536, .vocab_size = 8192, .seq_length = 1024};
}

inline model::HardwareSpec tiny_gpu() {
  return {.name = "test-gpu", .peak_flops_bf16 = 400e12, .gpu_memory_bytes = 80e9, .hbm_bandwidth = 2e12,
          .h2d_bandwidth = 25e9, .d2h_bandwidth = 25e9, .cpu_optimizer_params_per_second = 2e9};
}

}  // namespace mofasim::executor::testing
