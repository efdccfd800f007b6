// Bad user input met by the analyses (a measurements CSV, a column mapping), as one error type the
// command line reports with exit status 2, and a bounded read of an input file: only a regular
// file no larger than a cap is read, so /dev/zero, a FIFO or a huge file fail at once instead of
// hanging or exhausting memory.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace mofasim::analysis {

// A located one-line error in the user's input ("file:line: column 'x': ..."). Derives from
// std::invalid_argument so callers that catch that keep working.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Measurement files are a few kilobytes; 64 MiB is far beyond any real one.
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{64} << 20;

// The contents of `path`; InputError "PATH: cannot read the WHAT: reason" when it is missing, not a
// regular file, or larger than max_bytes.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::size_t max_bytes = kMaxInputFileBytes);

}  // namespace mofasim::analysis
