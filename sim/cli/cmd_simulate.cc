// `mofasim simulate SCENARIO`: expands one training step into its task DAG and replays it on the
// modeled cluster; prints step time, the Table-6-style breakdown, TFLOPS/MFU/HFU, tokens/s, peak
// memory per stage and the critical path by category. --trace writes a Perfetto trace (Chrome JSON
// for FILE.json), limited by --trace-stages/-ranks/-window/-microbatch; --timeline the same spans
// as a binary protobuf Timeline (proto/timeline.proto) for programs.
#include <algorithm>
#include <iostream>
#include <tuple>
#include <utility>

#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/memory_fit.h"
#include "sim/cli/output_files.h"
#include "sim/scenario/scenario_specs.h"
#include "sim/executor/perturbation_costs.h"
#include "sim/executor/simulate_step.h"
#include "sim/executor/perfetto_links.h"
#include "sim/executor/trace_filter.h"
#include "sim/interop/chakra_writer.h"
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
  std::string trace_stages;
  std::string trace_ranks;
  std::string trace_window;
  int trace_microbatch = -1;
  std::string trace_links;
  std::string chakra;
  std::string chakra_ranks;
  bool critical_path = false;
  po::options_description desc("options");
  add_common_options(desc, common);
  desc.add_options()("quiet,q", po::bool_switch(&quiet), "no progress line on stderr (it is shown only on a terminal)");
  desc.add_options()("fidelity", po::value<std::string>(&fidelity)->default_value(fidelity),
                     "full (every rank) or folded (provably identical ranks simulated once)")(
      "trace", po::value<std::string>(&trace),
      "write a trace to this file: Perfetto protobuf (open in https://ui.perfetto.dev), or Chrome JSON when it ends in .json")(
      "trace-stages", po::value<std::string>(&trace_stages), "trace only these stages, e.g. 0,3-5")(
      "trace-ranks", po::value<std::string>(&trace_ranks), "trace only the stages whose traced (replica-0) rank is listed")(
      "trace-window", po::value<std::string>(&trace_window),
      "trace only spans overlapping START:END of the step, e.g. 120ms:0.5s (units ns, us, ms, s)")(
      "trace-microbatch", po::value<int>(&trace_microbatch), "trace only the spans of this micro-batch")(
      "trace-links", po::value<std::string>(&trace_links),
      "link utilisation counters of the traced ranks' nodes (Perfetto only): nic,spine (default), all, none, or a "
      "list of nvlink, nic, spine, nvlink_tx, nvlink_rx, nic_tx, nic_rx, spine_up, spine_down (nvlink makes large traces)")(
      "timeline", po::value<std::string>(&timeline),
      "write the step's timeline as binary protobuf (proto/timeline.proto: mofasim.proto.Timeline) to this file")(
      "chakra", po::value<std::string>(&chakra),
      "write one Chakra execution trace per rank (DIR/mofasim.<rank>.et) and DIR/comm_groups.json, for ASTRA-sim")(
      "chakra-ranks", po::value<std::string>(&chakra_ranks),
      "ranks to write with --chakra, e.g. 0-7,64 (default: the simulated ranks; needed above 256 ranks)")(
      "critical-path", po::bool_switch(&critical_path),
      "with --json: list the critical path task by task (critical_path_tasks; ~10^5 entries at thousands of GPUs)")(
      "scenario", po::value<std::string>(&path), "scenario YAML file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  parse_command_line("simulate", args, desc, pos, vm);
  if (common.help) {
    print_command_help("simulate", "SCENARIO.yaml [--fidelity full|folded] [--trace FILE.pftrace|FILE.json] [--trace-stages LIST] [--trace-ranks LIST] [--trace-window START:END] [--trace-microbatch N] [--trace-links KINDS] [--timeline FILE.pb] [--chakra DIR [--chakra-ranks LIST]] [--json [--critical-path]] [-q] [--set field.path=value ...]", desc);
    return 0;
  }
  if (path.empty()) throw UsageError("mofasim simulate: missing SCENARIO.yaml (see: mofasim simulate --help)");
  executor::SimulateOptions options;
  executor::TraceFilter trace_filter;
  options.trace_filter = &trace_filter;
  if (fidelity == "full") {
    options.fidelity = executor::Fidelity::kFull;
  } else if (fidelity != "folded") {
    throw UsageError("mofasim simulate: --fidelity must be full or folded, got '" + fidelity + "'");
  }
  check_outputs("simulate", {{"--trace", trace}, {"--timeline", timeline}}, {path});
  if (!trace.empty()) options.trace_path = trace;
  for (const char* limit : {"trace-stages", "trace-ranks", "trace-window", "trace-microbatch", "trace-links"}) {
    if (vm.count(limit) > 0 && trace.empty()) {
      throw UsageError(std::string("mofasim simulate: --") + limit + ": limits a trace, but no --trace FILE is given");
    }
  }
  auto option_error = [](const std::string& option, const std::exception& e) {
    return UsageError("mofasim simulate: --" + option + ": " + e.what());
  };
  try {
    if (!trace_stages.empty()) trace_filter.stages = executor::parse_index_list(trace_stages);
  } catch (const std::invalid_argument& e) {
    throw option_error("trace-stages", e);
  }
  try {
    if (!trace_ranks.empty()) trace_filter.ranks = executor::parse_index_list(trace_ranks);
  } catch (const std::invalid_argument& e) {
    throw option_error("trace-ranks", e);
  }
  try {
    if (!trace_window.empty()) {
      std::tie(trace_filter.from_ns, trace_filter.to_ns) = executor::parse_time_window(trace_window);
    }
  } catch (const std::invalid_argument& e) {
    throw option_error("trace-window", e);
  }
  try {
    if (!trace_links.empty()) trace_filter.link_kinds = executor::parse_link_kinds(trace_links);
  } catch (const std::invalid_argument& e) {
    throw option_error("trace-links", e);
  }
  if (vm.count("trace-microbatch") > 0) {
    if (trace_microbatch < 0) {
      throw UsageError("mofasim simulate: --trace-microbatch: must be a micro-batch index >= 0, got " +
                       std::to_string(trace_microbatch));
    }
    trace_filter.microbatch = static_cast<std::uint32_t>(trace_microbatch);
  }
  if (!timeline.empty()) options.timeline_path = timeline;
  if (critical_path && !common.json) throw UsageError("mofasim simulate: --critical-path: needs --json");
  options.critical_path_tasks = critical_path;

  const scenario::LoadedScenario loaded = load_checked(path, common.sets);
  options.scenario_name = loaded.proto.name();
  options.progress = progress::stderr_callback("replay", "tasks", quiet);
  const executor::SimulationInput input = simulation_input(loaded);
  if (trace_filter.microbatch) {
    const model::ParallelSpec& par = input.parallel;
    const long long per_step = par.micro_batch * par.dp > 0 ? par.global_batch / (par.micro_batch * par.dp) : 0;
    if (static_cast<long long>(*trace_filter.microbatch) >= per_step) {
      throw UsageError("mofasim simulate: --trace-microbatch: micro-batch " +
                       std::to_string(*trace_filter.microbatch) + " does not exist (the step has " +
                       std::to_string(per_step) + ": 0-" + std::to_string(per_step - 1) + ")");
    }
  }
  if (chakra.empty() && !chakra_ranks.empty()) throw UsageError("mofasim simulate: --chakra-ranks: needs --chakra DIR");
  std::vector<int> chakra_rank_list;
  if (!chakra.empty()) {
    try {
      chakra_rank_list = interop::chakra_ranks(interop::step_placement(input), options.fidelity, chakra_ranks);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("mofasim simulate: ") + e.what());
    }
  }
  executor::StepResult result;
  try {
    result = executor::simulate_step(input, options);
    executor::add_perturbation_costs(input, options, result);  // perturbations: what each costs alone
  } catch (const executor::TraceFilterError& e) {
    throw option_error("trace-" + e.option(), e);
  }
  if (!chakra.empty()) {
    interop::write_chakra_traces(interop::step_workload(input), interop::step_placement(input), chakra_rank_list, chakra);
  }
  const MemoryFit fit = memory_fit(loaded);
  warn_if_out_of_memory("simulate", fit, std::cerr);
  if (common.json) {
    nlohmann::json j = executor::to_json(result);
    j["scenario"] = loaded.proto.name();
    j["memory_fit"] = to_json(fit);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "scenario   " << loaded.proto.name() << " (" << loaded.path << ")\n\n" << executor::to_table(result);
    if (!trace.empty()) std::cout << "\ntrace written to " << trace << " (open it in https://ui.perfetto.dev)\n";
    if (!timeline.empty()) std::cout << "\ntimeline written to " << timeline << " (mofasim.proto.Timeline, binary protobuf)\n";
    if (!chakra.empty()) {
      std::cout << "\nchakra traces written to " << chakra << " (" << chakra_rank_list.size()
                << " ranks: mofasim.<rank>.et, comm_groups.json)\n";
    }
    std::cout << "\n" << next_steps(loaded.path);
  }
  return 0;
}

}  // namespace mofasim::cli
