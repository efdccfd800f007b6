// `mofasim simulate SCENARIO`: expands one training step into its task DAG and replays it on the
// modeled cluster; prints step time, the Table-6-style breakdown, TFLOPS/MFU/HFU, tokens/s, peak
// memory per stage and the critical path by category. --trace writes a Perfetto trace, --timeline
// the same spans as a binary protobuf Timeline (proto/timeline.proto) for programs.
#include <iostream>

#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/scenario_specs.h"
#include "sim/executor/simulate_step.h"
#include "sim/interop/chakra_writer.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {

int run_simulate(const Args& args) {
  CommonOptions common;
  std::string path;
  std::string fidelity = "folded";
  std::string trace;
  std::string timeline;
  std::string chakra;
  std::string chakra_ranks;
  po::options_description desc("options");
  add_common_options(desc, common);
  desc.add_options()("fidelity", po::value<std::string>(&fidelity)->default_value(fidelity),
                     "full (every rank) or folded (provably identical ranks simulated once)")(
      "trace", po::value<std::string>(&trace), "write a Chrome/Perfetto trace (JSON) to this file")(
      "timeline", po::value<std::string>(&timeline),
      "write the step's timeline as binary protobuf (proto/timeline.proto: mofasim.proto.Timeline) to this file")(
      "chakra", po::value<std::string>(&chakra),
      "write one Chakra execution trace per rank (DIR/mofasim.<rank>.et) and DIR/comm_groups.json, for ASTRA-sim")(
      "chakra-ranks", po::value<std::string>(&chakra_ranks),
      "ranks to write with --chakra, e.g. 0-7,64 (default: the simulated ranks; needed above 256 ranks)")(
      "scenario", po::value<std::string>(&path), "scenario YAML file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  parse_command_line("simulate", args, desc, pos, vm);
  if (common.help) {
    print_command_help("simulate", "SCENARIO.yaml [--fidelity full|folded] [--trace FILE.json] [--timeline FILE.pb] [--chakra DIR [--chakra-ranks LIST]] [--json] [--set field.path=value ...]", desc);
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
  const executor::SimulationInput input = simulation_input(loaded);
  if (chakra.empty() && !chakra_ranks.empty()) throw UsageError("mofasim simulate: --chakra-ranks: needs --chakra DIR");
  std::vector<int> chakra_rank_list;
  if (!chakra.empty()) {
    try {
      chakra_rank_list = interop::chakra_ranks(interop::step_placement(input), options.fidelity, chakra_ranks);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("mofasim simulate: ") + e.what());
    }
  }
  const executor::StepResult result = executor::simulate_step(input, options);
  if (!chakra.empty()) {
    interop::write_chakra_traces(interop::step_workload(input), interop::step_placement(input), chakra_rank_list, chakra);
  }
  if (common.json) {
    nlohmann::json j = executor::to_json(result);
    j["scenario"] = loaded.proto.name();
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "scenario   " << loaded.proto.name() << " (" << loaded.path << ")\n\n" << executor::to_table(result);
    if (!trace.empty()) std::cout << "\ntrace written to " << trace << " (open it in https://ui.perfetto.dev)\n";
    if (!timeline.empty()) std::cout << "\ntimeline written to " << timeline << " (mofasim.proto.Timeline, binary protobuf)\n";
    if (!chakra.empty()) {
      std::cout << "\nchakra traces written to " << chakra << " (" << chakra_rank_list.size()
                << " ranks: mofasim.<rank>.et, comm_groups.json)\n";
    }
  }
  return 0;
}

}  // namespace mofasim::cli
