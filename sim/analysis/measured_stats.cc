// Error statistics of predicted versus measured iteration times, per subset.
#include "sim/analysis/measured_stats.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace mofasim::analysis {
namespace {

constexpr const char* kSingle = "single-node";
constexpr const char* kMulti = "multi-node";

}  // namespace

ErrorStats error_stats(std::span<const double> ape, std::span<const double> signed_pe) {
  if (ape.size() != signed_pe.size()) {
    throw std::invalid_argument("error_stats: ape and signed_pe must have the same length");
  }
  ErrorStats s;
  s.count = static_cast<int>(ape.size());
  if (ape.empty()) return s;
  double sum = 0;
  double sum_signed = 0;
  for (std::size_t i = 0; i < ape.size(); ++i) {
    sum += ape[i];
    sum_signed += signed_pe[i];
    s.max_ape = std::max(s.max_ape, ape[i]);
  }
  s.mape = sum / static_cast<double>(ape.size());
  s.mean_signed = sum_signed / static_cast<double>(ape.size());
  std::vector<double> sorted(ape.begin(), ape.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.median_ape = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  return s;
}

ErrorStats error_stats(std::span<const MeasuredComparison> rows) {
  std::vector<double> ape;
  std::vector<double> spe;
  ape.reserve(rows.size());
  spe.reserve(rows.size());
  for (const auto& r : rows) {
    ape.push_back(r.abs_percent_error());
    spe.push_back(r.signed_percent_error());
  }
  return error_stats(ape, spe);
}

std::string measured_subset(const MeasuredRow& row, int gpus_per_node) {
  if (row.gpus <= gpus_per_node) return kSingle;
  if (!row.parameters_billion) return kMulti;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %.4gB", kMulti, *row.parameters_billion);
  return buf;
}

std::vector<SubsetStats> subset_stats(std::span<const MeasuredComparison> rows) {
  std::vector<SubsetStats> out;
  out.push_back({"all", error_stats(rows)});
  std::vector<MeasuredComparison> single;
  std::vector<MeasuredComparison> multi;
  // Multi-node sizes keyed by parameter count so they print by increasing size.
  std::map<double, std::vector<MeasuredComparison>> by_size;
  for (const auto& r : rows) {
    if (r.subset == kSingle) {
      single.push_back(r);
    } else {
      multi.push_back(r);
      if (r.subset != kMulti && r.row.parameters_billion) by_size[*r.row.parameters_billion].push_back(r);
    }
  }
  if (!single.empty()) out.push_back({kSingle, error_stats(single)});
  if (!multi.empty()) out.push_back({kMulti, error_stats(multi)});
  for (const auto& [size, group] : by_size) out.push_back({group.front().subset, error_stats(group)});
  return out;
}

ErrorStats find_subset(std::span<const SubsetStats> stats, const std::string& name) {
  for (const auto& s : stats) {
    if (s.name == name) return s.stats;
  }
  return {};
}

}  // namespace mofasim::analysis
