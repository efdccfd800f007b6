// One number, printf-formatted, as a std::string: the helper every table and CSV writer uses
// (`format_number("%.3f", seconds)`). The format must take exactly one double.
#pragma once

#include <cstdio>
#include <string>

namespace mofasim {

inline std::string format_number(const char* spec, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, value);
  return buffer;
}

}  // namespace mofasim
