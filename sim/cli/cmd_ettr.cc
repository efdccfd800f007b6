// `mofasim ettr SCENARIO`: the analytic fault-tolerance model (MoFa(36) MoFa(37) MoFa(38) MoFa(39) MoFa(40)
// MoFa(41) MoFa(42) MoFa(43) MoFa(44) and the exact
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
#include "sim/cli/memory_fit.h"
#include "sim/scenario/scenario_specs.h"
#include "sim/cli/shard_options.h"
#include "sim/cli/step_time.h"
#include "sim/scenario/scenario_specs_checkpoint.h"
#include "sim/scenario/scenario_specs_fail_slow.h"
#include "sim/units/format.h"
#include "sim/fault/ettr_study.h"
#include "sim/fault/trial_shards.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {
namespace {

fault::MonteCarloResult merged_trials(const std::vector<nlohmann::json>& documents, const model::RunSpec& run,
                                      bool fail_slow) {
  try {
    return fault::merge_trial_shards(documents, run, fail_slow);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("mofasim ettr: --merge: ") + e.what());
  }
}

}  // namespace

int run_ettr(const Args& args) {
  CommonOptions common;
  EttrOptions ettr;
  std::string path;
  std::string csv_path;
  ShardOptions sharding;
  po::options_description desc("options");
  add_common_options(desc, common);
  add_ettr_options(desc, ettr);
  add_shard_options(desc, sharding, "Monte Carlo trials");
  desc.add_options()("csv", po::value<std::string>(&csv_path), "write one row per Monte Carlo trial to this CSV file")(
      "scenario", po::value<std::string>(&path), "scenario YAML file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  parse_command_line("ettr", args, desc, pos, vm);
  if (common.help) {
    print_command_help("ettr", "SCENARIO.yaml [--step-time SECONDS] [--trials N] [--seed S] [--threads T] [--json] [--csv FILE] [--shard i/n | --merge FILES...]", desc);
    return 0;
  }
  if (path.empty()) throw UsageError("mofasim ettr: missing SCENARIO.yaml (see: mofasim ettr --help)");
  check_ettr_options("ettr", ettr);
  check_outputs("ettr", {{"--csv", csv_path}}, {path});

  const scenario::LoadedScenario loaded = load_checked(path, common.sets, true);
  const StepTimeChoice step = resolve_step_time(loaded, ettr.step_time);
  std::optional<CheckpointIoResult> io_result;  // shown when the checkpoint times were simulated
  if (loaded.proto.fault_tolerance().checkpoint().has_storage()) io_result = simulate_checkpoint(loaded);
  model::FaultSpec spec = io_result ? to_fault_spec(loaded, *io_result) : to_fault_spec(loaded);
  const fault::CheckpointIoTimes* io = io_result ? &io_result->idle : nullptr;
  const executor::DrainUnderTraining* drain = io_result && io_result->drain ? &*io_result->drain : nullptr;
  const model::RunSpec run{.step_time_s = step.seconds, .n_steps = scenario::training_steps(loaded.proto),
                           .tokens_per_step = static_cast<double>(loaded.parallel.global_batch) * loaded.model.seq_length};
  // A run over its event budget is refused before fail-slow's pricing simulates a step per stage
  // (the budget needs only the episode rate); a merge runs no trials and is not checked.
  if (sharding.merge.empty()) {
    try {
      fault::check_event_budget(spec, run, ettr.trials, ettr.max_events);
    } catch (const fault::EventBudgetExceeded& e) {
      throw located_budget_error(loaded, e);
    }
  }
  const FailSlowPricing fail_slow = price_fail_slow(loaded, spec.fail_slow);  // the slow steps, simulated
  const fault::MonteCarloOptions mc_options = monte_carlo_options(ettr);
  // A shard names its run, so a merge of shards of another scenario or step time is refused.
  const nlohmann::json run_id = {{"scenario", loaded.proto.name()}, {"step_time_s", run.step_time_s},
                                 {"n_steps", run.n_steps},           {"trials", ettr.trials},
                                 {"seed", ettr.seed},                {"sets", common.sets}};
  fault::EttrStudy study;
  try {
    const ShardOutcome sharded = run_sharded("ettr", sharding, [&](int index, int count) {
      nlohmann::json doc = fault::run_trial_shard(spec, run, mc_options, index, count);
      doc["run"] = run_id;
      return doc;
    });
    if (sharded.done) return 0;
    for (const nlohmann::json& doc : sharded.documents) {
      if (doc.is_object() && doc.contains("run") && doc.at("run") != run_id) {
        throw UsageError("mofasim ettr: --merge: a shard comes from another run (" + doc.at("run").dump() +
                         ", this is " + run_id.dump() + ")");
      }
    }
    study = sharded.single ? fault::run_ettr_study(spec, run, mc_options)
                           : fault::ettr_study_from_trials(spec, run, merged_trials(sharded.documents, run, spec.fail_slow.rate_per_unit_per_day > 0));
  } catch (const fault::EventBudgetExceeded& e) {
    throw located_budget_error(loaded, e);
  }

  if (!csv_path.empty()) {
    write_output_file(csv_path, [&](std::ostream& csv) { fault::write_trials_csv(csv, study.monte_carlo, spec.fail_slow.on()); });
  }
  const MemoryFit fit = memory_fit(loaded);
  warn_if_out_of_memory("ettr", fit, std::cerr);
  if (common.json) {
    nlohmann::json j = fault::ettr_study_json(study);
    j["scenario"] = loaded.proto.name();
    j["memory_fit"] = to_json(fit);
    j["step_time_s"] = step.seconds;
    j["step_time_source"] = step.source;
    if (io) {
      j["checkpoint_io"] = {{"bytes", io->total_bytes}, {"save_s", io->save_s}, {"snapshot_s", io->snapshot_s},
                            {"drain_s", io->drain_s}, {"restore_s", io->restore_s}};
      if (drain != nullptr) {
        j["checkpoint_io"]["drain_under_training"] = {
            {"drain_s", drain->drain_s},           {"healthy_step_s", drain->healthy_step_s},
            {"first_step_s", drain->first_step_s}, {"draining_steps", drain->draining_steps},
            {"slowdown_s", drain->slowdown_s},     {"outlived_interval", drain->outlived_interval}};
      }
    }
    if (spec.fail_slow.on()) j["fail_slow_cases"] = fail_slow_json(fail_slow, spec.fail_slow);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "scenario   " << loaded.proto.name() << " (" << loaded.path << ")\n"
              << "step time  " << step.seconds << " s (" << step.source << "), " << run.n_steps << " steps\n";
    if (io) {
      std::cout << "checkpoint " << format_number("%.4g GB", io->total_bytes / 1e9) << " simulated over the storage tier: save "
                << format_number("%.4g s", io->save_s) << ", async snapshot " << format_number("%.4g s", io->snapshot_s)
                << " + drain " << format_number("%.4g s", io->drain_s) << ", restore "
                << format_number("%.4g s", io->restore_s) << " (added to every recovery)\n";
      if (drain != nullptr) {
        std::cout << "drain      beside training: " << format_number("%.4g s", drain->drain_s) << " over "
                  << drain->draining_steps << " step(s); step " << format_number("%.4g s", drain->first_step_s)
                  << " while draining (" << format_number("%.4g s", drain->healthy_step_s) << " alone), costs "
                  << format_number("%.4g s", drain->slowdown_s) << " per checkpoint"
                  << (drain->outlived_interval ? "; outlives the interval, the next snapshot waits" : "") << "\n";
      }
    }
    if (spec.fail_slow.on()) std::cout << render_fail_slow_cases(fail_slow, spec.fail_slow);
    std::cout << "\n" << fault::render_ettr_table(study);
  }
  return 0;
}

}  // namespace mofasim::cli
