// Speed of the calls the analytic model makes per scenario: one layer's op table, its compute
// time, the FLOPs per token and the full per-stage memory report.
#include <benchmark/benchmark.h>

#include "model/compute_time.h"
#include "model/flops.h"
#include "model/memory.h"
#include "model/op_table.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

ParallelSpec dsv3_layout() {
  return testing::parallel_spec({.tp = 1, .cp = 1, .pp = 16, .vpp = 1, .dp = 128, .ep = 64, .etp = 1,
                                 .micro_batch = 1, .global_batch = 15360},
                                {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3});
}

void BM_OpsForMoeLayer(benchmark::State& state) {
  const ModelSpec m = testing::deepseek_v3();
  const ParallelSpec par = dsv3_layout();
  for (auto _ : state) benchmark::DoNotOptimize(ops_for_layer(m, par, 10));
}
BENCHMARK(BM_OpsForMoeLayer);

void BM_LayerComputeSeconds(benchmark::State& state) {
  const ModelSpec m = testing::deepseek_v3();
  const LayerOps ops = ops_for_layer(m, dsv3_layout(), 10);
  const HardwareSpec hw = testing::round_gpu();
  const FeatureSpec f;
  for (auto _ : state) benchmark::DoNotOptimize(layer_compute_seconds(ops, hw, f));
}
BENCHMARK(BM_LayerComputeSeconds);

void BM_ModelFlopsPerToken(benchmark::State& state) {
  const ModelSpec m = testing::deepseek_v3();
  for (auto _ : state) benchmark::DoNotOptimize(model_flops_per_token(m));
}
BENCHMARK(BM_ModelFlopsPerToken);

void BM_MemoryReport(benchmark::State& state) {
  const ModelSpec m = testing::deepseek_v3();
  const ParallelSpec par = dsv3_layout();
  const std::vector<double> inflight = one_f_one_b_inflight(par);
  const HardwareSpec hw = testing::round_gpu();
  FeatureSpec f;
  f.distributed_optimizer = true;
  for (auto _ : state) benchmark::DoNotOptimize(memory_report(m, hw, par, f, inflight));
}
BENCHMARK(BM_MemoryReport);

}  // namespace
}  // namespace mofasim::model

BENCHMARK_MAIN();
