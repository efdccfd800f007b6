// Speed of the tuner: the whole default search space for LLaMA3-405B on 8,192 H100-class GPUs
// with global batch 2,048 (target: < 1 s on one core), ranked by the analytic MoFa model, and the
// enumeration alone (every layout and feature verdict, no cost model).
#include <benchmark/benchmark.h>

#include "test/model/model_presets_for_test.h"
#include "sim/tuner/analytic_evaluator.h"
#include "sim/tuner/tune.h"

namespace mofasim::tuner {
namespace {

TuneProblem llama3_405b_8192() {
  TuneProblem p;
  p.model = model::testing::llama3_405b();  // scenarios/presets/models/llama3-405b.yaml
  model::HardwareSpec& h = p.hardware;  // scenarios/presets/hardware/h100-sxm.yaml
  h.name = "h100";
  h.peak_flops_bf16 = 989.4e12;
  h.gpu_memory_bytes = 80.0 * (1ULL << 30);
  h.hbm_bandwidth = 3.35e12;
  h.h2d_bandwidth = 50e9;
  h.d2h_bandwidth = 50e9;
  h.host_memory_bytes = 2048.0 * (1ULL << 30);
  h.cpu_optimizer_params_per_second = 1.5e9;
  p.topology.gpus = 8192;
  p.topology.gpus_per_node = 8;
  p.topology.intra_node = {.bandwidth = 370e9, .latency = 2e-6};  // scenarios/llama3-405b-h100-16384.yaml
  p.topology.inter_node = {.bandwidth = 46e9, .latency = 5e-6};
  p.global_batch = 2048;
  return p;
}

void BM_Tune405b8192Analytic(benchmark::State& state) {
  const TuneProblem problem = llama3_405b_8192();
  const Evaluator ev = analytic_evaluator(problem);
  TuneOptions options;
  options.threads = static_cast<int>(state.range(0));
  TuneStats stats;
  for (auto _ : state) {
    const TuneResult r = tune(problem, options, ev);
    stats = r.stats;
    benchmark::DoNotOptimize(r.ranking.data());
  }
  state.counters["raw_configs"] = static_cast<double>(stats.raw_configs);
  state.counters["memory_checks"] = static_cast<double>(stats.memory_checks);
  state.counters["memory_pruned"] = static_cast<double>(stats.memory_pruned);
  state.counters["evaluated"] = static_cast<double>(stats.evaluated);
  state.counters["feasible"] = static_cast<double>(stats.feasible);
  state.counters["evals_per_s"] =
      benchmark::Counter(static_cast<double>(stats.evaluated), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Tune405b8192Analytic)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Enumerate405b8192(benchmark::State& state) {
  const TuneProblem problem = llama3_405b_8192();
  Evaluator ev;  // no memory check, a free step: the cost of enumeration and bookkeeping alone
  ev.step = [](const ConfigView&) {
    StepEvaluation e;
    e.step_time_s = 1.0;
    return e;
  };
  TuneOptions options;
  TuneStats stats;
  for (auto _ : state) {
    const TuneResult r = tune(problem, options, ev);
    stats = r.stats;
    benchmark::DoNotOptimize(r.ranking.data());
  }
  state.counters["raw_layouts"] = static_cast<double>(stats.raw_layouts);
  state.counters["evaluated"] = static_cast<double>(stats.evaluated);
}
BENCHMARK(BM_Enumerate405b8192)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mofasim::tuner

BENCHMARK_MAIN();
