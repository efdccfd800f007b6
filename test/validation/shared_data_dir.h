// Where the public reference measurements are read from: $MOFASIM_SHARED_DIR when it is set (a
// checkout that does not sit beside ../shared), otherwise ../shared beside the source tree. The
// validation tests that read it skip with a message when the folder is absent.
#pragma once

#include <cstdlib>
#include <string>

namespace mofasim::analysis {

inline std::string shared_data_dir() {
  const char* shared = std::getenv("MOFASIM_SHARED_DIR");
  if (shared != nullptr && *shared != 0) return shared;
  return std::string(MOFASIM_SOURCE_DIR) + "/../shared";
}

}  // namespace mofasim::analysis
