// Optimal checkpoint interval, ETTR and total time of one configuration (see e2e.h).
#include "sim/tuner/e2e.h"

#include "model/fault_analytic.h"

namespace mofasim::tuner {

// MoFa(43) for one configuration: T_total at the optimal interval of MoFa(44).
E2EEstimate estimate_e2e(const E2ESettings& settings, const Layout& layout, double step_time_s,
                         const topology::TopologySpec& topology) {
  model::FaultSpec fault = settings.fault;
  if (fault.failure_units == 0) fault.failure_units = topology.gpus / topology.gpus_per_node;  // MoFa(38) N_nodes
  if (settings.save_time_s) fault.checkpoint.save_time_s = settings.save_time_s(layout);
  // optimal_interval() validates the spec (interval >= 1) but chooses the interval itself (MoFa(44)).
  fault.checkpoint.interval_steps = 1;
  const model::RunSpec run{.step_time_s = step_time_s, .n_steps = settings.n_steps};
  const model::OptimalInterval best = model::optimal_interval(fault, run);  // MoFa(44)
  return E2EEstimate{.interval_steps = best.steps,
                     .save_time_s = fault.checkpoint.save_time_s,
                     .ettr = best.ettr,
                     .total_s = best.t_total_s};
}

}  // namespace mofasim::tuner
