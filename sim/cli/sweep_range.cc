#include "sim/cli/sweep_range.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "sim/cli/cli_common.h"

namespace mofasim::cli {
namespace {

double parse_number(const std::string& text, const std::string& what, const std::string& whole) {
  double v = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || ptr != last || !std::isfinite(v)) {
    throw UsageError("mofasim sweep: --param " + whole + ": " + what + " '" + text + "' is not a number");
  }
  return v;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::string SweepRange::override_for(double value) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return path + "=" + buf + (unit.empty() ? "" : " " + unit);
}

SweepRange parse_sweep_range(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError("mofasim sweep: --param '" + text + "': expected PATH=FROM:TO:STEP, e.g. fault_tolerance.checkpoint.interval_steps=5:100:5");
  }
  SweepRange range;
  range.path = trim(text.substr(0, eq));
  std::string rest = trim(text.substr(eq + 1));
  const auto space = rest.find(' ');
  if (space != std::string::npos) {
    range.unit = trim(rest.substr(space + 1));
    rest = rest.substr(0, space);
  }
  const auto c1 = rest.find(':');
  const auto c2 = c1 == std::string::npos ? std::string::npos : rest.find(':', c1 + 1);
  if (c2 == std::string::npos) {
    throw UsageError("mofasim sweep: --param " + text + ": expected FROM:TO:STEP after '='");
  }
  const double from = parse_number(rest.substr(0, c1), "FROM", text);
  const double to = parse_number(rest.substr(c1 + 1, c2 - c1 - 1), "TO", text);
  const double step = parse_number(rest.substr(c2 + 1), "STEP", text);
  if (!(step > 0)) throw UsageError("mofasim sweep: --param " + text + ": STEP must be > 0");
  if (to < from) throw UsageError("mofasim sweep: --param " + text + ": TO must be >= FROM");
  const double count = std::floor((to - from) / step * (1 + 1e-9)) + 1;
  if (count > 10000) throw UsageError("mofasim sweep: --param " + text + ": more than 10000 values");
  for (int i = 0; i < static_cast<int>(count); ++i) range.values.push_back(from + step * i);
  return range;
}

}  // namespace mofasim::cli
