// Speed of the analytic MoFa step model on LLaMA3-405B over 8192 GPUs (TP 8, PP 16, DP 64,
// interleaved v = 2, every overlap feature on), the two numbers the tuner depends on:
//   * BM_AnalyticTimeStep: re-timing a prepared layout (the calibration and rate-sweep hot path,
//     no allocation);
//   * BM_AnalyticPrepareAndEvaluate: one complete scenario evaluation, inputs → AnalyticResult
//     (validation, rank 0's groups and their α–β costs, op tables, memory report, timing). Nothing
//     is cached between iterations, so each is a new scenario. Target: ≥ 100,000/s on one core.
//   * BM_AnalyticPrepareAndEvaluateKernelModel: the same under compute_model kernel (same target).
// Where a complete evaluation's time goes (perf, Release, Nov 2026; ~9 us each): the memory report
// (model/memory.cc, stage parameters re-validated per layer) ~19%; placing rank 0's TP, PP and DP
// groups on compact clusters (topology: Topology, CommGroup, make_group_shape) ~15%; zeroing and
// copying the fixed-capacity 10 KB LayerOps tables and the 55 KB RankPlan ~10%; timing ~12%.
#include <benchmark/benchmark.h>

#include "model/analytic_model.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

AnalyticInput llama3_405b_8192() {
  ParallelSpec p = testing::parallel_spec(
      testing::Layout{.tp = 8, .pp = 16, .vpp = 2, .dp = 64, .global_batch = 2048, .sequence_parallel = true});
  p.schedule = ScheduleKind::kInterleaved1F1B;
  // 126 layers over 32 chunks: 3 on the first (embedding) and last (head) chunk, 4 elsewhere.
  p.stage_layers.assign(32, 4);
  p.stage_layers.front() = 3;
  p.stage_layers.back() = 3;
  AnalyticInput in{.model = testing::llama3_405b(),
                   .hardware = testing::round_gpu(),
                   .parallel = p,
                   .features = {},
                   .topology = topology::TopologySpec{.gpus = 8192,
                                                      .gpus_per_node = 8,
                                                      .intra_node = {.bandwidth = 370e9, .latency = 5e-6},
                                                      .inter_node = {.bandwidth = 46e9, .latency = 10e-6}}};
  const OverlapSpec on{.enabled = true, .alpha = 1.1, .beta = 1.2, .chunks = 4};
  in.features.tp_overlap = on;
  in.features.pp_overlap = on;
  in.features.dp_overlap = on;
  in.features.distributed_optimizer = true;
  in.features.recompute = RecomputeKind::kSelective;
  return in;
}

void BM_AnalyticTimeStep(benchmark::State& state) {
  const AnalyticModel model(llama3_405b_8192());
  RateKnobs knobs = model.rates();
  int i = 0;
  for (auto _ : state) {
    knobs.efficiency.gemm = 0.6 + 0.001 * (i++ % 100);
    benchmark::DoNotOptimize(model.time_step(knobs).step_time_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AnalyticTimeStep);

void BM_AnalyticPrepareAndEvaluate(benchmark::State& state) {
  const AnalyticInput in = llama3_405b_8192();
  for (auto _ : state) benchmark::DoNotOptimize(evaluate_mofa(in).timing.step_time_s);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AnalyticPrepareAndEvaluate);

// The same evaluation under compute_model kernel with the Transformer Engine kernel inventory
// (GEMM tiles and waves, attention curves, 3 more memory-bound kernels per layer).
void BM_AnalyticPrepareAndEvaluateKernelModel(benchmark::State& state) {
  AnalyticInput in = llama3_405b_8192();
  in.model.kernel_stack = KernelStack::kTransformerEngine;
  in.hardware.compute_model = ComputeModelKind::kKernel;
  in.hardware.kernels = {.family = GpuFamily::kHopper, .sm_count = 132, .gemm_tile_m = 128, .gemm_tile_n = 256,
                         .gemm_ceiling_bf16 = 794.5e12, .gemm_ceiling_fp8 = 1402.6e12, .hbm_fraction = 0.8,
                         .host_launch_seconds = 5e-6};
  for (auto _ : state) benchmark::DoNotOptimize(evaluate_mofa(in).timing.step_time_s);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AnalyticPrepareAndEvaluateKernelModel);

}  // namespace
}  // namespace mofasim::model

BENCHMARK_MAIN();
