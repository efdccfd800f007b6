// Benchmark of the Monte Carlo injector: 100,000 trials of a 16,384-GPU job (2048 failure units
// of 8 GPUs) running about 54 days at about 8 failures per day (about 430 failures per trial),
// MoFa's 3:6:1 class mix, 30 s steps, checkpoints every 50 steps of 20 s; and 10,000 trials of it
// with fail-slow episodes.
#include <benchmark/benchmark.h>

#include "model/fault_spec.h"
#include "sim/fault/monte_carlo.h"

namespace {

void BM_MonteCarlo100kTrials(benchmark::State& state) {
  using namespace mofasim;
  // lambda = 8 / 2048 failures per unit per day -> 8 per day for the job. 155,000 steps of 30 s =
  // 53.8 days of useful time.
  const model::FaultSpec spec{.node_failure_rate_per_day = 8.0 / 2048, .failure_units = 2048,
                              .classes = model::mofa_default_failure_classes(),
                              .checkpoint = {.interval_steps = 50, .save_time_s = 20}};
  const model::RunSpec run{.step_time_s = 30, .n_steps = 155000};
  const auto threads = static_cast<int>(state.range(0));
  double failures = 0;
  for (auto _ : state) {
    const fault::MonteCarloResult r = fault::run_monte_carlo(spec, run, {.trials = 100000, .seed = 1, .threads = threads});
    failures = r.summary.mean_failures;
    benchmark::DoNotOptimize(r.summary.ettr.mean);
  }
  state.counters["trials_per_s"] = benchmark::Counter(100000.0 * static_cast<double>(state.iterations()),
                                                      benchmark::Counter::kIsRate);
  state.counters["failures_per_trial"] = failures;
}
BENCHMARK(BM_MonteCarlo100kTrials)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same job with fail-slow episodes: 0.002 per node per day (about 4 a day), 2 h exponential
// lengths, 16 position classes of 1.02x to 1.25x (the per-stage factors ettr prices for one slow
// node of llama3-405b-h100-16384), ridden out. 10,000 trials: the size of the docs' study.
void BM_MonteCarloFailSlow10kTrials(benchmark::State& state) {
  using namespace mofasim;
  model::FaultSpec spec{.node_failure_rate_per_day = 8.0 / 2048, .failure_units = 2048,
                        .classes = model::mofa_default_failure_classes(),
                        .checkpoint = {.interval_steps = 50, .save_time_s = 20}};
  spec.fail_slow.rate_per_unit_per_day = 0.002;
  spec.fail_slow.units = 2048;
  spec.fail_slow.duration.kind = model::RecoveryKind::kExponential;
  spec.fail_slow.duration.mean_s = 7200;
  spec.fail_slow.slow_step_factor = {1.02, 1.12, 1.12, 1.12, 1.12, 1.12, 1.12, 1.12,
                                     1.13, 1.14, 1.17, 1.19, 1.21, 1.23, 1.25, 1.22};
  const model::RunSpec run{.step_time_s = 30, .n_steps = 155000};
  const auto threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const fault::MonteCarloResult r = fault::run_monte_carlo(spec, run, {.trials = 10000, .seed = 1, .threads = threads});
    benchmark::DoNotOptimize(r.summary.ettr.mean);
  }
  state.counters["trials_per_s"] = benchmark::Counter(10000.0 * static_cast<double>(state.iterations()),
                                                      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MonteCarloFailSlow10kTrials)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
