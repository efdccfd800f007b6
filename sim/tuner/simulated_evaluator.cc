// Step simulation as the re-ranking function (see simulated_evaluator.h).
#include "sim/tuner/simulated_evaluator.h"

#include <algorithm>

namespace mofasim::tuner {

StepEvaluation to_step_evaluation(const executor::StepResult& r) {
  const executor::Breakdown& b = r.breakdown;
  const bool fits = std::all_of(r.memory.begin(), r.memory.end(), [](const executor::StageMemory& s) { return s.fits(); });
  return StepEvaluation{.step_time_s = r.step_time_s,
                        .breakdown = StepBreakdown{.compute = b.compute + b.recompute + b.offload,
                                                   .tp_exposed = b.tp,
                                                   .cp_exposed = b.cp,
                                                   .ep_exposed = b.ep,
                                                   .pp_bubble = b.pp_bubble,
                                                   .pp_exposed = b.pp_comm,
                                                   .dp_exposed = b.dp,
                                                   .optimizer = b.optimizer},
                        .tflops_per_gpu = r.tflops_per_gpu,
                        .mfu = r.mfu,
                        .peak_memory_bytes = r.peak_memory_bytes,
                        .fits = fits};
}

StepFn simulated_step(const TuneProblem& problem, executor::Fidelity fidelity) {
  return [problem, fidelity](const ConfigView& config) {
    const executor::SimulationInput input{.model = problem.model,
                                          .hardware = problem.hardware,
                                          .parallel = config.parallel,
                                          .features = config.features,
                                          .topology = problem.topology};
    return to_step_evaluation(executor::simulate_step(input, executor::SimulateOptions{.fidelity = fidelity}));
  };
}

}  // namespace mofasim::tuner
