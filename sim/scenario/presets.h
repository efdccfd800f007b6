// Named starting points for the model and hardware sections (`model: {preset: llama2-70b}`).
// A preset is a YAML map of that section's fields; it is deep-merged UNDER the fields the user
// wrote, so explicit fields win (maps merge key by key, anything else is replaced whole).
// The presets shipped in scenarios/presets/{models,hardware}/<name>.yaml are embedded in the
// library at build time, so a binary works from any directory; tests may use their own catalog.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/diagnostics.h"
#include "sim/scenario/yaml_source.h"

namespace mofasim::scenario {

enum class PresetSection { kModel, kHardware };

struct PresetFile {
  PresetSection section = PresetSection::kModel;
  std::string name;  // the preset: value, e.g. "llama2-70b"
  std::string file;  // what errors name, e.g. "scenarios/presets/models/llama2-70b.yaml"
  std::string text;  // the YAML
};

class PresetCatalog {
 public:
  // The presets embedded from scenarios/presets/ when the library was built.
  static const PresetCatalog& embedded();
  // Reads <root>/models/*.yaml and <root>/hardware/*.yaml; files are named "<root>/models/x.yaml".
  // Throws std::invalid_argument when root is not a readable directory.
  static PresetCatalog from_directory(const std::string& root);

  // Adds or replaces (same section and name) a preset.
  void add(PresetFile preset);
  [[nodiscard]] const PresetFile* find(PresetSection section, std::string_view name) const;
  // Known names of one section, sorted.
  [[nodiscard]] std::vector<std::string> names(PresetSection section) const;

 private:
  std::vector<PresetFile> presets_;  // sorted by (section, name)
};

// For `model` and `hardware` in source.root(): if the section has a scalar `preset`, merges that
// preset's map under the section and grafts the merged-in nodes with the preset file as origin.
// Unknown preset names, unreadable preset YAML and a preset that names a preset are errors.
void merge_presets(YamlSource& source, const PresetCatalog& catalog, Diagnostics& diagnostics);

}  // namespace mofasim::scenario
