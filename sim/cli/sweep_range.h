// Parsing `--param PATH=FROM:TO:STEP[ UNIT]` for `mofasim sweep`: the field path, the values, and
// the text each value is written as in a `--set` override (the unit appended when given).
#pragma once

#include <string>
#include <vector>

namespace mofasim::cli {

struct SweepRange {
  std::string path;
  std::string unit;            // "" or e.g. "s" for fault_tolerance.checkpoint.save_time=1:10:1 s
  std::vector<double> values;  // FROM, FROM+STEP, ... <= TO (+ a 1e-9 relative tolerance)
  [[nodiscard]] std::string override_for(double value) const;  // "path=value[ unit]"
};

// Throws UsageError naming the problem (missing '=', bad number, STEP <= 0, TO < FROM, > 10000 values).
SweepRange parse_sweep_range(const std::string& text);

}  // namespace mofasim::cli
