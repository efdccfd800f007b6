// Shared plumbing for the mofasim sub-commands: option parsing with Boost.Program_options, the
// usage-error type, and loading a scenario with --set overrides. Every command is a function
// `int run_<name>(const std::vector<std::string>& args)` registered in main.cc.
#pragma once

#include <boost/program_options.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace mofasim::cli {

namespace po = boost::program_options;

// A bad command line (unknown option, missing argument). main() prints it and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Options most commands share.
struct CommonOptions {
  std::vector<std::string> sets;  // --set field.path=value, applied in order
  bool json = false;              // --json: machine-readable output on stdout
  bool help = false;
};

// Adds --set, --json and --help to `desc`.
void add_common_options(po::options_description& desc, CommonOptions& common);

// Parses `args` (the words after the command name) into `vm`, with `positional` naming the
// positional arguments (e.g. {"scenario", 1} or {"scenario", -1}). Unknown options, missing values
// and bad numbers raise UsageError naming the command and the option.
void parse_command_line(const std::string& command, const std::vector<std::string>& args,
                        const po::options_description& desc,
                        const po::positional_options_description& positional, po::variables_map& vm);

// Prints "usage: mofasim <command> <synopsis>" and the option list.
void print_command_help(const std::string& command, const std::string& synopsis,
                        const po::options_description& desc);

}  // namespace mofasim::cli
