// A scenario's YAML tree together with where each part of it came from. The user's file is the
// base; `--set` overrides and preset files are grafted into the same tree before conversion, so
// one converter handles all three, and an error in any part names its own file: the scenario
// file, `--set`, or scenarios/presets/<kind>/<name>.yaml.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/scenario/diagnostics.h"

namespace mofasim::scenario {

// How the marks (0-based line/column) of nodes from one input become a SourceLocation.
struct Origin {
  std::string file;
  // 0: marks are positions in `file`. > 0: the input is the fixed_line-th `--set` argument, a
  // one-line text; columns are counted from column_offset inside "path=value".
  int fixed_line = 0;
  int column_offset = 0;
};

class YamlSource {
 public:
  YamlSource(YAML::Node root, Origin origin) : root_(std::move(root)), origin_(std::move(origin)) {}

  [[nodiscard]] YAML::Node& root() { return root_; }
  [[nodiscard]] const YAML::Node& root() const { return root_; }
  [[nodiscard]] const Origin& origin() const { return origin_; }

  // Marks `node` (and, through inheritance in the converter, everything below it) as coming from
  // `origin`. Grafts are few (one per override and per preset key), so lookup is a linear scan.
  void add_graft(const YAML::Node& node, Origin origin);

  // The origin of `node`: its own graft if it has one, else `inherited` (the parent's origin).
  [[nodiscard]] const Origin& origin_of(const YAML::Node& node, const Origin& inherited) const;

  // `node`'s position under `origin`; a node without a mark gets line 0 (file only), or column 1
  // of its override for `--set`.
  [[nodiscard]] static SourceLocation locate(const YAML::Node& node, const Origin& origin);

 private:
  YAML::Node root_;
  Origin origin_;
  std::vector<std::pair<YAML::Node, Origin>> grafts_;
};

}  // namespace mofasim::scenario
