// Schema limits and UTF-8 checking (see limits.h).
#include "sim/scenario/limits.h"

#include <array>
#include <charconv>
#include <cstdint>

#include "proto/scenario.pb.h"
#include "sim/scenario/units.h"

namespace mofasim::scenario {
namespace {

namespace gpb = google::protobuf;

proto::Unit unit_of(const gpb::FieldDescriptor& field) {
  return field.options().GetExtension(proto::unit);
}

// " FLOP/s" for a unit field, "" for a plain number.
std::string unit_suffix(const gpb::FieldDescriptor& field) {
  const proto::Unit unit = unit_of(field);
  if (unit == proto::UNIT_NONE) return "";
  std::string out(1, ' ');
  out.append(base_unit_symbol(unit));
  return out;
}

}  // namespace

std::string limit_number(double value) {
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

std::string limit_reason(const gpb::FieldDescriptor& field) {
  const std::string& why = field.options().GetExtension(proto::limit_why);
  if (!why.empty()) return why;
  switch (unit_of(field)) {
    case proto::UNIT_SECONDS:
      return "longer than a year is a typo in a per-event time";
    case proto::UNIT_BYTES:
    case proto::UNIT_BYTES_PER_SECOND:
    case proto::UNIT_FLOPS_PER_SECOND:
      return "outside any real device; keeps every derived time finite";
    case proto::UNIT_NONE:
      break;
  }
  if (field.cpp_type() == gpb::FieldDescriptor::CPPTYPE_DOUBLE)
    return "far outside any measured value; keeps derived times finite";
  return "keeps the simulator's tables and 64-bit arithmetic bounded";
}

namespace {

// An integer field's limit is written as an integer (10000, 1000000000), a number's shortest.
std::string bound_text(const gpb::FieldDescriptor& field, double bound) {
  if (field.cpp_type() == gpb::FieldDescriptor::CPPTYPE_INT32 ||
      field.cpp_type() == gpb::FieldDescriptor::CPPTYPE_INT64) {
    return std::to_string(static_cast<std::int64_t>(bound));  // limits are at most 2^31, exact in double
  }
  return limit_number(bound) + unit_suffix(field);
}

std::optional<std::string> violation(const gpb::FieldDescriptor& field, double value, const std::string& shown) {
  const gpb::FieldOptions& options = field.options();
  if (options.HasExtension(proto::max) && value > options.GetExtension(proto::max)) {
    return "must be at most " + bound_text(field, options.GetExtension(proto::max)) + " (" + limit_reason(field) +
           "), got " + shown;
  }
  if (options.HasExtension(proto::min) && value > 0 && value < options.GetExtension(proto::min)) {
    return "must be at least " + bound_text(field, options.GetExtension(proto::min)) + " (" + limit_reason(field) +
           "), got " + shown;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> limit_violation(const gpb::FieldDescriptor& field, double value) {
  return violation(field, value, limit_number(value) + unit_suffix(field));
}

std::optional<std::string> limit_violation(const gpb::FieldDescriptor& field, std::int64_t value) {
  return violation(field, static_cast<double>(value), std::to_string(value));
}

std::optional<std::string> entries_violation(const gpb::FieldDescriptor& field, std::size_t entries) {
  const gpb::FieldOptions& options = field.options();
  if (!options.HasExtension(proto::max_entries)) return std::nullopt;
  const auto limit = static_cast<std::size_t>(options.GetExtension(proto::max_entries));
  if (entries <= limit) return std::nullopt;
  return "has " + std::to_string(entries) + " entries, at most " + std::to_string(limit) + " allowed (" +
         limit_reason(field) + ")";
}

std::string limits_cell(const gpb::FieldDescriptor& field) {
  const gpb::FieldOptions& options = field.options();
  std::string out;
  const bool has_min = options.HasExtension(proto::min);
  const bool has_max = options.HasExtension(proto::max);
  if (has_max) out = "<= " + bound_text(field, options.GetExtension(proto::max));
  if (has_min) {
    out = (out.empty() ? "" : out + "; ") + "nonzero >= " + bound_text(field, options.GetExtension(proto::min));
  }
  if (options.HasExtension(proto::max_entries)) {
    if (!out.empty()) out += "; ";
    out += "<= " + std::to_string(options.GetExtension(proto::max_entries)) + " entries";
  }
  return out;
}

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int more = 0;
    std::uint32_t code = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      more = 1;
      code = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
      more = 2;
      code = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
      more = 3;
      code = c & 0x07u;
    } else {
      return false;  // a continuation byte first, an overlong 2-byte lead (C0, C1), or F5..FF
    }
    if (i + static_cast<std::size_t>(more) >= text.size()) return false;  // truncated sequence
    for (int k = 1; k <= more; ++k) {
      const auto next = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      if ((next & 0xC0u) != 0x80u) return false;
      code = (code << 6) | (next & 0x3Fu);
    }
    if ((more == 2 && code < 0x800) || (more == 3 && code < 0x10000)) return false;  // overlong
    if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += static_cast<std::size_t>(more) + 1;
  }
  return true;
}

}  // namespace mofasim::scenario
