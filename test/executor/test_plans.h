// Small fixtures for the executor tests: a uniform StepPlan with closed-form costs (one compute
// op per pass, no communication), a one-node topology with free links, and a tiny real model.
#pragma once

#include <vector>

#include "model/spec.h"
#include "sim/executor/generate.h"
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

// One layer, F = 1 ms, B = 2 ms, `grad_bytes` of gradients (one bucket): the DP tests' plan.
inline StepPlan one_layer_dp_plan(double grad_bytes) {
  StepPlan plan = uniform_plan(1, 1, 1e-3, 2e-3, 0);
  plan.layers[0].dense_grad_bytes = grad_bytes;
  return plan;
}
// ZeRO-1 (the distributed optimizer over DP), Megatron's all-gather sync unless told otherwise.
inline model::FeatureSpec zero_one(model::DpParamSync sync = model::DpParamSync::kAllGather, int instances = 1) {
  model::FeatureSpec f;
  f.distributed_optimizer = true;
  f.dp_sharding = model::DpSharding::kOptim;
  f.param_sync = sync;
  f.dist_opt_instances = instances;
  return f;
}

// One pipeline stage of one layer, one micro-batch, over dp data-parallel ranks (global batch dp):
// the DAG input and the simulation input of the DP tests (HSDP, ZeRO broadcast sync).
inline GenerateInput one_layer_dp_input(const StepPlan& plan, const schedules::Schedule& sched, int dp,
                                        const model::FeatureSpec& features) {
  GenerateInput in;
  in.schedule = &sched;
  in.plan = &plan;
  in.parallel.dp = dp;
  in.parallel.global_batch = dp;
  in.features = features;
  in.position_layers = {{0, 1}};
  return in;
}
// On 8 GPUs as 2 nodes of 4 (a NIC each at 1 GB/s, NVLink 100 GB/s, no latency).
inline PlanSimulation one_layer_dp_simulation(const StepPlan& plan, const schedules::Schedule& sched,
                                              const model::FeatureSpec& features) {
  PlanSimulation sim;
  sim.plan = &plan;
  sim.schedule = &sched;
  sim.position_layers = {{0, 1}};
  sim.parallel.dp = 8;
  sim.parallel.global_batch = 8;
  sim.features = features;
  sim.topology = {.gpus = 8, .gpus_per_node = 4, .intra_node = {.bandwidth = 100e9, .latency = 0},
                  .inter_node = {.bandwidth = 1e9, .latency = 0}};
  return sim;
}
// The step time of `sim` replayed folded and at full fidelity.
struct FoldedAndFull {
  double folded = 0;
  double full = 0;
};
inline FoldedAndFull folded_and_full_step(const PlanSimulation& sim) {
  return {.folded = simulate_plan(sim, SimulateOptions{.fidelity = Fidelity::kFolded}).step_time_s,
          .full = simulate_plan(sim, SimulateOptions{.fidelity = Fidelity::kFull}).step_time_s};
}

}  // namespace mofasim::executor::testing
