#include "sim/cli/cli_common.h"

#include <iostream>

namespace mofasim::cli {

void add_common_options(po::options_description& desc, CommonOptions& common) {
  desc.add_options()("set", po::value<std::vector<std::string>>(&common.sets)->composing(),
                     "override a scenario field: --set field.path=value (repeatable)")(
      "json", po::bool_switch(&common.json), "print JSON on stdout instead of a table")(
      "help,h", po::bool_switch(&common.help), "show this help");
}

void parse_command_line(const std::string& command, const std::vector<std::string>& args,
                        const po::options_description& desc,
                        const po::positional_options_description& positional, po::variables_map& vm) {
  try {
    po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError("mofasim " + command + ": " + e.what() + " (see: mofasim " + command + " --help)");
  }
}

void print_command_help(const std::string& command, const std::string& synopsis,
                        const po::options_description& desc) {
  std::cout << "usage: mofasim " << command << " " << synopsis << "\n\n" << desc << "\n";
}

}  // namespace mofasim::cli
