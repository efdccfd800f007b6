// Origins of grafted YAML nodes (see yaml_source.h).
#include "sim/scenario/yaml_source.h"

namespace mofasim::scenario {

void YamlSource::add_graft(const YAML::Node& node, Origin origin) { grafts_.emplace_back(node, std::move(origin)); }

const Origin& YamlSource::origin_of(const YAML::Node& node, const Origin& inherited) const {
  for (const auto& [graft, origin] : grafts_) {
    if (graft.is(node)) return origin;
  }
  return inherited;
}

SourceLocation YamlSource::locate(const YAML::Node& node, const Origin& origin) {
  const YAML::Mark mark = node.Mark();
  if (origin.fixed_line > 0) {
    const bool on_line = !mark.is_null() && mark.line == 0;
    return {.file = origin.file,
            .line = origin.fixed_line,
            .column = origin.column_offset + (on_line ? mark.column + 1 : 1)};
  }
  if (mark.is_null()) return {.file = origin.file, .line = 0, .column = 0};
  return {.file = origin.file, .line = mark.line + 1, .column = mark.column + 1};
}

}  // namespace mofasim::scenario
