// The analytic MoFa model as the tuner's evaluator (see analytic_evaluator.h).
#include "sim/tuner/analytic_evaluator.h"

#include <memory>
#include <vector>

#include "model/memory.h"
#include "schedules/factory.h"

namespace mofasim::tuner {

StepEvaluation to_step_evaluation(const model::AnalyticResult& result) {
  const model::StepTiming& t = result.timing;
  return StepEvaluation{.step_time_s = t.step_time_s,
                        .breakdown = t.breakdown,
                        .tflops_per_gpu = t.tflops_per_gpu,
                        .mfu = t.mfu,
                        .peak_memory_bytes = result.memory.peak_bytes(),
                        .fits = result.fits};
}

MemoryVerdict analytic_memory(const TuneProblem& problem, const ConfigView& config) {
  const model::ParallelSpec& par = config.parallel;
  // NOTE: mirrors AnalyticModel's memory step (in-flight activations from the schedule; DualPipe's
  // second parameter copy is in the memory report already); analytic_tune_test checks the two agree.
  const std::vector<double> inflight = schedules::stage_inflight_microbatches(problem.model, par, config.features);
  // Cached: the candidates of a sweep share a few pipeline shapes and layer splits.
  const std::shared_ptr<const std::vector<model::RankOrder>> orders =
      schedules::shared_rank_orders(problem.model, par, config.features);
  const model::MemoryReport report =
      model::memory_report(problem.model, problem.hardware, par, config.features, inflight, *orders);
  double peak = 0;
  for (const model::StageMemory& s : report.stages) peak = std::max(peak, s.peak_bytes);
  return MemoryVerdict{.peak_memory_bytes = peak, .fits = peak <= problem.hardware.gpu_memory_bytes};
}

Evaluator analytic_evaluator(const TuneProblem& problem) {
  Evaluator ev;
  ev.memory = [problem](const ConfigView& config) { return analytic_memory(problem, config); };
  ev.step = [problem](const ConfigView& config) {
    const model::AnalyticInput input{.model = problem.model,
                                     .hardware = problem.hardware,
                                     .parallel = config.parallel,
                                     .features = config.features,
                                     .topology = problem.topology};
    return to_step_evaluation(model::evaluate_mofa(input));
  };
  return ev;
}

}  // namespace mofasim::tuner
