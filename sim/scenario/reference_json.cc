// JSON reference generated from the Scenario descriptors (see reference_json.h).
#include "sim/scenario/reference_json.h"

#include <set>
#include <string>
#include <vector>

#include "proto/scenario.pb.h"
#include "sim/scenario/limits.h"
#include "sim/scenario/units.h"
#include "sim/scenario/validate.h"

namespace mofasim::scenario {
namespace {

namespace gpb = google::protobuf;
using nlohmann::json;

std::string yaml_spelling(const gpb::EnumValueDescriptor& value) { return value.options().GetExtension(proto::yaml); }

json unit_json(proto::Unit unit) {
  json spellings = json::array();
  for (const auto& s : unit_spellings(unit)) spellings.push_back(std::string(s.symbol));
  return {{"kind", std::string(unit_kind_name(unit))},
          {"stored_as", std::string(base_unit_symbol(unit))},
          {"example", std::string(unit_example(unit))},
          {"spellings", spellings}};
}

// The field's type as a YAML author sees it: "int32", "double", "string", "bool", "enum" or "message".
json field_json(const gpb::FieldDescriptor& field) {
  using T = gpb::FieldDescriptor;
  json f = {{"key", field.name()}, {"repeated", field.is_repeated()}, {"doc", field.options().GetExtension(proto::doc)}};
  switch (field.cpp_type()) {
    case T::CPPTYPE_MESSAGE:
      f["type"] = "message";
      f["message"] = field.message_type()->name();
      break;
    case T::CPPTYPE_ENUM: {
      f["type"] = "enum";
      json values = json::array();
      const gpb::EnumDescriptor& e = *field.enum_type();
      for (int i = 0; i < e.value_count(); ++i) {
        if (e.value(i)->number() != 0) values.push_back(yaml_spelling(*e.value(i)));
      }
      f["values"] = values;
      break;
    }
    default: f["type"] = field.type_name(); break;
  }
  const proto::Unit unit = field.options().GetExtension(proto::unit);
  if (unit != proto::UNIT_NONE) {
    f["unit"] = {{"kind", std::string(unit_kind_name(unit))}, {"stored_as", std::string(base_unit_symbol(unit))}};
  }
  if (!field.is_repeated() && field.has_default_value()) {
    switch (field.cpp_type()) {
      case T::CPPTYPE_INT32: f["default"] = field.default_value_int32(); break;
      case T::CPPTYPE_INT64: f["default"] = field.default_value_int64(); break;
      case T::CPPTYPE_DOUBLE: f["default"] = field.default_value_double(); break;
      case T::CPPTYPE_BOOL: f["default"] = field.default_value_bool(); break;
      case T::CPPTYPE_STRING: f["default"] = field.default_value_string(); break;
      case T::CPPTYPE_ENUM: f["default"] = yaml_spelling(*field.default_value_enum()); break;
      default: break;
    }
  }
  const auto& options = field.options();
  if (options.HasExtension(proto::max) || options.HasExtension(proto::min) || options.HasExtension(proto::max_entries)) {
    json limits = {{"text", limits_cell(field)}, {"why", limit_reason(field)}};
    if (options.HasExtension(proto::min)) limits["min"] = options.GetExtension(proto::min);
    if (options.HasExtension(proto::max)) limits["max"] = options.GetExtension(proto::max);
    if (options.HasExtension(proto::max_entries)) limits["max_entries"] = options.GetExtension(proto::max_entries);
    f["limits"] = limits;
  }
  return f;
}

// Depth-first from Scenario, each message once, with every path that reaches it (as in the Markdown).
void collect(const gpb::Descriptor& type, const std::string& path, std::vector<const gpb::Descriptor*>& order,
             std::set<std::string>& seen, json& used_at) {
  for (int i = 0; i < type.field_count(); ++i) {
    const gpb::FieldDescriptor& field = *type.field(i);
    const gpb::Descriptor* nested = field.message_type();
    if (nested == nullptr) continue;
    std::string shown = path.empty() ? field.name() : path + "." + field.name();
    if (field.is_repeated()) shown += "[]";
    used_at[nested->name()].push_back(shown);
    if (seen.insert(nested->full_name()).second) order.push_back(nested);
    collect(*nested, shown, order, seen, used_at);
  }
}

}  // namespace

json scenario_reference_json() {
  json units = json::array();
  for (const auto unit : {proto::UNIT_BYTES, proto::UNIT_SECONDS, proto::UNIT_BYTES_PER_SECOND,
                          proto::UNIT_FLOPS_PER_SECOND}) {
    units.push_back(unit_json(unit));
  }
  const gpb::Descriptor& root = *proto::Scenario::descriptor();
  std::vector<const gpb::Descriptor*> order{&root};
  std::set<std::string> seen{root.full_name()};
  json used_at = json::object();
  collect(root, "", order, seen, used_at);
  json messages = json::array();
  for (const gpb::Descriptor* type : order) {
    json fields = json::array();
    for (int i = 0; i < type->field_count(); ++i) fields.push_back(field_json(*type->field(i)));
    messages.push_back({{"name", type->name()},
                        {"doc", type->options().GetExtension(proto::message_doc)},
                        {"used_at", used_at.contains(type->name()) ? used_at[type->name()] : json::array()},
                        {"fields", fields}});
  }
  json rules = json::array();
  for (const auto rule : validation_rules()) rules.push_back(std::string(rule));
  return {{"root", root.name()}, {"units", units}, {"messages", messages}, {"validation_rules", rules}};
}

}  // namespace mofasim::scenario
