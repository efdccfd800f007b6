// Derived load-time budgets (see budgets.h). Estimates are computed in double: every input is
// already bounded by its field limit, so the products are finite and never wrap.
#include "sim/scenario/budgets.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/scenario/limits.h"

namespace mofasim::scenario {
namespace {

double micro_batches(const proto::Parallelism& x) {
  return std::floor(static_cast<double>(x.global_batch()) / (static_cast<double>(x.micro_batch()) * x.dp()));
}

double ops_per_layer(const proto::Scenario& s) {
  const proto::Optimizations& o = s.optimizations();
  double ops = 32 + 8.0 * o.tp_overlap().chunks();
  if (o.memfine().enabled()) ops += 4.0 * o.memfine().chunks();
  return ops;
}

}  // namespace

double estimated_tasks_per_step(const proto::Scenario& s) {
  const double layers = static_cast<double>(s.model().num_layers()) + s.model().mtp_depth();
  return micro_batches(s.parallelism()) * layers * 2 * ops_per_layer(s);
}

void check_budgets(const proto::Scenario& s, const SourceMap& sources, Diagnostics& diagnostics) {
  const double tasks = estimated_tasks_per_step(s);
  if (tasks > kMaxTasksPerStep) {
    const double gib = tasks * kBytesPerTask / (1024.0 * 1024.0 * 1024.0);
    diagnostics.error(sources.find("parallelism.global_batch"), "parallelism.global_batch",
                      "an estimated " + limit_number(std::round(tasks)) +
                          " simulator tasks per step (m = " + limit_number(micro_batches(s.parallelism())) +
                          " micro-batches x " + limit_number(s.model().num_layers() + s.model().mtp_depth()) +
                          " layers x 2 passes x " + limit_number(ops_per_layer(s)) + " ops), about " +
                          limit_number(std::round(gib)) + " GiB of replay tables, exceed the budget of " +
                          limit_number(kMaxTasksPerStep) + " tasks; use fewer micro-batches or layers");
  }
  if (!s.has_training() || !s.has_fault_tolerance()) return;
  const proto::FaultTolerance& f = s.fault_tolerance();
  double steps = static_cast<double>(s.training().steps());
  if (!s.training().has_steps()) {
    steps = std::ceil(s.training().tokens() /
                      (static_cast<double>(s.parallelism().global_batch()) * s.model().seq_length()));
  }
  double events = 0;
  if (f.has_checkpoint() && f.checkpoint().interval_steps() >= 1) events += steps / f.checkpoint().interval_steps();
  if (f.has_step_time()) {
    const int unit = f.has_gpus_per_failure_unit() ? f.gpus_per_failure_unit() : s.topology().gpus_per_node();
    const double units = std::ceil(static_cast<double>(s.topology().gpus()) / std::max(unit, 1));
    events += units * f.node_failure_rate_per_day() * steps * f.step_time() / 86400.0;
  }
  if (events > kMaxTrialEvents) {
    diagnostics.error(sources.find("fault_tolerance"), "fault_tolerance",
                      "an estimated " + limit_number(std::round(events)) +
                          " events per Monte Carlo trial (checkpoints plus expected failures over " +
                          limit_number(steps) + " steps) exceed the budget of " + limit_number(kMaxTrialEvents) +
                          "; checkpoint less often or train for fewer steps");
  }
}

}  // namespace mofasim::scenario
