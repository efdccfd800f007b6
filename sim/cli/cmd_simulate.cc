// `mofasim simulate SCENARIO`: expands one training step into its task DAG and replays it on the
// modeled cluster; prints step time, the Table-6-style breakdown, TFLOPS/MFU/HFU, tokens/s, peak
// memory per stage and the critical path by category. --trace writes a Perfetto trace, --timeline
// the same spans as a binary protobuf Timeline (proto/timeline.proto) for programs.
#include <algorithm>
#include <iostream>
#include <utility>

#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/scenario_specs.h"
#include "sim/executor/simulate_step.h"
#include "sim/progress/progress_reporter.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {

namespace {

// A first run ends with where to go next: the same scenario through the other questions.
std::string next_steps(const std::string& path) {
  const std::pair<std::string, const char*> steps[] = {
      {"mofasim memory " + path, "does it fit? memory per stage"},
      {"mofasim simulate " + path + " --trace step.json", "the timeline, in ui.perfetto.dev"},
      {"mofasim ettr " + path, "end-to-end time with failures"},
      {"mofasim tune " + path, "a faster layout?"},
  };
  std::size_t width = 0;
  for (const auto& [command, what] : steps) width = std::max(width, command.size());
  std::string out = "what to try next:\n";
  for (const auto& [command, what] : steps) out += "  " + command + std::string(width + 2 - command.size(), ' ') + what + "\n";
  return out;
}

}  // namespace

int run_simulate(const Args& args) {
  CommonOptions common;
  std::string path;
  std::string fidelity = "folded";
  std::string trace;
  std::string timeline;
  bool quiet = false;
  po::options_description desc("options");
  add_common_options(desc, common);
  desc.add_options()("quiet,q", po::bool_switch(&quiet), "no progress line on stderr (it is shown only on a terminal)");
  desc.add_options()("fidelity", po::value<std::string>(&fidelity)->default_value(fidelity),
                     "full (every rank) or folded (provably identical ranks simulated once)")(
      "trace", po::value<std::string>(&trace), "write a Chrome/Perfetto trace (JSON) to this file")(
      "timeline", po::value<std::string>(&timeline),
      "write the step's timeline as binary protobuf (proto/timeline.proto: mofasim.proto.Timeline) to this file")(
      "scenario", po::value<std::string>(&path), "scenario YAML file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  parse_command_line("simulate", args, desc, pos, vm);
  if (common.help) {
    print_command_help("simulate", "SCENARIO.yaml [--fidelity full|folded] [--trace FILE.json] [--timeline FILE.pb] [--json] [-q] [--set field.path=value ...]", desc);
    return 0;
  }
  if (path.empty()) throw UsageError("mofasim simulate: missing SCENARIO.yaml (see: mofasim simulate --help)");
  executor::SimulateOptions options;
  if (fidelity == "full") {
    options.fidelity = executor::Fidelity::kFull;
  } else if (fidelity != "folded") {
    throw UsageError("mofasim simulate: --fidelity must be full or folded, got '" + fidelity + "'");
  }
  if (!trace.empty()) options.trace_path = trace;
  if (!timeline.empty()) options.timeline_path = timeline;

  const scenario::LoadedScenario loaded = load_checked(path, common.sets);
  options.scenario_name = loaded.proto.name();
  options.progress = progress::stderr_callback("replay", "tasks", quiet);
  const executor::StepResult result = executor::simulate_step(simulation_input(loaded), options);
  if (common.json) {
    nlohmann::json j = executor::to_json(result);
    j["scenario"] = loaded.proto.name();
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "scenario   " << loaded.proto.name() << " (" << loaded.path << ")\n\n" << executor::to_table(result);
    if (!trace.empty()) std::cout << "\ntrace written to " << trace << " (open it in https://ui.perfetto.dev)\n";
    if (!timeline.empty()) std::cout << "\ntimeline written to " << timeline << " (mofasim.proto.Timeline, binary protobuf)\n";
    std::cout << "\n" << next_steps(loaded.path);
  }
  return 0;
}

}  // namespace mofasim::cli
