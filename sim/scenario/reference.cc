// Markdown reference generated from the Scenario descriptors (see reference.h).
#include "sim/scenario/reference.h"

#include <array>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "proto/scenario.pb.h"
#include "sim/scenario/limits.h"
#include "sim/scenario/units.h"
#include "sim/scenario/validate.h"

namespace mofasim::scenario {
namespace {

namespace gpb = google::protobuf;

// Whole numbers below 1e15 in full ("40000000"), anything else in the shortest exact form.
std::string shortest(double v) {
  std::array<char, 32> buffer{};
  const bool whole = v == std::floor(v) && std::fabs(v) < 1e15;
  const auto result = whole ? std::to_chars(buffer.data(), buffer.data() + buffer.size(), v, std::chars_format::fixed)
                            : std::to_chars(buffer.data(), buffer.data() + buffer.size(), v);
  return std::string(buffer.data(), result.ptr);
}

std::string yaml_spelling(const gpb::EnumValueDescriptor& value) { return value.options().GetExtension(proto::yaml); }

std::string anchor(const gpb::Descriptor& type) {
  std::string out;
  for (char c : type.name()) out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::string type_cell(const gpb::FieldDescriptor& field) {
  using T = gpb::FieldDescriptor;
  std::string type;
  switch (field.cpp_type()) {
    case T::CPPTYPE_MESSAGE:
      type = "[" + field.message_type()->name() + "](#" + anchor(*field.message_type()) + ")";
      break;
    case T::CPPTYPE_ENUM: {
      type = "enum: ";
      const gpb::EnumDescriptor& e = *field.enum_type();
      bool first = true;
      for (int i = 0; i < e.value_count(); ++i) {
        if (e.value(i)->number() == 0) continue;
        type += (first ? "`" : " \\| `") + yaml_spelling(*e.value(i)) + "`";
        first = false;
      }
      break;
    }
    default: type = field.type_name(); break;
  }
  return field.is_repeated() ? "list of " + type : type;
}

std::string unit_cell(const gpb::FieldDescriptor& field) {
  const proto::Unit unit = field.options().GetExtension(proto::unit);
  if (unit == proto::UNIT_NONE) return "";
  return std::string(unit_kind_name(unit)) + " (`\"" + std::string(unit_example(unit)) + "\"`)";
}

// Strings are built piecewise here and in units.cc: g++ 12's -Wrestrict misfires on
// `"literal" + std::string(...)`.
std::string default_cell(const gpb::FieldDescriptor& field) {
  using T = gpb::FieldDescriptor;
  if (field.is_repeated() || !field.has_default_value()) return "";
  std::string value;
  switch (field.cpp_type()) {
    case T::CPPTYPE_INT32: value = std::to_string(field.default_value_int32()); break;
    case T::CPPTYPE_INT64: value = std::to_string(field.default_value_int64()); break;
    case T::CPPTYPE_DOUBLE: value = shortest(field.default_value_double()); break;
    case T::CPPTYPE_BOOL: value = field.default_value_bool() ? "true" : "false"; break;
    case T::CPPTYPE_STRING: value = field.default_value_string(); break;
    case T::CPPTYPE_ENUM: value = yaml_spelling(*field.default_value_enum()); break;
    default: return "";
  }
  const proto::Unit unit = field.options().GetExtension(proto::unit);
  if (unit != proto::UNIT_NONE) {
    value += ' ';
    value.append(base_unit_symbol(unit));
  }
  value.insert(value.begin(), '`');
  value += '`';
  return value;
}

std::string escape_cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\";
    out += c;
  }
  return out;
}

// Messages in the order a reader meets them: depth-first from Scenario, each once.
void collect(const gpb::Descriptor& type, std::vector<const gpb::Descriptor*>& order,
             std::set<std::string>& seen) {
  if (!seen.insert(type.full_name()).second) return;
  order.push_back(&type);
  for (int i = 0; i < type.field_count(); ++i) {
    if (const auto* nested = type.field(i)->message_type()) collect(*nested, order, seen);
  }
}

void write_units(std::ostringstream& out) {
  out << "## Units\n\n"
      << "A field with a unit takes a string: a number (sign-less, optional exponent) and one of the\n"
      << "spellings below, with or without a space (`\"400 GB/s\"`, `\"1.5us\"`). A bare number is an\n"
      << "error. Decimal prefixes are powers of 1000, `Ki`/`Mi`/`Gi`/`Ti`/`Pi` powers of 1024, and a\n"
      << "lower-case `b` means bits (divided by 8). Values are stored in the base unit.\n\n"
      << "| unit | stored as | spellings |\n| --- | --- | --- |\n";
  for (const auto unit : {proto::UNIT_BYTES, proto::UNIT_SECONDS, proto::UNIT_BYTES_PER_SECOND,
                          proto::UNIT_FLOPS_PER_SECOND}) {
    out << "| " << unit_kind_name(unit) << " | " << base_unit_symbol(unit) << " |";
    bool first = true;
    for (const auto& spelling : unit_spellings(unit)) {
      out << (first ? " `" : ", `") << spelling.symbol << "`";
      first = false;
    }
    out << " |\n";
  }
  out << "\n";
}

void write_message(std::ostringstream& out, const gpb::Descriptor& type, const std::string& where) {
  out << "## " << type.name() << "\n\n";
  const std::string doc = type.options().GetExtension(proto::message_doc);
  if (!doc.empty()) out << doc << "\n\n";
  if (!where.empty()) out << "Used at: " << where << ".\n\n";
  out << "| key | type | unit | default | limits | description |\n| --- | --- | --- | --- | --- | --- |\n";
  for (int i = 0; i < type.field_count(); ++i) {
    const gpb::FieldDescriptor& field = *type.field(i);
    out << "| `" << field.name() << "` | " << type_cell(field) << " | " << unit_cell(field) << " | "
        << default_cell(field) << " | " << limits_cell(field) << " | "
        << escape_cell(field.options().GetExtension(proto::doc)) << " |\n";
  }
  out << "\n";
}

// "model.moe, ..." for every path that reaches `type` from Scenario (the schema is a tree here).
void paths_to(const gpb::Descriptor& from, const std::string& prefix, const gpb::Descriptor& target,
              std::vector<std::string>& out) {
  for (int i = 0; i < from.field_count(); ++i) {
    const gpb::FieldDescriptor& field = *from.field(i);
    const gpb::Descriptor* nested = field.message_type();
    if (nested == nullptr) continue;
    const std::string path = prefix.empty() ? field.name() : prefix + "." + field.name() + "";
    const std::string shown = field.is_repeated() ? path + "[]" : path;
    if (nested == &target) out.push_back("`" + shown + "`");
    paths_to(*nested, shown, target, out);
  }
}

}  // namespace

std::string scenario_reference_markdown() {
  std::ostringstream out;
  out << "<!-- Generated from proto/scenario.proto by mofasim::scenario::scenario_reference_markdown()\n"
      << "     (`mofasim schema`). Do not edit by hand: change the proto, then regenerate with\n"
      << "     MOFASIM_REGENERATE_DOCS=1 ctest -R ScenarioReference. -->\n\n"
      << "# Scenario reference\n\n"
      << "A scenario is one YAML file whose keys are the fields below (proto/scenario.proto is the\n"
      << "source). Unknown keys, duplicate keys, wrong types, negative or non-finite numbers and bare\n"
      << "numbers for unit fields are errors, each reported as `file:line:col: field.path: message`.\n"
      << "`model` and `hardware` accept `preset: <name>`: the preset's fields are merged under the\n"
      << "ones written (explicit fields win). `--set field.path=value` overrides any field and is\n"
      << "checked the same way (errors name `--set` as the file).\n\n"
      << "## Limits\n\n"
      << "Every count and size has bounds (the `limits` column, in the stored unit): a value above the\n"
      << "maximum, or above 0 but below the minimum, is refused where it is written, before anything\n"
      << "is allocated. Lists have a maximum number of entries. Derived sizes have budgets too (see the\n"
      << "validation rules): simulator tasks per step, Monte Carlo events per trial and the step\n"
      << "count. A scenario file is at most 4 MiB and must be a regular file (never a device or a\n"
      << "FIFO); every string is valid UTF-8. At most 20 errors are listed, then `... and N more errors`.\n\n";
  write_units(out);
  std::vector<const gpb::Descriptor*> order;
  std::set<std::string> seen;
  collect(*proto::Scenario::descriptor(), order, seen);
  for (const auto* type : order) {
    std::vector<std::string> where;
    paths_to(*proto::Scenario::descriptor(), "", *type, where);
    std::string joined;
    for (const auto& w : where) joined += (joined.empty() ? "" : ", ") + w;
    write_message(out, *type, joined);
  }
  out << "## Derived defaults\n\n"
      << "Filled after validation when absent, so every consumer sees the same values:\n\n"
      << "- `model.num_kv_heads` = `num_attention_heads`; `model.head_dim` = `hidden_size / num_attention_heads`\n"
      << "- `model.attention` = `mla` when `mla` is given, else `mha` (kv heads = heads), `mqa` (1 kv head) or `gqa`\n"
      << "- `model.moe.shared_expert_ffn_hidden_size` = `expert_ffn_hidden_size`\n"
      << "- `topology.nics_per_node` = `gpus_per_node`; `topology.inter_supernode` = `inter_node`\n"
      << "- `fault_tolerance.gpus_per_failure_unit` = `topology.gpus_per_node`\n"
      << "- `fault_tolerance.failure_classes` = process 3 x 141 s, pod 6 x 262 s, job 1 x 307 s (fixed)\n\n"
      << "## Validation rules\n\n";
  for (const auto rule : validation_rules()) out << "- " << rule << "\n";
  return out.str();
}

}  // namespace mofasim::scenario
