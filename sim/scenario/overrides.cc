// `--set` overrides applied to the YAML tree (see overrides.h).
#include "sim/scenario/overrides.h"

#include <string_view>

#include "proto/scenario.pb.h"
#include "sim/scenario/did_you_mean.h"

namespace mofasim::scenario {
namespace {

namespace gpb = google::protobuf;

struct Segment {
  std::string name;
  int column = 1;  // 1-based column of the segment in the override text
};

SourceLocation at_column(int index, int column) {
  return {.file = kOverrideFile, .line = index, .column = column};
}

// The value stored under `key` in `map` (first match), or an empty Node when absent.
bool find_value(const YAML::Node& map, std::string_view key, YAML::Node& out) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      out = it->second;
      return true;
    }
  }
  return false;
}

void apply_one(YamlSource& source, const std::string& text, int index, Diagnostics& diagnostics) {
  const auto equals = text.find('=');
  if (equals == std::string::npos) {
    diagnostics.error(at_column(index, 1), "",
                      "expected field.path=value (e.g. parallelism.tp=4), got '" + text + "'");
    return;
  }
  // Split the path into segments, remembering where each starts.
  std::vector<Segment> segments;
  std::size_t start = 0;
  const std::string_view path_text = std::string_view(text).substr(0, equals);
  for (;;) {
    const auto dot = path_text.find('.', start);
    const auto piece = path_text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    std::size_t lead = 0;
    while (lead < piece.size() && piece[lead] == ' ') ++lead;
    std::string_view trimmed = piece.substr(lead);
    while (!trimmed.empty() && trimmed.back() == ' ') trimmed.remove_suffix(1);
    segments.push_back({.name = std::string(trimmed), .column = static_cast<int>(start + lead) + 1});
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  // Check the path against the schema before touching the tree.
  const gpb::Descriptor* type = proto::Scenario::descriptor();
  std::string path;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Segment& segment = segments[i];
    const std::string shown = path.empty() ? "(top level)" : path;
    if (segment.name.empty()) {
      diagnostics.error(at_column(index, segment.column), shown, "empty field name in '" + std::string(path_text) + "'");
      return;
    }
    const gpb::FieldDescriptor* field = type->FindFieldByName(segment.name);
    if (field == nullptr) {
      std::vector<std::string> names;
      for (int f = 0; f < type->field_count(); ++f) names.push_back(type->field(f)->name());
      diagnostics.error(at_column(index, segment.column), shown, unknown_name_message("field", segment.name, names));
      return;
    }
    path = path.empty() ? segment.name : path + "." + segment.name;
    const bool last = i + 1 == segments.size();
    if (!last && (field->is_repeated() || field->cpp_type() != gpb::FieldDescriptor::CPPTYPE_MESSAGE)) {
      diagnostics.error(at_column(index, segment.column), path,
                        field->is_repeated() ? "a list cannot be entered with --set; set the whole list"
                                             : "is not a map of fields, so nothing can be set inside it");
      return;
    }
    if (!last) type = field->message_type();
  }
  // Parse the value as YAML ("4", "300 GB/s", "[10, 10]", "{enabled: true}").
  std::size_t value_start = equals + 1;
  while (value_start < text.size() && text[value_start] == ' ') ++value_start;
  const Origin value_origin{.file = kOverrideFile, .fixed_line = index,
                            .column_offset = static_cast<int>(value_start)};
  YAML::Node value;
  try {
    value = YAML::Load(text.substr(value_start));
  } catch (const YAML::Exception& e) {
    diagnostics.error(at_column(index, static_cast<int>(value_start) + 1), path, "invalid value: " + e.msg);
    return;
  }
  // Walk the tree, creating the maps it lacks, and put the value in place.
  const Origin path_origin{.file = kOverrideFile, .fixed_line = index, .column_offset = 0};
  if (source.root().IsNull()) source.root().reset(YAML::Node(YAML::NodeType::Map));
  if (!source.root().IsMap()) return;  // the converter reports the malformed document
  YAML::Node map = source.root();
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Segment& segment = segments[i];
    const bool last = i + 1 == segments.size();
    YAML::Node existing;
    const bool present = find_value(map, segment.name, existing);
    if (last) {
      if (present) {
        existing = value;  // rebinds the stored node to the new value
      } else {
        YAML::Node key(segment.name);
        map.force_insert(key, value);
        source.add_graft(key, {.file = kOverrideFile, .fixed_line = index, .column_offset = segment.column - 1});
      }
      source.add_graft(value, value_origin);
      return;
    }
    if (present && existing.IsMap()) {
      map.reset(existing);  // rebinds the handle; `=` would overwrite the parent's contents
      continue;
    }
    YAML::Node fresh(YAML::NodeType::Map);
    if (present) {
      existing = fresh;  // a scalar or list where a map belongs: the override replaces it
    } else {
      YAML::Node key(segment.name);
      map.force_insert(key, fresh);
      source.add_graft(key, {.file = kOverrideFile, .fixed_line = index, .column_offset = segment.column - 1});
    }
    source.add_graft(fresh, path_origin);
    map.reset(fresh);
  }
}

}  // namespace

void apply_overrides(YamlSource& source, const std::vector<std::string>& overrides, Diagnostics& diagnostics) {
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    apply_one(source, overrides[i], static_cast<int>(i) + 1, diagnostics);
  }
}

}  // namespace mofasim::scenario
