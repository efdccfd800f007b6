// Trace benchmark: scenarios/llama3-405b-h100-2048.yaml at global_batch 2048 (folded, 16 stages, 3.0 M spans) simulated
// without a trace and with the full Perfetto trace (--trace FILE.pftrace). Target: the traced run
// takes at most 2x the plain one, and the process stays under 2 GB. Reports the trace's size and
// the process's peak resident memory; run one case per process (--benchmark_filter) to read the
// memory per case.
#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "sim/scenario/scenario_specs.h"
#include "sim/executor/simulate_step.h"

namespace mofasim::executor {
namespace {

SimulationInput shipped_llama3_405b_2048() {
  const scenario::LoadedScenario loaded =
      cli::load_checked(std::string(MOFASIM_SOURCE_DIR) + "/scenarios/llama3-405b-h100-2048.yaml",
                        {"parallelism.global_batch=2048"});  // the 128-micro-batch step this benchmark measures
  return cli::simulation_input(loaded);
}

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

void BM_Llama405b2048Plain(benchmark::State& state) {
  const SimulationInput in = shipped_llama3_405b_2048();
  for (auto _ : state) benchmark::DoNotOptimize(simulate_step(in, {}));
  state.counters["peak_rss_GB"] = peak_rss_bytes() / 1e9;
}

void BM_Llama405b2048PerfettoTrace(benchmark::State& state) {
  const SimulationInput in = shipped_llama3_405b_2048();
  const std::string path = (std::filesystem::temp_directory_path() / "mofasim_trace_benchmark.pftrace").string();
  for (auto _ : state) benchmark::DoNotOptimize(simulate_step(in, {.trace_path = path}));
  state.counters["trace_MB"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  state.counters["peak_rss_GB"] = peak_rss_bytes() / 1e9;
  std::remove(path.c_str());
}

BENCHMARK(BM_Llama405b2048Plain)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_Llama405b2048PerfettoTrace)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace
}  // namespace mofasim::executor

BENCHMARK_MAIN();
