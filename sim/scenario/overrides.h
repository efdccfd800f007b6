// `--set field.path=value` overrides (e.g. parallelism.tp=4, topology.intra_node.bandwidth=300 GB/s,
// model.preset=llama3-405b). Each value is parsed as YAML and written into the scenario's YAML tree
// before presets are merged and the tree is converted, so units, validation and error messages are
// exactly those of the file. Errors name `--set` as the file, the override's position on the
// command line as the line and the column inside "path=value": `--set:2:18: ...`.
#pragma once

#include <string>
#include <vector>

#include "sim/scenario/diagnostics.h"
#include "sim/scenario/yaml_source.h"

namespace mofasim::scenario {

inline constexpr char kOverrideFile[] = "--set";

// Applies the overrides in order (a later one wins). The path must name fields of the schema
// (did-you-mean otherwise) and may pass only through singular message fields; the tree gains the
// maps it lacks. A bad override is reported and skipped.
void apply_overrides(YamlSource& source, const std::vector<std::string>& overrides, Diagnostics& diagnostics);

}  // namespace mofasim::scenario
