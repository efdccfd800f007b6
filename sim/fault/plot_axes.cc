// Round ticks, axis labels and text boxes for the SVG plots (see plot_axes.h).
#include "sim/fault/plot_axes.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "sim/units/format.h"

namespace mofasim::fault {
namespace {

// The smallest 1, 2 or 5 x 10^k not below `raw`.
double round_step(double raw, int& exponent) {
  exponent = static_cast<int>(std::floor(std::log10(raw)));
  const double base = std::pow(10.0, exponent);
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * base >= raw * (1 - 1e-12)) return m * base;
  }
  ++exponent;
  return 10 * base;
}

}  // namespace

AxisTicks linear_ticks(double lo, double hi, int target) {
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo <= 1e-12 * std::max(1.0, std::abs(hi))) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.01;
    lo -= pad;
    hi += pad;
  }
  int exponent = 0;
  const double step = round_step((hi - lo) / std::max(target, 1), exponent);
  AxisTicks t;
  const double first = std::floor(lo / step * (1 + 1e-12));
  const double last = std::ceil(hi / step * (1 - 1e-12));
  for (double k = first; k <= last + 0.5; k += 1) t.values.push_back(k * step);
  t.lo = t.values.front();
  t.hi = t.values.back();
  t.decimals = std::max(0, -exponent);
  return t;
}

AxisTicks log_ticks(double lo, double hi, int max_ticks) {
  AxisTicks t;
  t.lo = lo;
  t.hi = hi;
  const int e0 = static_cast<int>(std::floor(std::log10(lo)));
  const int e1 = static_cast<int>(std::ceil(std::log10(hi)));
  auto collect = [&](std::initializer_list<double> mantissas) {
    t.values.clear();
    t.decimals = 0;
    for (int e = e0; e <= e1; ++e) {
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) {
          t.values.push_back(v);
          t.decimals = std::max(t.decimals, -e);
        }
      }
    }
  };
  collect({1, 2, 5});
  if (static_cast<int>(t.values.size()) > max_ticks) collect({1});
  return t;
}

std::string tick_label(double value, int decimals) {
  const double magnitude = std::abs(value);
  if (magnitude != 0 && (magnitude >= 1e7 || decimals > 6)) return format_number("%g", value);
  std::string s = format_number(("%." + std::to_string(decimals) + "f").c_str(), value);
  if (s.find_first_not_of("-0.") == std::string::npos && s.front() == '-') s.erase(0, 1);  // "-0.0" -> "0.0"
  return s;
}

std::string axis_label(const std::string& field_path, const std::string& unit) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = field_path.find('.', start);
    parts.push_back(field_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  std::string last = parts.back();
  std::string shown_unit = unit;
  // Fields that carry their unit in the name (no unit is typed for them on the command line).
  static const std::pair<const char*, const char*> kSuffixUnits[] = {
      {"_steps", "steps"}, {"_per_day", "1/day"}, {"_bytes", "bytes"}, {"_s", "s"}};
  for (const auto& [suffix, suffix_unit] : kSuffixUnits) {
    const std::string_view sv(suffix);
    if (shown_unit.empty() && last.size() > sv.size() && last.ends_with(sv)) {
      last.resize(last.size() - sv.size());
      shown_unit = suffix_unit;
    }
  }
  std::string name = last;
  if (parts.size() >= 2) {
    const std::string& parent = parts[parts.size() - 2];
    if (!last.starts_with(parent) && parent != "fault_tolerance") name = parent + "_" + last;
  }
  std::replace(name.begin(), name.end(), '_', ' ');
  return shown_unit.empty() ? name : name + " (" + shown_unit + ")";
}

TextBox estimate_text_box(double x, double y, const std::string& text, double font_size, const std::string& anchor) {
  // Count characters, not UTF-8 bytes.
  double chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80 ? 1 : 0;
  const double width = 0.62 * font_size * chars;
  double x0 = x;
  if (anchor == "middle") x0 = x - width / 2;
  if (anchor == "end") x0 = x - width;
  return {.x0 = x0, .y0 = y - 0.8 * font_size, .x1 = x0 + width, .y1 = y + 0.25 * font_size};
}

std::string fit_text(const std::string& text, double font_size, double max_width) {
  auto width = [&](const std::string& t) {
    const TextBox b = estimate_text_box(0, 0, t, font_size, "start");
    return b.x1 - b.x0;
  };
  if (width(text) <= max_width) return text;
  std::string cut = text;
  while (!cut.empty() && width(cut + "...") > max_width) {
    cut.pop_back();
    while (!cut.empty() && (static_cast<unsigned char>(cut.back()) & 0xC0) == 0x80) cut.pop_back();  // whole UTF-8 characters
  }
  return cut + "...";
}

}  // namespace mofasim::fault
