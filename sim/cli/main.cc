// mofasim: the command-line front end. Dispatches to one sub-command per file (cmd_*.cc) and turns
// the three error channels into exit codes: bad input (ScenarioError, UsageError) -> 2 with one
// line per problem on stderr; a simulator bug (InternalError) or other failure -> 1.
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "sim/analysis/input_file.h"
#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/output_files.h"
#include "sim/engine/fluid_model.h"
#include "sim/scenario/diagnostics.h"
#include "sim/units/check.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const mofasim::cli::Args&);
};

constexpr Command kCommands[] = {
    {"simulate", "replay one training step as a timeline (step time, breakdown, MFU, trace)", mofasim::cli::run_simulate},
    {"memory", "parameters, FLOPs and memory per pipeline stage", mofasim::cli::run_memory},
    {"ettr", "analytic and Monte Carlo ETTR and end-to-end time", mofasim::cli::run_ettr},
    {"sweep", "sweep one scenario field for ETTR; writes CSV and SVG", mofasim::cli::run_sweep},
    {"tune", "search layouts and features for the fastest feasible configuration", mofasim::cli::run_tune},
    {"validate", "analytic MoFa model against the simulated timeline, or against measurements", mofasim::cli::run_validate},
    {"calibrate", "fit device efficiencies to measured step times", mofasim::cli::run_calibrate},
    {"schema", "print the scenario reference generated from the schema", mofasim::cli::run_schema},
    {"import-megatron", "Megatron-LM launch arguments or script -> scenario YAML", mofasim::cli::run_import_megatron},
};

void print_usage(std::ostream& out) {
  out << "usage: mofasim <command> [options] SCENARIO.yaml\n\ncommands:\n";
  for (const Command& c : kCommands) out << "  " << c.name << std::string(std::strlen(c.name) < 12 ? 12 - std::strlen(c.name) : 2, ' ') << c.summary << "\n";
  out << "\nRun 'mofasim <command> --help' for a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (name != c.name) continue;
    const mofasim::cli::Args args(argv + 2, argv + argc);
    try {
      return mofasim::cli::finish_stdout(name, c.run(args));
    } catch (const mofasim::scenario::ScenarioError& e) {
      for (const std::string& line : e.errors()) std::cerr << line << "\n";
      return 2;
    } catch (const mofasim::cli::UsageError& e) {
      std::cerr << e.what() << "\n";
      return 2;
    } catch (const mofasim::analysis::InputError& e) {  // a measurements file or mapping, located
      std::cerr << e.what() << "\n";
      return 2;
    } catch (const mofasim::sim::SimulationOutOfRange& e) {  // absurd rates in the input, not a bug
      std::cerr << "mofasim " << name << ": " << e.what() << "\n";
      return 2;
    } catch (const mofasim::InternalError& e) {
      std::cerr << "mofasim " << name << ": " << e.what() << "\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "mofasim " << name << ": error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "mofasim: unknown command '" << name << "'\n";
  print_usage(std::cerr);
  return 2;
}
