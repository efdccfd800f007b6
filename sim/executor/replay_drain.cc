#include "sim/executor/replay_drain.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace mofasim::executor {
namespace {

// Steps after this one that replay exactly like it: every flow still has bytes at its end and
// started at the step's start. A flow with L bytes left that drains d per step runs through the
// next m steps while L - (m - 1) d > d, i.e. m < L / d. 0 when some flow ends within the step or
// had not started at its start.
std::int64_t identical_steps_after(const std::vector<double>& before, const std::vector<double>& left, double delay) {
  if (delay > 0) return 0;
  double m = std::numeric_limits<double>::infinity();
  for (std::size_t g = 0; g < before.size(); ++g) {
    if (before[g] <= 0) continue;
    const double drained = before[g] - left[g];
    if (left[g] <= 0 || drained <= 0) return 0;
    m = std::min(m, std::ceil(left[g] / drained) - 1);
  }
  return std::isfinite(m) && m > 0 ? static_cast<std::int64_t>(std::min(m, 1e15)) : 0;
}

}  // namespace

DrainUnderTraining simulate_drain(const StepRunner& run_step, const SimulateOptions& options,
                                  const BackgroundEgress& egress, std::int64_t max_steps) {
  if (max_steps < 1) throw std::invalid_argument("drain: max_steps must be >= 1");
  const SimulateOptions plain{.fidelity = options.fidelity, .shuffle_ties_seed = options.shuffle_ties_seed};
  DrainUnderTraining d;
  d.healthy_step_s = run_step(plain).step_time_s;
  BackgroundEgress step_egress = egress;
  double elapsed = 0;  // seconds from the first step's start to this step's start
  // From the second replay on only simulated GPUs hold bytes (BackgroundOutcome), so the check
  // for identical steps sees exactly the flows that exist.
  bool only_simulated = false;
  for (;;) {
    SimulateOptions with = plain;
    with.background = &step_egress;
    const StepResult r = run_step(with);
    const BackgroundOutcome& out = r.background.value();
    if (d.draining_steps == 0) d.first_step_s = r.step_time_s;
    ++d.draining_steps;
    d.slowdown_s += r.step_time_s - d.healthy_step_s;
    const bool done = std::all_of(out.left_at_step_end.begin(), out.left_at_step_end.end(), [](double b) { return b <= 0; });
    if (done || d.draining_steps >= max_steps) {
      d.drain_s = elapsed + out.end_s;
      d.outlived_interval = !done;
      return d;
    }
    std::int64_t skip = only_simulated ? identical_steps_after(step_egress.bytes_by_gpu, out.left_at_step_end, step_egress.start_s) : 0;
    skip = std::min(skip, max_steps - d.draining_steps - 1);
    std::vector<double> left = out.left_at_step_end;
    if (skip > 0) {
      const auto k = static_cast<double>(skip);
      for (std::size_t g = 0; g < left.size(); ++g) {
        // Clamped: rounding must not leave -1 ulp of bytes for the next step's replay to refuse.
        if (left[g] > 0) left[g] = std::max(0.0, left[g] - k * (step_egress.bytes_by_gpu[g] - left[g]));
      }
      d.draining_steps += skip;
      d.slowdown_s += k * (r.step_time_s - d.healthy_step_s);
      elapsed += k * r.step_time_s;
    }
    elapsed += r.step_time_s;
    step_egress.start_s = std::max(0.0, step_egress.start_s - r.step_time_s * (1 + static_cast<double>(skip)));
    step_egress.bytes_by_gpu = std::move(left);
    only_simulated = true;
  }
}

}  // namespace mofasim::executor
