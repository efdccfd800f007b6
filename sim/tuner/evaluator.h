// The tuner's view of a cost model: a memory check and a step evaluation per configuration,
// passed in as callbacks so the search runs on the analytic MoFa model (analytic_evaluator.h),
// on the step simulation (for re-ranking), or on a synthetic model in tests. Both callbacks must
// be pure functions of their argument (the search may call them in any order, from several
// threads when TuneOptions asks for them).
#pragma once

#include <functional>

#include "model/analytic_model.h"
#include "model/spec.h"
#include "sim/tuner/search_space.h"

namespace mofasim::tuner {

// The key stages of MoFa Table 6, in seconds per step: the analytic model's breakdown; the step
// simulation's categories are mapped onto it (simulated_evaluator.cc).
using StepBreakdown = model::StepBreakdown;

struct StepEvaluation {
  double step_time_s = 0;
  StepBreakdown breakdown;
  double tflops_per_gpu = 0;
  double mfu = 0;
  double peak_memory_bytes = 0;  // worst stage
  bool fits = true;              // peak within the GPU's capacity
};

struct MemoryVerdict {
  double peak_memory_bytes = 0;
  bool fits = true;
};

// One configuration, already converted to the runtime specs (no allocation per call).
struct ConfigView {
  const Candidate& candidate;
  const model::ParallelSpec& parallel;
  const model::FeatureSpec& features;
};

using MemoryFn = std::function<MemoryVerdict(const ConfigView&)>;
using StepFn = std::function<StepEvaluation(const ConfigView&)>;

struct Evaluator {
  // Optional. When set, it is asked once per (layout, optimizer, recompute, offload) before any
  // step evaluation: out-of-memory configurations are then never evaluated, and the
  // memory-saver rule can compare variants. It must agree with step()'s `fits`.
  MemoryFn memory;
  StepFn step;  // required
};

}  // namespace mofasim::tuner
