// ETTR sweeps: evaluate the analytic model and the Monte Carlo injector for each value of one
// parameter (checkpoint interval, failure rate, save time, bandwidth, ...) and write the result
// as CSV and as a hand-written SVG plot (analytic curve, Monte Carlo means with 95% error bars,
// the best point marked). Points are ranked by end-to-end time, not ETTR: when the parameter
// changes the step time (a faster network), the highest ETTR is not the shortest run. The
// `mofasim sweep` command is a thin front end over these functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "model/fault_spec.h"
#include "sim/fault/monte_carlo.h"

namespace mofasim::fault {

struct EttrStudyInputs {
  model::FaultSpec spec{};
  model::RunSpec run{};
};

struct SweepPoint {
  double value = 0;
  double step_time_s = 0;        // the step time this point was evaluated with
  double analytic_ettr = 0;      // MoFa(36) MoFa(40)
  double analytic_e2e_s = 0;
  double renewal_ettr = 0;
  double mc_ettr_mean = 0;
  double mc_ettr_std_error = 0;
  std::array<double, 2> mc_ettr_ci95{};
  double mc_ettr_pooled = 0;
  double mc_e2e_mean_s = 0;
  std::array<double, 2> mc_e2e_ci95_s{};
  double mc_e2e_p90_s = 0;
  // Paired by trial (common random numbers): the mean and 95% CI of this point's trial E2E minus
  // the best point's trial E2E. A CI that contains 0 means the two cannot be told apart at this
  // trial count; it is far narrower than the two points' own CIs would suggest.
  double mc_e2e_minus_best_s = 0;
  std::array<double, 2> mc_e2e_minus_best_ci95_s{};
};

struct EttrSweep {
  std::string parameter{};
  std::string axis_label{};  // the x axis: a name and a unit (plot_axes.h axis_label); parameter if empty
  std::vector<SweepPoint> points{};
  std::size_t best = 0;  // index of the shortest analytic end-to-end time, MoFa(40) (first on ties)
};

// For each value: build(value) gives the inputs; the analytic model and `options.trials` Monte
// Carlo trials are evaluated; each point's trials are then compared with the best point's, trial
// by trial (SweepPoint::mc_e2e_minus_best_s). Common random numbers: every point runs trial i on the stream
// Rng(options.seed, i), so at equal failure settings trial i meets the same failures at every
// point and differences between points are the parameter's, not sampling noise.
// options.progress, if set, gets (points done, points in all).
EttrSweep run_ettr_sweep(const std::string& parameter, std::span<const double> values,
                         const std::function<EttrStudyInputs(double)>& build, const MonteCarloOptions& options);

// The two halves of run_ettr_sweep, for runs whose trials come from elsewhere (the shards of
// `mofasim sweep --shard i/n`, merged). analytic_sweep: every point's analytic fields and `best`,
// no Monte Carlo (one input per value). add_monte_carlo: every point's Monte Carlo fields from
// trials_of(i), all `trials` of point i in trial order; the best point is asked for first, since
// the others are paired with its trials. `progress`, if set, gets (points done, points in all).
EttrSweep analytic_sweep(const std::string& parameter, std::span<const double> values,
                         std::span<const EttrStudyInputs> inputs);
void add_monte_carlo(EttrSweep& sweep, const std::function<MonteCarloResult(std::size_t)>& trials_of,
                     const std::function<void(std::int64_t, std::int64_t)>& progress);

// What the paired Monte Carlo differences say about the analytic best, one line without a newline:
// the values whose paired 95% CI lies wholly below 0 (the trials find them shorter than the
// analytic best), then those whose CI contains 0 (cannot be told apart), or, when there are
// neither, that every other value is slower beyond the noise. The analytic best is MoFa's; the
// trials also see what MoFa leaves out (fail-slow, checkpoint stalls), so they may rank otherwise.
// format_value prints a swept value.
std::string monte_carlo_verdict(const EttrSweep& sweep, const std::function<std::string(double)>& format_value);

// Columns: <parameter>, step_time_s, analytic_ettr, analytic_e2e_s, renewal_ettr, mc_ettr_mean,
// mc_ettr_std_error, mc_ettr_ci95_lo, mc_ettr_ci95_hi, mc_ettr_pooled, mc_e2e_mean_s,
// mc_e2e_ci95_lo_s, mc_e2e_ci95_hi_s, mc_e2e_p90_s, mc_e2e_minus_best_s,
// mc_e2e_minus_best_ci95_lo_s, mc_e2e_minus_best_ci95_hi_s, best (1 on the best point).
void write_sweep_csv(std::ostream& out, const EttrSweep& sweep);

// A 720 x 440 SVG: x = parameter (log scale if all values are > 0 and span 100x or more),
// y = ETTR in percent, both with round ticks and labelled with name and unit, the y axis never
// below 0 % or above 100 %; the best point's label sits above the plot, inside the picture.
// Throws std::invalid_argument on an empty sweep.
void write_sweep_svg(std::ostream& out, const EttrSweep& sweep);

}  // namespace mofasim::fault
