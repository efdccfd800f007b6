// The scenarios the repository ships, for the tests that run every one of them.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace mofasim::test {

// Every .yaml of scenarios/ and scenarios/mofa/ (not the presets), as paths relative to the
// repository root ("scenarios/small.yaml"), sorted.
inline std::vector<std::string> shipped_scenarios() {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const char* dir : {"scenarios", "scenarios/mofa"}) {
    for (const auto& e : fs::directory_iterator(fs::path(MOFASIM_SOURCE_DIR) / dir)) {
      if (e.path().extension() == ".yaml") files.push_back(fs::relative(e.path(), MOFASIM_SOURCE_DIR).string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The same files, in the same order, under MOFASIM_SOURCE_DIR: paths that do not depend on the
// working directory.
inline std::vector<std::filesystem::path> shipped_scenario_paths() {
  std::vector<std::filesystem::path> paths;
  for (const std::string& file : shipped_scenarios()) paths.push_back(std::filesystem::path(MOFASIM_SOURCE_DIR) / file);
  return paths;
}

}  // namespace mofasim::test
