// Descriptor-driven YAML -> proto conversion (see yaml_to_proto.h).
#include "sim/scenario/yaml_to_proto.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/did_you_mean.h"
#include "sim/scenario/limits.h"
#include "sim/scenario/units.h"
#include "sim/units/check.h"

namespace mofasim::scenario {
namespace {

namespace gpb = google::protobuf;

std::string quoted(std::string_view text) {
  constexpr std::size_t kMaxShown = 60;
  std::string out(1, '\'');  // appended piecewise: g++ 12 -Wrestrict misfires on "'" + std::string
  out.append(text.substr(0, kMaxShown));
  if (text.size() > kMaxShown) out += "...";
  out += '\'';
  return out;
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return quoted(node.Scalar());
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return "nothing";
  }
  return "nothing";
}

std::string join_path(const std::string& path, std::string_view name) {
  return path.empty() ? std::string(name) : path + "." + std::string(name);
}

std::string type_phrase(const gpb::FieldDescriptor& field) {
  using T = gpb::FieldDescriptor;
  const proto::Unit unit = field.options().GetExtension(proto::unit);
  if (unit != proto::UNIT_NONE) return "a " + std::string(unit_kind_name(unit));
  switch (field.cpp_type()) {
    case T::CPPTYPE_INT32:
    case T::CPPTYPE_INT64:
    case T::CPPTYPE_UINT32:
    case T::CPPTYPE_UINT64: return "an integer";
    case T::CPPTYPE_DOUBLE:
    case T::CPPTYPE_FLOAT: return "a number";
    case T::CPPTYPE_BOOL: return "true or false";
    case T::CPPTYPE_STRING: return "a string";
    case T::CPPTYPE_ENUM: return "one of the " + field.enum_type()->name() + " names";
    case T::CPPTYPE_MESSAGE: return "a map of " + field.message_type()->name() + " fields";
  }
  return "a value";
}

// The YAML spellings of an enum's values, value 0 ("unspecified") excluded: it means "not given".
std::vector<std::string> enum_spellings(const gpb::EnumDescriptor& type) {
  std::vector<std::string> names;
  for (int i = 0; i < type.value_count(); ++i) {
    const auto* value = type.value(i);
    if (value->number() == 0) continue;
    names.push_back(value->options().GetExtension(proto::yaml));
  }
  return names;
}

class Converter {
 public:
  Converter(const YamlSource& source, SourceMap& sources, Diagnostics& diagnostics)
      : source_(source), sources_(sources), diagnostics_(diagnostics) {}

  void convert_root(proto::Scenario& out) {
    const YAML::Node& root = source_.root();
    const Origin& origin = source_.origin_of(root, source_.origin());
    sources_.record("", {.file = origin.file, .line = 1, .column = 1});
    if (root.IsNull()) return;  // an empty document: validation reports what is missing
    if (!root.IsMap()) {
      error(root, origin, "", "expected a map of Scenario fields (model, hardware, ...), got " + describe_node(root));
      return;
    }
    convert_map(root, origin, out, "");
  }

 private:
  void error(const YAML::Node& at, const Origin& origin, const std::string& path, const std::string& message) {
    diagnostics_.error(YamlSource::locate(at, origin), path, message);
  }

  void convert_map(const YAML::Node& map, const Origin& origin, gpb::Message& message, const std::string& path) {
    const gpb::Descriptor& type = *message.GetDescriptor();
    std::map<std::string, SourceLocation, std::less<>> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;  // copies: the iterator hands out temporaries
      const YAML::Node value = it->second;
      const Origin& key_origin = source_.origin_of(key, origin);
      if (!key.IsScalar()) {
        error(key, key_origin, path, "keys must be field names, got " + describe_node(key));
        continue;
      }
      const std::string& name = key.Scalar();
      if (!is_valid_utf8(name)) {
        error(key, key_origin, path.empty() ? "(top level)" : path,
              "keys must be field names, got text that is not valid UTF-8");
        continue;
      }
      const std::string field_path = join_path(path, name);
      const gpb::FieldDescriptor* field = type.FindFieldByName(name);
      if (field == nullptr) {
        std::vector<std::string> names;
        for (int i = 0; i < type.field_count(); ++i) names.push_back(type.field(i)->name());
        error(key, key_origin, path.empty() ? "(top level)" : path, unknown_name_message("field", name, names));
        continue;
      }
      const SourceLocation key_at = YamlSource::locate(key, key_origin);
      if (auto first = seen.find(name); first != seen.end()) {
        error(key, key_origin, field_path, "duplicate key; first given at " + format_location(first->second));
        continue;
      }
      seen.emplace(name, key_at);
      const Origin& value_origin = source_.origin_of(value, key_origin);
      // A missing value ("tp:") has no useful mark of its own: point at the key.
      const YAML::Node& anchor = value.IsNull() ? key : value;
      const Origin& anchor_origin = value.IsNull() ? key_origin : value_origin;
      convert_field(value, anchor, anchor_origin, message, *field, field_path);
    }
  }

  void convert_field(const YAML::Node& value, const YAML::Node& anchor, const Origin& origin, gpb::Message& message,
                     const gpb::FieldDescriptor& field, const std::string& path) {
    const gpb::Reflection& reflection = *message.GetReflection();
    if (field.is_repeated()) {
      if (!value.IsSequence()) {
        error(anchor, origin, path, "expected a list of " + element_phrase(field) + ", got " + describe_node(value));
        return;
      }
      if (auto too_many = entries_violation(field, value.size())) {  // before any element is read
        error(anchor, origin, path, *too_many);
        return;
      }
      reflection.ClearField(&message, &field);
      sources_.record(path, YamlSource::locate(anchor, origin));
      std::size_t index = 0;
      for (const auto& element : value) {
        const std::string element_path = path + "[" + std::to_string(index++) + "]";
        const Origin& element_origin = source_.origin_of(element, origin);
        if (field.cpp_type() == gpb::FieldDescriptor::CPPTYPE_MESSAGE) {
          if (!element.IsMap()) {
            error(element, element_origin, element_path,
                  "expected a map of " + field.message_type()->name() + " fields, got " + describe_node(element));
            continue;
          }
          sources_.record(element_path, YamlSource::locate(element, element_origin));
          convert_map(element, element_origin, *reflection.AddMessage(&message, &field), element_path);
        } else {
          set_scalar(element, element, element_origin, message, field, element_path);
        }
      }
      return;
    }
    if (field.cpp_type() == gpb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!value.IsMap()) {
        error(anchor, origin, path, "expected " + type_phrase(field) + ", got " + describe_node(value));
        return;
      }
      sources_.record(path, YamlSource::locate(anchor, origin));
      convert_map(value, origin, *reflection.MutableMessage(&message, &field), path);
      return;
    }
    set_scalar(value, anchor, origin, message, field, path);
  }

  static std::string element_phrase(const gpb::FieldDescriptor& field) {
    if (field.cpp_type() == gpb::FieldDescriptor::CPPTYPE_MESSAGE) return field.message_type()->name() + " maps";
    const std::string phrase = type_phrase(field);
    return phrase.substr(phrase.find(' ') + 1) + (phrase.ends_with("s") ? "" : "s");
  }

  // Parses one scalar for `field` and sets it (or appends it, for a repeated field).
  void set_scalar(const YAML::Node& value, const YAML::Node& anchor, const Origin& origin, gpb::Message& message,
                  const gpb::FieldDescriptor& field, const std::string& path) {
    using T = gpb::FieldDescriptor;
    const gpb::Reflection& reflection = *message.GetReflection();
    if (!value.IsScalar()) {
      error(anchor, origin, path, "expected " + type_phrase(field) + ", got " + describe_node(value));
      return;
    }
    const std::string& text = value.Scalar();
    if (!is_valid_utf8(text)) {
      error(anchor, origin, path, "expected " + type_phrase(field) + ", got text that is not valid UTF-8");
      return;
    }
    const bool repeated = field.is_repeated();
    switch (field.cpp_type()) {
      case T::CPPTYPE_INT32:
      case T::CPPTYPE_INT64: {
        const bool is32 = field.cpp_type() == T::CPPTYPE_INT32;
        auto parsed = parse_integer(text, is32);
        if (!parsed.ok) {
          error(anchor, origin, path, parsed.error);
          return;
        }
        if (auto outside = limit_violation(field, parsed.value)) {
          error(anchor, origin, path, *outside);
          return;
        }
        if (is32) {
          const auto v = static_cast<std::int32_t>(parsed.value);
          repeated ? reflection.AddInt32(&message, &field, v) : reflection.SetInt32(&message, &field, v);
        } else {
          repeated ? reflection.AddInt64(&message, &field, parsed.value)
                   : reflection.SetInt64(&message, &field, parsed.value);
        }
        break;
      }
      case T::CPPTYPE_DOUBLE: {
        const proto::Unit unit = field.options().GetExtension(proto::unit);
        double v = 0;
        if (unit != proto::UNIT_NONE) {
          const QuantityParse parsed = parse_quantity(text, unit);
          if (!parsed.value) {
            error(anchor, origin, path, parsed.error);
            return;
          }
          v = *parsed.value;
        } else {
          auto parsed = parse_double(text);
          if (!parsed.ok) {
            error(anchor, origin, path, parsed.error);
            return;
          }
          v = parsed.value;
        }
        if (auto outside = limit_violation(field, v)) {
          error(anchor, origin, path, *outside);
          return;
        }
        repeated ? reflection.AddDouble(&message, &field, v) : reflection.SetDouble(&message, &field, v);
        break;
      }
      case T::CPPTYPE_BOOL: {
        bool v = false;
        if (text == "true" || text == "True" || text == "TRUE") {
          v = true;
        } else if (text == "false" || text == "False" || text == "FALSE") {
          v = false;
        } else {
          error(anchor, origin, path, "expected true or false, got " + quoted(text));
          return;
        }
        repeated ? reflection.AddBool(&message, &field, v) : reflection.SetBool(&message, &field, v);
        break;
      }
      case T::CPPTYPE_STRING:
        repeated ? reflection.AddString(&message, &field, text) : reflection.SetString(&message, &field, text);
        break;
      case T::CPPTYPE_ENUM: {
        const gpb::EnumDescriptor& type = *field.enum_type();
        const gpb::EnumValueDescriptor* match = nullptr;
        for (int i = 0; i < type.value_count(); ++i) {
          const auto* candidate = type.value(i);
          if (candidate->number() != 0 && candidate->options().GetExtension(proto::yaml) == text) match = candidate;
        }
        if (match == nullptr) {
          error(anchor, origin, path, unknown_name_message(field.name(), text, enum_spellings(type)));
          return;
        }
        repeated ? reflection.AddEnumValue(&message, &field, match->number())
                 : reflection.SetEnumValue(&message, &field, match->number());
        break;
      }
      default:
        MOFASIM_UNREACHABLE("scenario.proto uses a field type the YAML loader does not handle: " + field.full_name());
    }
    sources_.record(path, YamlSource::locate(anchor, origin));  // for a list element, path ends in [i]
  }

  template <typename V>
  struct Parsed {
    bool ok = false;
    V value{};
    std::string error;
  };

  static bool mentions_non_finite(std::string_view text) {
    std::string lower;
    for (char c : text) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return lower.find("nan") != std::string::npos || lower.find("inf") != std::string::npos;
  }

  static Parsed<std::int64_t> parse_integer(std::string_view text, bool is32) {
    std::string_view digits = text;
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    const bool whole = ptr == digits.data() + digits.size() && !digits.empty();
    const std::int64_t max = is32 ? std::numeric_limits<std::int32_t>::max() : std::numeric_limits<std::int64_t>::max();
    if (ec == std::errc::result_out_of_range && whole) {
      return {.ok = false, .value = 0, .error = "out of range: " + quoted(text) + " (at most " + std::to_string(max) + ")"};
    }
    if (ec != std::errc() || !whole) return {.ok = false, .value = 0, .error = "expected an integer, got " + quoted(text)};
    if (v < 0) return {.ok = false, .value = 0, .error = "must not be negative, got " + std::to_string(v)};
    if (v > max) {
      return {.ok = false, .value = 0, .error = "out of range: " + quoted(text) + " (at most " + std::to_string(max) + ")"};
    }
    return {.ok = true, .value = v, .error = {}};
  }

  static Parsed<double> parse_double(std::string_view text) {
    std::string_view digits = text;
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    double v = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    const bool whole = ptr == digits.data() + digits.size() && !digits.empty();
    if (mentions_non_finite(text) && (ec != std::errc() || !whole || !std::isfinite(v))) {
      return {.ok = false, .value = 0, .error = "must be a finite number, got " + quoted(text)};
    }
    if (ec == std::errc::result_out_of_range && whole) {
      return {.ok = false, .value = 0, .error = "out of range: " + quoted(text)};
    }
    if (ec != std::errc() || !whole) return {.ok = false, .value = 0, .error = "expected a number, got " + quoted(text)};
    if (!std::isfinite(v)) return {.ok = false, .value = 0, .error = "must be a finite number, got " + quoted(text)};
    if (v < 0) return {.ok = false, .value = 0, .error = "must not be negative, got " + quoted(text)};
    return {.ok = true, .value = v + 0.0, .error = {}};  // + 0.0 turns -0 into 0
  }

  const YamlSource& source_;
  SourceMap& sources_;
  Diagnostics& diagnostics_;
};

}  // namespace

void yaml_to_proto(const YamlSource& source, proto::Scenario& out, SourceMap& sources, Diagnostics& diagnostics) {
  Converter(source, sources, diagnostics).convert_root(out);
}

}  // namespace mofasim::scenario
