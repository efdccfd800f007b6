// Number formatting for every command's text output — one module, so units agree across commands:
// memory in binary units (GiB), durations as a person reads them ("5.71 s", "3 h 12 min",
// "64.2 d"), counts with a suffix. JSON output keeps plain SI numbers (bytes, seconds) instead.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace mofasim {

// One number, printf-formatted, as a std::string: the helper every table and CSV writer uses
// (`format_number("%.3f", seconds)`). The format must take exactly one double.
inline std::string format_number(const char* spec, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, value);
  return buffer;
}

inline std::string format_fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// Bytes in binary units: "512 B", "382.56 MiB", "63.42 GiB".
inline std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return format_fixed(v, u == 0 ? 0 : 2) + " " + units[u];
}

inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// A duration as a person reads it, three significant figures below a minute: "850 us",
// "12.3 ms", "5.71 s", "42.0 s", then "7 min 05 s", "3 h 12 min", and days from two days up:
// "64.2 d". Negative durations keep their sign; non-finite ones print as "inf s" / "nan s".
inline std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return format_number("%g s", seconds);
  if (seconds < 0) return "-" + format_duration(-seconds);
  auto three = [](double v, const char* unit) {
    const char* spec = v >= 99.95 ? "%.0f" : v >= 9.995 ? "%.1f" : "%.2f";
    return format_number(spec, v) + " " + unit;
  };
  if (seconds == 0) return "0 s";
  if (seconds < 1e-3) return three(seconds * 1e6, "us");
  if (seconds < 1) return three(seconds * 1e3, "ms");
  if (seconds < 60) return three(seconds, "s");
  const auto whole = static_cast<std::int64_t>(std::llround(seconds));
  if (whole < 3600) return std::to_string(whole / 60) + " min " + format_number("%02.0f", static_cast<double>(whole % 60)) + " s";
  if (seconds < 2 * 86400) {
    const std::int64_t minutes = (whole + 30) / 60;
    return std::to_string(minutes / 60) + " h " + format_number("%02.0f", static_cast<double>(minutes % 60)) + " min";
  }
  return three(seconds / 86400, "d");
}

// Large counts with a suffix: "950", "3.400 M", "70.554 B", "1.234 T", then "1.8000e+18".
inline std::string format_count(double value) {
  const double a = std::fabs(value);
  if (a >= 1e15) return format_number("%.4e", value);
  if (a >= 1e12) return format_fixed(value / 1e12, 3) + " T";
  if (a >= 1e9) return format_fixed(value / 1e9, 3) + " B";
  if (a >= 1e6) return format_fixed(value / 1e6, 3) + " M";
  return format_fixed(value, 0);
}

}  // namespace mofasim
