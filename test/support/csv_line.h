// One CSV line split into cells for the measurement-report tools (gemm_shape_report,
// nccl_tests_compare): commas inside double quotes do not split, the quotes are dropped. The
// product's own reader (sim/analysis/measured_reader.h) adds located errors; these tools read
// files they were written for.
#pragma once

#include <string>
#include <vector>

namespace mofasim::test {

inline std::vector<std::string> split_csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') {
      quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  return out;
}

}  // namespace mofasim::test
