// Load-time limits of the scenario schema. Every count and size in proto/scenario.proto carries
// its bounds as field options ((max), (min), (max_entries), (limit_why)); the YAML converter
// checks each value against them where it is written, before anything is allocated or looped
// over, so an absurd value is one located line and never a huge table, a wrapped integer or an
// endless loop downstream. The reference (docs/scenario-reference.md) shows the same bounds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <google/protobuf/descriptor.h>

namespace mofasim::scenario {

// The reason for `field`'s limits: its (limit_why), else a default for its kind of value.
std::string limit_reason(const google::protobuf::FieldDescriptor& field);

// The message for `value` (base unit) above `field`'s max, or above 0 and below its min; else nothing.
std::optional<std::string> limit_violation(const google::protobuf::FieldDescriptor& field, double value);
// The same for an integer field, the value shown exactly.
std::optional<std::string> limit_violation(const google::protobuf::FieldDescriptor& field, std::int64_t value);

// The message for a list of `entries` elements longer than `field`'s (max_entries), or nothing.
std::optional<std::string> entries_violation(const google::protobuf::FieldDescriptor& field, std::size_t entries);

// "<= 1e+18 FLOP/s; 0 or >= 1e+09 FLOP/s", "<= 10000", "<= 256 entries", "" for a field without
// limits (the reference's cell).
std::string limits_cell(const google::protobuf::FieldDescriptor& field);

// Shortest round-trip spelling of a limit: 10000, 1e+18, 3.2e+07.
std::string limit_number(double value);

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool is_valid_utf8(std::string_view text);

}  // namespace mofasim::scenario
