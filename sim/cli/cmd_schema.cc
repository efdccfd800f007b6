// `mofasim schema`: prints the scenario reference (Markdown) generated from the proto schema —
// the same text as docs/scenario-reference.md; with --json the same walk as JSON.
#include <iostream>

#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/scenario/reference.h"
#include "sim/scenario/reference_json.h"

namespace mofasim::cli {

int run_schema(const Args& args) {
  po::options_description desc("options");
  bool help = false;
  bool json = false;
  desc.add_options()("help,h", po::bool_switch(&help), "show this help")(
      "json", po::bool_switch(&json), "print the schema as JSON (messages, fields, types, units, defaults, limits)");
  po::variables_map vm;
  parse_command_line("schema", args, desc, {}, vm);
  if (help) {
    print_command_help("schema", "[--json]", desc);
    return 0;
  }
  if (json) {
    std::cout << scenario::scenario_reference_json().dump(2) << "\n";
    return 0;
  }
  std::cout << scenario::scenario_reference_markdown();
  return 0;
}

}  // namespace mofasim::cli
