// Summary statistics of Monte Carlo samples: mean, standard error, normal 95% confidence
// interval of the mean and both tails of the distribution (P1, P10, median, P90, P99; linear
// interpolation between order statistics). Which tail is the bad one depends on the quantity
// (low for ETTR, high for end-to-end time); renderers say so, the summary keeps both.
#pragma once

#include <array>
#include <span>

namespace mofasim::fault {

struct SampleSummary {
  double mean = 0;
  double std_dev = 0;                // sample standard deviation (n - 1)
  double std_error = 0;              // std_dev / sqrt(n)
  std::array<double, 2> ci95{};      // mean -/+ kZ95 * std_error, a kCiLevel interval of the mean
  double p1 = 0;
  double p10 = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double min = 0;
  double max = 0;
};

// The confidence level of SampleSummary::ci95 and its two-sided normal quantile.
inline constexpr double kCiLevel = 0.95;
inline constexpr double kZ95 = 1.959963984540054;

// Throws std::invalid_argument on an empty sample.
SampleSummary summarize(std::span<const double> samples);

// The q-quantile (0 <= q <= 1) of sorted samples, interpolating linearly between order
// statistics at position q * (n - 1) (Hyndman & Fan type 7, the default of R and NumPy).
double quantile_sorted(std::span<const double> sorted, double q);

}  // namespace mofasim::fault
