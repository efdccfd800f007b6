// Summary statistics of Monte Carlo samples.
#include "sim/fault/statistics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace mofasim::fault {

double quantile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile_sorted: no samples");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("quantile_sorted: q must be in [0, 1]");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

SampleSummary summarize(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  const double n = static_cast<double>(samples.size());
  double sum = 0;
  for (double x : samples) sum += x;
  SampleSummary s;
  s.mean = sum / n;
  double ss = 0;  // two-pass variance: no cancellation for tightly clustered ETTRs
  for (double x : samples) ss += (x - s.mean) * (x - s.mean);
  s.std_dev = samples.size() > 1 ? std::sqrt(ss / (n - 1)) : 0;
  s.std_error = s.std_dev / std::sqrt(n);
  s.ci95 = {s.mean - kZ95 * s.std_error, s.mean + kZ95 * s.std_error};
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.p1 = quantile_sorted(sorted, 0.01);
  s.p10 = quantile_sorted(sorted, 0.10);
  s.p50 = quantile_sorted(sorted, 0.50);
  s.p90 = quantile_sorted(sorted, 0.90);
  s.p99 = quantile_sorted(sorted, 0.99);
  s.min = sorted.front();
  s.max = sorted.back();
  return s;
}

}  // namespace mofasim::fault
