#include "sim/analysis/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace mofasim::analysis {

std::string read_input_file(const std::string& path, const std::string& what, std::size_t max_bytes) {
  const std::string prefix = path + ": cannot read the " + what + ": ";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(prefix + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(prefix + "it is a folder");
  if (!S_ISREG(st.st_mode)) throw InputError(prefix + "it is not a regular file");
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    throw InputError(prefix + "it is " + std::to_string(st.st_size) + " bytes, over the limit of " +
                     std::to_string(max_bytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(prefix + std::strerror(errno));
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size));
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));  // a file that shrank meanwhile
  if (in.bad()) throw InputError(prefix + "read error");
  return text;
}

}  // namespace mofasim::analysis
