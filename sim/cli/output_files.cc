#include "sim/cli/output_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "sim/cli/cli_common.h"

namespace mofasim::cli {
namespace {

namespace fs = std::filesystem;

struct FileId {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const FileId&) const = default;
};

std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{.device = st.st_dev, .inode = st.st_ino};
}

// The same file: one inode, or (for files not there yet) the same canonical path.
bool same_file(const std::string& a, const std::string& b) {
  const auto ia = file_id(a);
  const auto ib = file_id(b);
  if (ia && ib) return *ia == *ib;
  if (ia || ib) return false;
  std::error_code ec1;
  std::error_code ec2;
  const fs::path ca = fs::weakly_canonical(a, ec1);
  const fs::path cb = fs::weakly_canonical(b, ec2);
  return !ec1 && !ec2 && ca == cb;
}

// Empty when `path` can be written, else the reason.
std::string unwritable_reason(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "it is a folder";
    if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) return "it is not a regular file";
    if (::access(path.c_str(), W_OK) != 0) return std::strerror(errno);
    return {};
  }
  if (errno != ENOENT) return std::strerror(errno);
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0) return "folder " + folder.string() + ": " + std::strerror(errno);
  if (!S_ISDIR(dir.st_mode)) return folder.string() + " is not a folder";
  if (::access(folder.c_str(), W_OK | X_OK) != 0) return "folder " + folder.string() + ": " + std::strerror(errno);
  return {};
}

}  // namespace

void check_outputs(const std::string& command, const std::vector<OutputFile>& outputs,
                   const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputFile& out = outputs[i];
    if (out.path.empty()) continue;
    const std::string where = "mofasim " + command + ": " + out.option + ": ";
    for (const std::string& in : inputs) {
      if (!in.empty() && same_file(out.path, in)) {
        const std::string same = in == out.path ? "" : " (the same file as " + in + ")";
        throw UsageError(where + out.path + " is an input of this command" + same + "; refusing to overwrite it");
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path)) {
        throw UsageError(where + out.path + " is also the output of " + outputs[j].option);
      }
    }
    if (const std::string reason = unwritable_reason(out.path); !reason.empty()) {
      throw UsageError(where + "cannot write " + out.path + ": " + reason);
    }
  }
}

void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  write(file);
  file.close();  // flushes: a full disk shows here
  if (!file) throw std::runtime_error("cannot write " + path + ": short write (disk full?)");
}

int finish_stdout(const std::string& command, int status) {
  // std::cout writes through stdio (synced), so stdout's error flag and errno tell why it failed.
  errno = 0;
  std::cout.flush();
  int error = errno;
  const bool flush_failed = std::fflush(stdout) != 0;
  if (error == 0) error = errno;
  const bool failed = !std::cout || flush_failed || std::ferror(stdout) != 0;
  if (!failed) return status;
  std::cerr << "mofasim " << command << ": error writing standard output: "
            << (error != 0 ? std::strerror(error) : "short write") << "\n";
  return 1;
}

}  // namespace mofasim::cli
