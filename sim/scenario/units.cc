// Unit spellings and the quantity parser (see units.h).
#include "sim/scenario/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>
#include <vector>

#include "sim/scenario/did_you_mean.h"

namespace mofasim::scenario {
namespace {

constexpr double kKi = 1024.0;
constexpr double kMi = kKi * 1024.0;
constexpr double kGi = kMi * 1024.0;
constexpr double kTi = kGi * 1024.0;
constexpr double kPi = kTi * 1024.0;
constexpr double kBit = 1.0 / 8.0;

constexpr std::array kBytes = {
    UnitSpelling{"B", 0, 1},     UnitSpelling{"kB", 3, 1},    UnitSpelling{"MB", 6, 1},
    UnitSpelling{"GB", 9, 1},    UnitSpelling{"TB", 12, 1},   UnitSpelling{"PB", 15, 1},
    UnitSpelling{"KiB", 0, kKi}, UnitSpelling{"MiB", 0, kMi}, UnitSpelling{"GiB", 0, kGi},
    UnitSpelling{"TiB", 0, kTi}, UnitSpelling{"PiB", 0, kPi},
};

constexpr std::array kSeconds = {
    UnitSpelling{"ns", -9, 1}, UnitSpelling{"us", -6, 1},  UnitSpelling{"ms", -3, 1},
    UnitSpelling{"s", 0, 1},   UnitSpelling{"min", 0, 60}, UnitSpelling{"h", 0, 3600},
    UnitSpelling{"d", 0, 86400},
};

constexpr std::array kBytesPerSecond = {
    UnitSpelling{"B/s", 0, 1},      UnitSpelling{"kB/s", 3, 1},     UnitSpelling{"MB/s", 6, 1},
    UnitSpelling{"GB/s", 9, 1},     UnitSpelling{"TB/s", 12, 1},    UnitSpelling{"KiB/s", 0, kKi},
    UnitSpelling{"MiB/s", 0, kMi},  UnitSpelling{"GiB/s", 0, kGi},  UnitSpelling{"TiB/s", 0, kTi},
    UnitSpelling{"Bps", 0, 1},      UnitSpelling{"kBps", 3, 1},     UnitSpelling{"MBps", 6, 1},
    UnitSpelling{"GBps", 9, 1},     UnitSpelling{"TBps", 12, 1},    UnitSpelling{"b/s", 0, kBit},
    UnitSpelling{"kb/s", 3, kBit},  UnitSpelling{"Mb/s", 6, kBit},  UnitSpelling{"Gb/s", 9, kBit},
    UnitSpelling{"Tb/s", 12, kBit}, UnitSpelling{"bps", 0, kBit},   UnitSpelling{"kbps", 3, kBit},
    UnitSpelling{"Mbps", 6, kBit},  UnitSpelling{"Gbps", 9, kBit},  UnitSpelling{"Tbps", 12, kBit},
};

constexpr std::array kFlopsPerSecond = {
    UnitSpelling{"FLOPS", 0, 1},     UnitSpelling{"GFLOPS", 9, 1},    UnitSpelling{"TFLOPS", 12, 1},
    UnitSpelling{"PFLOPS", 15, 1},   UnitSpelling{"EFLOPS", 18, 1},   UnitSpelling{"FLOP/s", 0, 1},
    UnitSpelling{"GFLOP/s", 9, 1},   UnitSpelling{"TFLOP/s", 12, 1},  UnitSpelling{"PFLOP/s", 15, 1},
    UnitSpelling{"EFLOP/s", 18, 1},
};

// The number at the front of a quantity: sign, digits with an optional point, optional exponent.
struct NumberText {
  bool negative = false;
  std::string mantissa;    // digits and at most one '.', at least one digit
  long long exponent = 0;  // the written exponent (0 when none)
  std::size_t end = 0;     // index just past the number
  bool ok = false;
  bool exponent_overflow = false;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

NumberText scan_number(std::string_view text) {
  NumberText n;
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    n.negative = text[i] == '-';
    ++i;
  }
  bool digits = false;
  while (i < text.size() && is_digit(text[i])) {
    n.mantissa += text[i++];
    digits = true;
  }
  if (i < text.size() && text[i] == '.') {
    n.mantissa += text[i++];
    while (i < text.size() && is_digit(text[i])) {
      n.mantissa += text[i++];
      digits = true;
    }
  }
  if (!digits) return n;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    bool exponent_negative = false;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) {
      exponent_negative = text[j] == '-';
      ++j;
    }
    const std::size_t first_digit = j;
    while (j < text.size() && is_digit(text[j])) ++j;
    if (j > first_digit) {  // "2 EFLOPS" has no exponent: 'E' starts the unit
      const auto digits_view = text.substr(first_digit, j - first_digit);
      if (digits_view.size() > 6) {
        n.exponent_overflow = true;
      } else {
        n.exponent = std::stoll(std::string(digits_view));
        if (exponent_negative) n.exponent = -n.exponent;
      }
      i = j;
    }
  }
  n.end = i;
  n.ok = true;
  return n;
}

std::string quoted(std::string_view text) {
  std::string out(1, '\'');  // appended piecewise: g++ 12 -Wrestrict misfires on "'" + std::string
  out.append(text);
  out += '\'';
  return out;
}

}  // namespace

std::span<const UnitSpelling> unit_spellings(proto::Unit unit) {
  switch (unit) {
    case proto::UNIT_BYTES: return kBytes;
    case proto::UNIT_SECONDS: return kSeconds;
    case proto::UNIT_BYTES_PER_SECOND: return kBytesPerSecond;
    case proto::UNIT_FLOPS_PER_SECOND: return kFlopsPerSecond;
    case proto::UNIT_NONE: return {};
  }
  return {};
}

std::string_view unit_kind_name(proto::Unit unit) {
  switch (unit) {
    case proto::UNIT_BYTES: return "size";
    case proto::UNIT_SECONDS: return "duration";
    case proto::UNIT_BYTES_PER_SECOND: return "bandwidth";
    case proto::UNIT_FLOPS_PER_SECOND: return "FLOP rate";
    case proto::UNIT_NONE: return "number";
  }
  return "number";
}

std::string_view unit_example(proto::Unit unit) {
  switch (unit) {
    case proto::UNIT_BYTES: return "80 GiB";
    case proto::UNIT_SECONDS: return "1.5 us";
    case proto::UNIT_BYTES_PER_SECOND: return "400 GB/s";
    case proto::UNIT_FLOPS_PER_SECOND: return "989 TFLOPS";
    case proto::UNIT_NONE: return "1";
  }
  return "1";
}

std::string_view base_unit_symbol(proto::Unit unit) {
  switch (unit) {
    case proto::UNIT_BYTES: return "B";
    case proto::UNIT_SECONDS: return "s";
    case proto::UNIT_BYTES_PER_SECOND: return "B/s";
    case proto::UNIT_FLOPS_PER_SECOND: return "FLOP/s";
    case proto::UNIT_NONE: return "";
  }
  return "";
}

QuantityParse parse_quantity(std::string_view text, proto::Unit unit) {
  const std::string kind(unit_kind_name(unit));
  std::string example(1, '"');
  example.append(unit_example(unit));
  example += '"';
  const NumberText number = scan_number(text);
  if (!number.ok) {
    return {.value = {}, .error = "expected a " + kind + " such as " + example + ", got " + quoted(text)};
  }
  std::string_view symbol = text.substr(number.end);
  while (!symbol.empty() && symbol.front() == ' ') symbol.remove_prefix(1);
  while (!symbol.empty() && symbol.back() == ' ') symbol.remove_suffix(1);
  if (symbol.empty()) {
    return {.value = {},
            .error = "expected a " + kind + " with a unit, such as " + example + ", got " + quoted(text)};
  }
  const UnitSpelling* spelling = nullptr;
  for (const auto& candidate : unit_spellings(unit)) {
    if (candidate.symbol == symbol) spelling = &candidate;
  }
  if (spelling == nullptr) {
    std::vector<std::string> names;
    for (const auto& candidate : unit_spellings(unit)) names.emplace_back(candidate.symbol);
    return {.value = {}, .error = unknown_name_message(kind + " unit", symbol, names)};
  }
  if (number.negative) {
    return {.value = {}, .error = "must not be negative, got " + quoted(text)};
  }
  if (number.exponent_overflow) return {.value = {}, .error = "out of range: " + quoted(text)};
  // One decimal rounding: parse mantissa * 10^(exponent + prefix) as a single literal.
  const std::string literal = number.mantissa + "e" + std::to_string(number.exponent + spelling->exp10);
  double base = 0;
  const auto [ptr, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), base);
  if (ec != std::errc() || ptr != literal.data() + literal.size()) {
    return {.value = {}, .error = "out of range: " + quoted(text)};
  }
  const double value = base * spelling->factor;
  if (!std::isfinite(value)) return {.value = {}, .error = "out of range: " + quoted(text)};
  return {.value = value, .error = {}};
}

}  // namespace mofasim::scenario
