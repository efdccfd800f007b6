#include "sim/cli/format.h"

#include <cmath>
#include <cstdio>

namespace mofasim::cli {

std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return format_fixed(v, u == 0 ? 0 : 2) + " " + units[u];
}

std::string format_seconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a >= 86400 * 2) return format_fixed(seconds / 86400, 2) + " d";
  if (a >= 7200) return format_fixed(seconds / 3600, 2) + " h";
  if (a >= 1 || a == 0) return format_fixed(seconds, 3) + " s";
  if (a >= 1e-3) return format_fixed(seconds * 1e3, 3) + " ms";
  return format_fixed(seconds * 1e6, 3) + " us";
}

std::string format_count(double value) {
  const double a = std::fabs(value);
  if (a >= 1e15) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4e", value);
    return buf;
  }
  if (a >= 1e12) return format_fixed(value / 1e12, 3) + " T";
  if (a >= 1e9) return format_fixed(value / 1e9, 3) + " B";
  if (a >= 1e6) return format_fixed(value / 1e6, 3) + " M";
  return format_fixed(value, 0);
}

}  // namespace mofasim::cli
