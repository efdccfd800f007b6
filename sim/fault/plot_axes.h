// What every hand-written SVG plot needs to be readable: round axis ticks (1-2-5 steps on a
// linear axis, 1-2-5 per decade on a log one), tick labels with no more digits than the step
// needs, an axis label made of a name and a unit, and an estimate of a text element's box so a
// writer (and a test) can keep labels inside the picture and apart from each other.
#pragma once

#include <string>
#include <vector>

namespace mofasim::fault {

struct AxisTicks {
  double lo = 0;  // the axis range: lo <= every tick <= hi
  double hi = 1;
  std::vector<double> values{};
  int decimals = 0;  // digits after the point that print every tick exactly
};

// Linear ticks covering [lo, hi] with about `target` steps of 1, 2 or 5 times a power of ten;
// the range widens to the enclosing ticks. lo == hi gets a small range around it.
AxisTicks linear_ticks(double lo, double hi, int target = 5);

// Log-axis ticks for 0 < lo <= hi: 1, 2, 5 x 10^k inside [lo, hi] (only the decades when that is
// more than `max_ticks`); the range stays [lo, hi].
AxisTicks log_ticks(double lo, double hi, int max_ticks = 8);

// A tick value as text: `decimals` digits after the point, "-0" printed as "0"; very large or
// small magnitudes in %g form.
std::string tick_label(double value, int decimals);

// "checkpoint save time (s)" from "fault_tolerance.checkpoint.save_time" and "s": the last two
// path components with '_' as spaces (one if the last already starts with its parent); with no
// unit given, a unit suffix of the name becomes the unit ("_steps" steps, "_per_day" 1/day,
// "_bytes" bytes, "_s" s); no parentheses when there is still no unit.
std::string axis_label(const std::string& field_path, const std::string& unit);

struct TextBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  [[nodiscard]] bool overlaps(const TextBox& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// A conservative box of a horizontal text element at baseline (x, y) in a sans-serif font:
// 0.62 em per character, 0.8 em above the baseline and 0.25 em below; anchor "start",
// "middle" or "end".
TextBox estimate_text_box(double x, double y, const std::string& text, double font_size, const std::string& anchor);

// `text` shortened with a trailing "..." until its estimated width fits `max_width` pixels.
std::string fit_text(const std::string& text, double font_size, double max_width);

}  // namespace mofasim::fault
