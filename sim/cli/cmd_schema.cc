// `mofasim schema`: prints the scenario reference (Markdown) generated from the proto schema —
// the same text as docs/scenario-reference.md.
#include <iostream>

#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/scenario/reference.h"

namespace mofasim::cli {

int run_schema(const Args& args) {
  po::options_description desc("options");
  bool help = false;
  desc.add_options()("help,h", po::bool_switch(&help), "show this help");
  po::variables_map vm;
  parse_command_line("schema", args, desc, {}, vm);
  if (help) {
    print_command_help("schema", "", desc);
    return 0;
  }
  std::cout << scenario::scenario_reference_markdown();
  return 0;
}

}  // namespace mofasim::cli
