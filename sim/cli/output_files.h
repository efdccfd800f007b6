// Output safety for every command: an output file is checked before any work (it must not be one
// of the command's inputs, and it must be writable), files are written with their errors checked,
// and standard output is flushed and checked at exit, so a full disk or a typo in a path is never
// noticed only after a long computation, and never silently.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace mofasim::cli {

// One output a command will write: the option that names it and the path.
struct OutputFile {
  std::string option;  // e.g. "--trace"
  std::string path;
};

// UsageError ("mofasim COMMAND: --option: ...", exit 2) when an output is the same file as an input
// (same device and inode, or the same canonical path), when two outputs are the same file, or when
// it cannot be written: an existing output must be a writable regular file or character device
// (/dev/null), a new one needs a writable folder. Outputs with an empty path are skipped. Nothing
// is created or truncated.
void check_outputs(const std::string& command, const std::vector<OutputFile>& outputs,
                   const std::vector<std::string>& inputs);

// Writes `path` with `write` and checks the stream after closing it; std::runtime_error
// ("cannot write PATH: reason", exit 1) on an open failure or a short write.
void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& write);

// Flushes std::cout and stdout. Returns `status` if that worked, else prints
// "mofasim COMMAND: error writing standard output: reason" on stderr and returns 1.
int finish_stdout(const std::string& command, int status);

}  // namespace mofasim::cli
