// The preset files compiled into the library: generated at build time by embed_presets.cmake
// from scenarios/presets/ (models/*.yaml, hardware/*.yaml). Internal to sim/scenario/.
#pragma once

#include <span>
#include <string_view>

namespace mofasim::scenario::internal {

struct EmbeddedFile {
  std::string_view path;  // relative to the repository root, e.g. "scenarios/presets/models/x.yaml"
  std::string_view text;
};

// Sorted by path.
std::span<const EmbeddedFile> embedded_preset_files();

}  // namespace mofasim::scenario::internal
