// `mofasim sweep SCENARIO --param PATH=FROM:TO:STEP`: re-evaluates the fault-tolerance study for
// each value of one scenario field (any field, applied as a --set override, so units and
// validation are the same as in a file) and writes a CSV and an SVG plot: the analytic ETTR curve,
// Monte Carlo points with 95% error bars, and the best point marked. "Best" is the shortest
// end-to-end time (the parameter may change the step time too), with its ETTR beside it; every
// point uses the same Monte Carlo seed (common random numbers).
//
// --shard i/n runs trials [i*T/n, (i+1)*T/n) of every point (sim/fault/trial_shards.h) and prints
// them as one document; --merge rebuilds each point's whole run from the shards and goes on as a
// single process would, so the output is bit-identical (the pairing with the best point is by
// trial index, which the shards keep). `mpirun -n N mofasim sweep ...` does the same over ranks.
#include <fstream>
#include <iostream>
#include <optional>

#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/output_files.h"
#include "sim/cli/ettr_options.h"
#include "sim/cli/shard_options.h"
#include "sim/cli/sweep_points.h"
#include "sim/cli/sweep_range.h"
#include "sim/fault/ettr_sweep.h"
#include "sim/fault/plot_axes.h"
#include "sim/fault/statistics.h"
#include "sim/fault/trial_shards.h"
#include "sim/units/format.h"
#include "sim/progress/progress_reporter.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {

namespace {

// `sweep --json`: every point as the CSV has it, the best (shortest end-to-end) and the files written.
nlohmann::json sweep_json(const fault::EttrSweep& sweep, const std::string& out) {
  nlohmann::json points = nlohmann::json::array();
  for (const fault::SweepPoint& p : sweep.points) {
    points.push_back({{"value", p.value},
                      {"step_time_s", p.step_time_s},
                      {"analytic_ettr", p.analytic_ettr},
                      {"analytic_e2e_s", p.analytic_e2e_s},
                      {"renewal_ettr", p.renewal_ettr},
                      {"mc_ettr_mean", p.mc_ettr_mean},
                      {"mc_ettr_std_error", p.mc_ettr_std_error},
                      {"mc_ettr_ci95", {p.mc_ettr_ci95[0], p.mc_ettr_ci95[1]}},
                      {"mc_ettr_pooled", p.mc_ettr_pooled},
                      {"mc_e2e_mean_s", p.mc_e2e_mean_s},
                      {"mc_e2e_ci95_s", {p.mc_e2e_ci95_s[0], p.mc_e2e_ci95_s[1]}},
                      {"mc_e2e_p90_s", p.mc_e2e_p90_s},
                      {"mc_e2e_minus_best_s", p.mc_e2e_minus_best_s},
                      {"mc_e2e_minus_best_ci95_s", {p.mc_e2e_minus_best_ci95_s[0], p.mc_e2e_minus_best_ci95_s[1]}}});
  }
  return {{"parameter", sweep.parameter},
          {"points", points},
          {"best_index", sweep.best},  // the shortest analytic end-to-end time
          {"csv", out + ".csv"},
          {"svg", out + ".svg"}};
}

constexpr const char* kSweepShardKind = "mofasim.sweep_shard";

// Point i's whole run from the shards' documents (any order); --merge usage errors otherwise.
fault::MonteCarloResult merged_point(const std::vector<nlohmann::json>& documents, std::size_t point,
                                     const model::RunSpec& run, bool fail_slow) {
  std::vector<nlohmann::json> parts;
  for (const nlohmann::json& doc : documents) parts.push_back(doc.at("points").at(point));
  try {
    return fault::merge_trial_shards(parts, run, fail_slow);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("mofasim sweep: --merge: ") + e.what());
  }
}

}  // namespace

int run_sweep(const Args& args) {
  CommonOptions common;
  EttrOptions ettr;
  ettr.trials = 2000;
  std::string path;
  std::string param;
  std::string out = "sweep";
  ShardOptions sharding;
  po::options_description desc("options");
  add_common_options(desc, common);
  add_ettr_options(desc, ettr);
  add_shard_options(desc, sharding, "Monte Carlo trials of every point");
  desc.add_options()("param", po::value<std::string>(&param),
                     "the swept field and range: PATH=FROM:TO:STEP, with a unit after a space for dimensional fields "
                     "(e.g. \"fault_tolerance.checkpoint.save_time=1:10:1 s\")")(
      "out,o", po::value<std::string>(&out)->default_value(out), "output prefix: writes PREFIX.csv and PREFIX.svg")(
      "scenario", po::value<std::string>(&path), "scenario YAML file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  parse_command_line("sweep", args, desc, pos, vm);
  if (common.help) {
    print_command_help("sweep", "SCENARIO.yaml --param PATH=FROM:TO:STEP [--out PREFIX] [--trials N] [--step-time S] [--json] [--shard i/n | --merge FILES...]", desc);
    return 0;
  }
  if (path.empty()) throw UsageError("mofasim sweep: missing SCENARIO.yaml (see: mofasim sweep --help)");
  if (param.empty()) throw UsageError("mofasim sweep: missing --param PATH=FROM:TO:STEP");
  check_ettr_options("sweep", ettr);
  const SweepRange range = parse_sweep_range(param);
  check_outputs("sweep", {{"--out", out + ".csv"}, {"--out", out + ".svg"}}, {path});

  // Load every point up front so a bad value or an over-budget point fails before any pricing or
  // Monte Carlo work.
  SweepPoints loaded_points = load_sweep_points(path, common.sets, range, ettr, simulated_fail_slow_pricer());
  std::vector<fault::EttrStudyInputs>& inputs = loaded_points.inputs;
  std::optional<scenario::LoadedScenario>& first = loaded_points.first;
  fault::EttrSweep sweep;
  fault::MonteCarloOptions mc = monte_carlo_options(ettr);
  mc.progress = progress::stderr_callback("sweep", "points", ettr.quiet);  // per point, not per trial
  // A shard names its run (every point's step time and length), so shards of another sweep,
  // scenario or step time are refused.
  nlohmann::json points_id = nlohmann::json::array();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    points_id.push_back({range.values[i], inputs[i].run.step_time_s, inputs[i].run.n_steps});
  }
  const nlohmann::json run_id = {{"scenario", first->proto.name()}, {"param", range.path}, {"points", points_id},
                                 {"trials", ettr.trials},           {"seed", ettr.seed},   {"sets", common.sets}};
  try {
    const ShardOutcome sharded = run_sharded("sweep", sharding, [&](int index, int count) {
      fault::MonteCarloOptions shard_mc = mc;
      shard_mc.progress = nullptr;
      nlohmann::json points = nlohmann::json::array();
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        points.push_back(fault::run_trial_shard(inputs[i].spec, inputs[i].run, shard_mc, index, count));
        if (mc.progress) mc.progress(static_cast<std::int64_t>(i + 1), static_cast<std::int64_t>(inputs.size()));
      }
      return nlohmann::json{{"kind", kSweepShardKind}, {"run", run_id}, {"points", std::move(points)}};
    });
    if (sharded.done) return 0;
    if (sharded.single) {
      std::size_t next = 0;
      sweep = fault::run_ettr_sweep(range.path, range.values, [&](double) { return inputs.at(next++); }, mc);
    } else {
      for (const nlohmann::json& doc : sharded.documents) {
        if (!doc.is_object() || doc.value("kind", "") != kSweepShardKind) {
          throw UsageError("mofasim sweep: --merge: not a sweep shard document (from sweep --shard)");
        }
        if (doc.value("run", nlohmann::json()) != run_id) {
          throw UsageError("mofasim sweep: --merge: a shard comes from another run (" +
                           doc.value("run", nlohmann::json()).dump() + ", this is " + run_id.dump() + ")");
        }
        if (!doc.contains("points") || !doc.at("points").is_array() || doc.at("points").size() != inputs.size()) {
          throw UsageError("mofasim sweep: --merge: a shard document holds no trials for some points");
        }
      }
      sweep = fault::analytic_sweep(range.path, range.values, inputs);
      fault::add_monte_carlo(
          sweep, [&](std::size_t i) { return merged_point(sharded.documents, i, inputs[i].run, inputs[i].spec.fail_slow.rate_per_unit_per_day > 0); }, mc.progress);
    }
  } catch (const fault::EventBudgetExceeded& e) {
    throw located_budget_error(*first, e);
  }
  sweep.axis_label = fault::axis_label(range.path, range.unit);

  write_output_file(out + ".csv", [&](std::ostream& csv) { fault::write_sweep_csv(csv, sweep); });
  write_output_file(out + ".svg", [&](std::ostream& svg) { fault::write_sweep_svg(svg, sweep); });
  if (common.json) {
    std::cout << sweep_json(sweep, out).dump(2) << "\n";
    return 0;
  }
  const fault::SweepPoint& best = sweep.points.at(sweep.best);
  const std::string unit = range.unit.empty() ? "" : " " + range.unit;
  // End-to-end times as durations; the Monte Carlo interval (mean ± z*se) as its half-width.
  std::cout << "swept " << range.path << " over " << range.values.size() << " values; wrote " << out << ".csv and "
            << out << ".svg\n"
            << "best (shortest analytic end-to-end time): " << range.path << " = " << format_number("%.10g", best.value) << unit
            << "\n  E2E  " << format_duration(best.analytic_e2e_s) << " analytic, " << format_duration(best.mc_e2e_mean_s)
            << " Monte Carlo mean (" << format_number("%.0f %% CI: mean ± ", 100 * fault::kCiLevel)
            << format_duration((best.mc_e2e_ci95_s[1] - best.mc_e2e_ci95_s[0]) / 2) << ")\n  ETTR " << format_number("%.4f %%", 100 * best.analytic_ettr)
            << " analytic, " << format_number("%.4f %%", 100 * best.mc_ettr_mean) << " Monte Carlo mean\n  step "
            << format_number("%.6g s", best.step_time_s) << "\n";
  std::cout << fault::monte_carlo_verdict(sweep, [](double v) { return format_number("%.10g", v); }) << "\n";
  std::size_t top_ettr = 0;
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    if (sweep.points[i].analytic_ettr > sweep.points[top_ettr].analytic_ettr) top_ettr = i;
  }
  if (sweep.points[top_ettr].analytic_e2e_s > best.analytic_e2e_s) {
    const fault::SweepPoint& p = sweep.points[top_ettr];
    std::cout << "highest ETTR (" << format_number("%.4f %%", 100 * p.analytic_ettr) << ") is at " << range.path
              << " = " << format_number("%.10g", p.value) << unit << ", but its run is longer: "
              << format_duration(p.analytic_e2e_s) << " (step " << format_number("%.6g s", p.step_time_s) << ")\n";
  }
  return 0;
}

}  // namespace mofasim::cli
