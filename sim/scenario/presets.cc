// Preset catalogs and the preset merge (see presets.h).
#include "sim/scenario/presets.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "sim/scenario/did_you_mean.h"
#include "sim/scenario/embedded_presets.h"

namespace mofasim::scenario {
namespace {

constexpr std::string_view kModelsFolder = "models";
constexpr std::string_view kHardwareFolder = "hardware";

std::string_view section_key(PresetSection section) {
  return section == PresetSection::kModel ? "model" : "hardware";
}

// "scenarios/presets/models/x.yaml" -> section and name; false for anything else.
bool split_preset_path(std::string_view path, PresetSection& section, std::string& name) {
  const std::filesystem::path p(path);
  if (p.extension() != ".yaml") return false;
  const std::string folder = p.parent_path().filename().string();
  if (folder == kModelsFolder) {
    section = PresetSection::kModel;
  } else if (folder == kHardwareFolder) {
    section = PresetSection::kHardware;
  } else {
    return false;
  }
  name = p.stem().string();
  return true;
}

// The value of `key` in map `map`, or an invalid-to-use null Node when absent (first match wins).
bool find_entry(const YAML::Node& map, std::string_view key, YAML::Node& key_out, YAML::Node& value_out) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      key_out = it->first;
      value_out = it->second;
      return true;
    }
  }
  return false;
}

// Deep merge: every key of `preset` missing from `target` is inserted (and grafted with `origin`);
// keys present in both recurse when both values are maps; otherwise the target keeps its value.
void merge_under(YAML::Node target, const YAML::Node& preset, const Origin& origin, YamlSource& source) {
  for (auto it = preset.begin(); it != preset.end(); ++it) {
    YAML::Node key;
    YAML::Node value;
    const bool present = it->first.IsScalar() && find_entry(target, it->first.Scalar(), key, value);
    if (!present) {
      target.force_insert(it->first, it->second);
      source.add_graft(it->first, origin);
      source.add_graft(it->second, origin);
    } else if (value.IsMap() && it->second.IsMap()) {
      merge_under(value, it->second, origin, source);
    }
  }
}

}  // namespace

const PresetCatalog& PresetCatalog::embedded() {
  static const PresetCatalog catalog = [] {
    PresetCatalog c;
    for (const auto& file : internal::embedded_preset_files()) {
      PresetFile preset{.section = PresetSection::kModel, .name = {}, .file = std::string(file.path),
                        .text = std::string(file.text)};
      if (split_preset_path(file.path, preset.section, preset.name)) c.add(std::move(preset));
    }
    return c;
  }();
  return catalog;
}

PresetCatalog PresetCatalog::from_directory(const std::string& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw std::invalid_argument("preset directory '" + root + "' does not exist");
  PresetCatalog c;
  for (const auto folder : {kModelsFolder, kHardwareFolder}) {
    const fs::path dir = fs::path(root) / folder;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      PresetFile preset{.section = PresetSection::kModel, .name = {}, .file = path.string(), .text = text.str()};
      if (split_preset_path(path.string(), preset.section, preset.name)) c.add(std::move(preset));
    }
  }
  return c;
}

void PresetCatalog::add(PresetFile preset) {
  const auto key = [](const PresetFile& p) { return std::tie(p.section, p.name); };
  auto it = std::lower_bound(presets_.begin(), presets_.end(), preset,
                             [&](const PresetFile& a, const PresetFile& b) { return key(a) < key(b); });
  if (it != presets_.end() && key(*it) == key(preset)) {
    *it = std::move(preset);
  } else {
    presets_.insert(it, std::move(preset));
  }
}

const PresetFile* PresetCatalog::find(PresetSection section, std::string_view name) const {
  for (const auto& preset : presets_) {
    if (preset.section == section && preset.name == name) return &preset;
  }
  return nullptr;
}

std::vector<std::string> PresetCatalog::names(PresetSection section) const {
  std::vector<std::string> out;
  for (const auto& preset : presets_) {
    if (preset.section == section) out.push_back(preset.name);
  }
  return out;
}

namespace {

// Merges the preset named by `section_map`'s scalar `preset` (if any) under it; `path` is the
// section's field path ("hardware", "topology.node_hardware[1].hardware").
void merge_section(YamlSource& source, const PresetCatalog& catalog, Diagnostics& diagnostics, PresetSection section,
                   const std::string& path_prefix, YAML::Node section_map, const Origin& section_origin) {
  const std::string key_name(section_key(section));
  YAML::Node preset_key;
  YAML::Node preset_value;
  if (!find_entry(section_map, "preset", preset_key, preset_value) || !preset_value.IsScalar()) return;
  const Origin& value_origin = source.origin_of(preset_value, source.origin_of(preset_key, section_origin));
  const std::string path = path_prefix + ".preset";
  const std::string& name = preset_value.Scalar();
  const PresetFile* preset = catalog.find(section, name);
  if (preset == nullptr) {
    const auto known = catalog.names(section);
    std::string message = unknown_name_message(key_name + " preset", name, known);
    if (message.find("did you mean") != std::string::npos && !known.empty()) {
      message += " (known: " + join_names(known) + ")";
    }
    diagnostics.error(YamlSource::locate(preset_value, value_origin), path, message);
    return;
  }
  const Origin preset_origin{.file = preset->file, .fixed_line = 0, .column_offset = 0};
  YAML::Node tree;
  try {
    tree = YAML::Load(preset->text);
  } catch (const YAML::Exception& e) {
    const SourceLocation at{.file = preset->file, .line = e.mark.is_null() ? 0 : e.mark.line + 1,
                            .column = e.mark.is_null() ? 0 : e.mark.column + 1};
    diagnostics.error(at, "", "invalid YAML: " + e.msg);
    return;
  }
  if (!tree.IsMap()) {
    diagnostics.error({.file = preset->file, .line = 1, .column = 1}, key_name,
                      "a preset file must be a map of " + key_name + " fields");
    return;
  }
  YAML::Node nested_key;
  YAML::Node nested_value;
  if (find_entry(tree, "preset", nested_key, nested_value)) {
    diagnostics.error(YamlSource::locate(nested_key, preset_origin), path, "a preset cannot name another preset");
    return;
  }
  merge_under(section_map, tree, preset_origin, source);
}

}  // namespace

void merge_presets(YamlSource& source, const PresetCatalog& catalog, Diagnostics& diagnostics) {
  const YAML::Node& root = source.root();
  if (!root.IsMap()) return;  // the converter reports it
  for (const auto section : {PresetSection::kModel, PresetSection::kHardware}) {
    const std::string key_name(section_key(section));
    YAML::Node section_key_node;
    YAML::Node section_map;
    if (!find_entry(root, key_name, section_key_node, section_map) || !section_map.IsMap()) continue;
    merge_section(source, catalog, diagnostics, section, key_name, section_map,
                  source.origin_of(section_map, source.origin_of(section_key_node, source.origin())));
  }
  // Heterogeneous GPUs: topology.node_hardware[i].hardware takes a hardware preset too.
  YAML::Node topology_key;
  YAML::Node topology;
  YAML::Node list_key;
  YAML::Node list;
  if (!find_entry(root, "topology", topology_key, topology) || !topology.IsMap() ||
      !find_entry(topology, "node_hardware", list_key, list) || !list.IsSequence()) {
    return;
  }
  // Origins are inherited down the path (a --set value is grafted at its top node).
  const Origin& list_origin = source.origin_of(
      list, source.origin_of(list_key, source.origin_of(topology, source.origin_of(topology_key, source.origin()))));
  for (std::size_t i = 0; i < list.size(); ++i) {
    YAML::Node entry = list[i];
    YAML::Node hw_key;
    YAML::Node hw;
    if (!entry.IsMap() || !find_entry(entry, "hardware", hw_key, hw) || !hw.IsMap()) continue;
    merge_section(source, catalog, diagnostics, PresetSection::kHardware,
                  "topology.node_hardware[" + std::to_string(i) + "].hardware", hw,
                  source.origin_of(hw, source.origin_of(hw_key, source.origin_of(entry, list_origin))));
  }
}

}  // namespace mofasim::scenario
