// Summary statistics of Monte Carlo samples: mean, standard error, normal 95% confidence
// interval of the mean and percentiles (linear interpolation between order statistics).
#pragma once

#include <array>
#include <span>

namespace mofasim::fault {

struct SampleSummary {
  double mean = 0;
  double std_dev = 0;                // sample standard deviation (n - 1)
  double std_error = 0;              // std_dev / sqrt(n)
  std::array<double, 2> ci95{};      // mean -/+ 1.959964 * std_error
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double min = 0;
  double max = 0;
};

// Throws std::invalid_argument on an empty sample.
SampleSummary summarize(std::span<const double> samples);

// The q-quantile (0 <= q <= 1) of sorted samples, interpolating linearly between order
// statistics at position q * (n - 1) (Hyndman & Fan type 7, the default of R and NumPy).
double quantile_sorted(std::span<const double> sorted, double q);

}  // namespace mofasim::fault
