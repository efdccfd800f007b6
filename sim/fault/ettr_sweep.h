// ETTR sweeps: evaluate the analytic model and the Monte Carlo injector for each value of one
// parameter (checkpoint interval, failure rate, save time, ...) and write the result as CSV and
// as a hand-written SVG plot (analytic curve, Monte Carlo means with 95% error bars, the analytic
// optimum marked). The `mofasim sweep` command is a thin front end over these functions.
#pragma once

#include <array>
#include <cstddef>
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
  double analytic_ettr = 0;      // eq. (36)/(40)
  double analytic_e2e_s = 0;
  double renewal_ettr = 0;
  double mc_ettr_mean = 0;
  double mc_ettr_std_error = 0;
  std::array<double, 2> mc_ettr_ci95{};
  double mc_ettr_pooled = 0;
  double mc_e2e_mean_s = 0;
  double mc_e2e_p90_s = 0;
};

struct EttrSweep {
  std::string parameter{};
  std::vector<SweepPoint> points{};
  std::size_t best_analytic = 0;  // index of the highest analytic ETTR (first on ties)
};

// For each value: build(value) gives the inputs; the analytic model and `options.trials` Monte
// Carlo trials (seed options.seed for every point: common random numbers make neighbouring points
// comparable) are evaluated. options.progress, if set, gets (points done, points in all).
EttrSweep run_ettr_sweep(const std::string& parameter, std::span<const double> values,
                         const std::function<EttrStudyInputs(double)>& build, const MonteCarloOptions& options);

// Columns: <parameter>, analytic_ettr, analytic_e2e_s, renewal_ettr, mc_ettr_mean,
// mc_ettr_std_error, mc_ettr_ci95_lo, mc_ettr_ci95_hi, mc_ettr_pooled, mc_e2e_mean_s, mc_e2e_p90_s.
void write_sweep_csv(std::ostream& out, const EttrSweep& sweep);

// A 720 x 440 SVG: x = parameter (log scale if all values are > 0 and span 100x or more),
// y = ETTR in percent. Throws std::invalid_argument on an empty sweep.
void write_sweep_svg(std::ostream& out, const EttrSweep& sweep);

}  // namespace mofasim::fault
