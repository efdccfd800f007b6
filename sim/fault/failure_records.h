// Historical failure records (a CSV of timestamp, class, recovery_seconds) and the fit that turns
// them into a FaultSpec's failure rate, class mix, recovery samples and empirical failure process.
//
// CSV format: a header line naming the three columns (any order, extra columns ignored), then one
// failure per line. `timestamp` is either seconds (any epoch, decimals allowed) or an ISO-8601 UTC
// time "YYYY-MM-DDTHH:MM:SS[Z]" (a space may replace the T). Blank lines and lines starting with
// '#' are skipped. Errors throw std::invalid_argument as "file:line: message".
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "model/fault_spec.h"

namespace mofasim::fault {

struct FailureRecord {
  double timestamp_s = 0;
  std::string failure_class{};
  double recovery_s = 0;
};

// Records in file order. `source_name` is used in error messages only.
std::vector<FailureRecord> parse_failure_records(std::istream& in, const std::string& source_name);
std::vector<FailureRecord> load_failure_records(const std::string& path);

struct FailureHistoryFit {
  double node_failure_rate_per_day = 0;      // (records - 1) / span / recorded_units, per day
  std::vector<model::FailureClass> classes{};  // first-appearance order; weight = count; empirical recovery
  model::FailureProcess process{};           // kEmpirical: sorted-timestamp gaps and recorded_units
};

// Fits a history recorded on a cluster of `recorded_units` failure units. Needs at least two
// records with distinct timestamps. The rate is the maximum-likelihood Poisson rate of the gaps,
// (n - 1) / (t_last - t_first), per unit and per day.
FailureHistoryFit fit_failure_history(const std::vector<FailureRecord>& records, std::int64_t recorded_units);

// Sets spec's rate, classes and process from the fit (leaves the rest, incl. failure_units, alone).
void apply_failure_history(model::FaultSpec& spec, const FailureHistoryFit& fit);

}  // namespace mofasim::fault
