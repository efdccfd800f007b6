// `mofasim ettr SCENARIO`: the analytic fault-tolerance model (MoFa eq. 36-44 and the exact
// renewal formula) side by side with Monte Carlo trials of the whole training run.
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "model/fault_spec.h"
#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/output_files.h"
#include "sim/cli/ettr_options.h"
#include "sim/cli/scenario_specs.h"
#include "sim/cli/step_time.h"
#include "sim/fault/ettr_study.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {

int run_ettr(const Args& args) {
  CommonOptions common;
  EttrOptions ettr;
  std::string path;
  std::string csv_path;
  po::options_description desc("options");
  add_common_options(desc, common);
  add_ettr_options(desc, ettr);
  desc.add_options()("csv", po::value<std::string>(&csv_path), "write one row per Monte Carlo trial to this CSV file")(
      "scenario", po::value<std::string>(&path), "scenario YAML file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  parse_command_line("ettr", args, desc, pos, vm);
  if (common.help) {
    print_command_help("ettr", "SCENARIO.yaml [--step-time SECONDS] [--trials N] [--seed S] [--threads T] [--json] [--csv FILE]", desc);
    return 0;
  }
  if (path.empty()) throw UsageError("mofasim ettr: missing SCENARIO.yaml (see: mofasim ettr --help)");
  check_ettr_options("ettr", ettr);
  check_outputs("ettr", {{"--csv", csv_path}}, {path});

  const scenario::LoadedScenario loaded = load_checked(path, common.sets, true);
  const StepTimeChoice step = resolve_step_time(loaded, ettr.step_time);
  const model::FaultSpec spec = to_fault_spec(loaded);
  const model::RunSpec run{.step_time_s = step.seconds, .n_steps = scenario::training_steps(loaded.proto)};
  fault::EttrStudy study;
  try {
    study = fault::run_ettr_study(spec, run, monte_carlo_options(ettr));
  } catch (const fault::EventBudgetExceeded& e) {
    throw located_budget_error(loaded, e);
  }

  if (!csv_path.empty()) {
    write_output_file(csv_path, [&](std::ostream& csv) { fault::write_trials_csv(csv, study.monte_carlo); });
  }
  if (common.json) {
    nlohmann::json j = fault::ettr_study_json(study);
    j["scenario"] = loaded.proto.name();
    j["step_time_s"] = step.seconds;
    j["step_time_source"] = step.source;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "scenario   " << loaded.proto.name() << " (" << loaded.path << ")\n"
              << "step time  " << step.seconds << " s (" << step.source << "), " << run.n_steps << " steps\n\n"
              << fault::render_ettr_table(study);
  }
  return 0;
}

}  // namespace mofasim::cli
