// Step-simulation benchmark: LLaMA3-405B on 16,384 H100s (TP8, PP16, DP128, seq 8192, GBS 2048,
// m = 16), folded (one pipeline of 16 ranks) and full fidelity (every rank). Targets: folded
// < 1 s, full < 60 s and < 8 GB. Two workloads:
//   Shipped  scenarios/llama3-405b-h100-16384.yaml, loaded like `mofasim simulate` does
//            (interleaved 1F1B v = 2 with stage_layers, 8 supernodes of 256 nodes with 1:7
//            oversubscription, TP/PP/DP overlap);
//   1F1B     a hand-built plain 1F1B variant on a flat network (no overlap options).
// Reports events/s of the replay and the process's peak resident memory.
#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include <string>

#include "sim/scenario/scenario_specs.h"
#include "sim/executor/simulate_step.h"

namespace mofasim::executor {
namespace {

SimulationInput shipped_llama3_405b_16k() {
  const scenario::LoadedScenario loaded =
      cli::load_checked(std::string(MOFASIM_SOURCE_DIR) + "/scenarios/llama3-405b-h100-16384.yaml", {});
  return cli::simulation_input(loaded);
}

SimulationInput llama3_405b_16k_1f1b() {
  SimulationInput in;
  // LLaMA3.1-405B (reference-formulas.md §6).
  in.model = {.name = "llama3-405b", .num_layers = 126, .hidden_size = 16384, .num_attention_heads = 128,
              .num_kv_heads = 8, .head_dim = 128, .ffn_hidden_size = 53248, .vocab_size = 128256,
              .seq_length = 8192};
  // H100 SXM (reference-formulas.md §4.5).
  in.hardware = {.name = "h100", .peak_flops_bf16 = 989.4e12, .gpu_memory_bytes = 80e9, .hbm_bandwidth = 3.35e12,
                 .h2d_bandwidth = 50e9, .d2h_bandwidth = 50e9};
  // 126 layers over 16 stages: 7 on the first and last (they hold the embedding and the head), 8 elsewhere.
  std::vector<int> layers(16, 8);
  layers.front() = 7;
  layers.back() = 7;
  in.parallel = {.tp = 8, .pp = 16, .dp = 128, .micro_batch = 1, .global_batch = 2048, .sequence_parallel = true,
                 .schedule = model::ScheduleKind::k1F1B, .stage_layers = layers};
  in.features.distributed_optimizer = true;
  in.topology = {.gpus = 16384, .gpus_per_node = 8, .intra_node = {.bandwidth = 370e9, .latency = 2e-6},
                 .inter_node = {.bandwidth = 46e9, .latency = 5e-6}};
  return in;
}

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

void run(benchmark::State& state, const SimulationInput& in, Fidelity fidelity) {
  StepResult r;
  std::uint64_t events = 0;
  for (auto _ : state) {
    r = simulate_step(in, {.fidelity = fidelity});
    events += r.events;
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["instances_per_s"] =
      benchmark::Counter(static_cast<double>(r.instances) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["instances"] = static_cast<double>(r.instances);
  state.counters["step_s"] = r.step_time_s;
  state.counters["mfu"] = r.mfu;
  state.counters["peak_rss_GB"] = peak_rss_bytes() / 1e9;
}

void BM_Llama405b16kShippedFolded(benchmark::State& state) {
  run(state, shipped_llama3_405b_16k(), Fidelity::kFolded);
}
void BM_Llama405b16kShippedFull(benchmark::State& state) { run(state, shipped_llama3_405b_16k(), Fidelity::kFull); }
void BM_Llama405b16k1f1bFolded(benchmark::State& state) { run(state, llama3_405b_16k_1f1b(), Fidelity::kFolded); }
void BM_Llama405b16k1f1bFull(benchmark::State& state) { run(state, llama3_405b_16k_1f1b(), Fidelity::kFull); }

// Peak RSS is the process's: run one case per process (--benchmark_filter) to read it per case.
BENCHMARK(BM_Llama405b16kShippedFolded)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Llama405b16kShippedFull)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_Llama405b16k1f1bFolded)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Llama405b16k1f1bFull)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace mofasim::executor

BENCHMARK_MAIN();
