// Dimensioned scalar values in scenario YAML ("400 GB/s", "1.5 us", "80 GiB", "989 TFLOPS"):
// the accepted unit spellings for each kind of unit in proto/scenario.proto, and the parser that
// turns such a string into base SI (bytes, seconds, bytes/s, FLOP/s). A bare number is rejected,
// so a value can never be misread in the wrong unit (style.md S2).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "proto/scenario.pb.h"

namespace mofasim::scenario {

// One spelling: value = number * 10^exp10 * factor. Decimal prefixes go through exp10 so that
// "1.5 us" is rounded once and equals the literal 1.5e-6 exactly.
struct UnitSpelling {
  std::string_view symbol;
  int exp10 = 0;
  double factor = 1;
};

// Every spelling accepted for `unit`, in the order the reference lists them (empty for UNIT_NONE).
std::span<const UnitSpelling> unit_spellings(proto::Unit unit);

// "size", "duration", "bandwidth", "FLOP rate".
std::string_view unit_kind_name(proto::Unit unit);

// An example value for messages and docs: "80 GiB", "1.5 us", "400 GB/s", "989 TFLOPS".
std::string_view unit_example(proto::Unit unit);

// The base SI unit values are stored in: "B", "s", "B/s", "FLOP/s".
std::string_view base_unit_symbol(proto::Unit unit);

struct QuantityParse {
  std::optional<double> value;  // base SI, finite and >= 0 when set
  std::string error;            // one-line reason when value is empty
};

// Parses "<number>[ ]<unit>". Errors: no number, no unit, unknown unit (with did-you-mean),
// negative, NaN/inf, out of double range.
QuantityParse parse_quantity(std::string_view text, proto::Unit unit);

}  // namespace mofasim::scenario
