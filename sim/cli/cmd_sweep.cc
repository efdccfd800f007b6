// `mofasim sweep SCENARIO --param PATH=FROM:TO:STEP`: re-evaluates the fault-tolerance study for
// each value of one scenario field (any field, applied as a --set override, so units and
// validation are the same as in a file) and writes a CSV and an SVG plot: the analytic ETTR curve,
// Monte Carlo points with 95% error bars, and the optimum marked.
#include <fstream>
#include <iostream>

#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/cli/ettr_options.h"
#include "sim/cli/scenario_specs.h"
#include "sim/cli/step_time.h"
#include "sim/cli/sweep_range.h"
#include "sim/fault/ettr_sweep.h"
#include "sim/progress/progress_reporter.h"
#include "sim/scenario/loader.h"

namespace mofasim::cli {

namespace {

// `sweep --json`: every point as the CSV has it, the analytic optimum and the files written.
nlohmann::json sweep_json(const fault::EttrSweep& sweep, const std::string& out) {
  nlohmann::json points = nlohmann::json::array();
  for (const fault::SweepPoint& p : sweep.points) {
    points.push_back({{"value", p.value},
                      {"analytic_ettr", p.analytic_ettr},
                      {"analytic_e2e_s", p.analytic_e2e_s},
                      {"renewal_ettr", p.renewal_ettr},
                      {"mc_ettr_mean", p.mc_ettr_mean},
                      {"mc_ettr_std_error", p.mc_ettr_std_error},
                      {"mc_ettr_ci95", {p.mc_ettr_ci95[0], p.mc_ettr_ci95[1]}},
                      {"mc_ettr_pooled", p.mc_ettr_pooled},
                      {"mc_e2e_mean_s", p.mc_e2e_mean_s},
                      {"mc_e2e_p90_s", p.mc_e2e_p90_s}});
  }
  return {{"parameter", sweep.parameter},
          {"points", points},
          {"best_analytic_index", sweep.best_analytic},
          {"csv", out + ".csv"},
          {"svg", out + ".svg"}};
}

}  // namespace

int run_sweep(const Args& args) {
  CommonOptions common;
  EttrOptions ettr;
  ettr.trials = 2000;
  std::string path;
  std::string param;
  std::string out = "sweep";
  po::options_description desc("options");
  add_common_options(desc, common);
  add_ettr_options(desc, ettr);
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
    print_command_help("sweep", "SCENARIO.yaml --param PATH=FROM:TO:STEP [--out PREFIX] [--trials N] [--step-time S] [--json]", desc);
    return 0;
  }
  if (path.empty()) throw UsageError("mofasim sweep: missing SCENARIO.yaml (see: mofasim sweep --help)");
  if (param.empty()) throw UsageError("mofasim sweep: missing --param PATH=FROM:TO:STEP");
  check_ettr_options("sweep", ettr);
  const SweepRange range = parse_sweep_range(param);

  // Load every point up front so a bad value fails before any Monte Carlo work.
  std::vector<fault::EttrStudyInputs> inputs;
  for (double v : range.values) {
    std::vector<std::string> sets = common.sets;
    sets.push_back(range.override_for(v));
    const scenario::LoadedScenario loaded = load_checked(path, sets, true);
    const StepTimeChoice step = resolve_step_time(loaded, ettr.step_time);
    inputs.push_back({.spec = to_fault_spec(loaded),
                      .run = {.step_time_s = step.seconds, .n_steps = scenario::training_steps(loaded.proto)}});
  }
  std::size_t next = 0;
  fault::MonteCarloOptions mc = monte_carlo_options(ettr);
  mc.progress = progress::stderr_callback("sweep", "points", ettr.quiet);  // per point, not per trial
  const fault::EttrSweep sweep = fault::run_ettr_sweep(
      range.path, range.values, [&](double) { return inputs.at(next++); }, mc);

  std::ofstream csv(out + ".csv");
  std::ofstream svg(out + ".svg");
  if (!csv || !svg) throw std::runtime_error("cannot write " + out + ".csv / " + out + ".svg");
  fault::write_sweep_csv(csv, sweep);
  fault::write_sweep_svg(svg, sweep);
  if (common.json) {
    std::cout << sweep_json(sweep, out).dump(2) << "\n";
    return 0;
  }
  const fault::SweepPoint& best = sweep.points.at(sweep.best_analytic);
  std::cout << "swept " << range.path << " over " << range.values.size() << " values; wrote " << out << ".csv and "
            << out << ".svg\nbest analytic ETTR " << best.analytic_ettr * 100 << "% at " << range.path << " = "
            << best.value << " (Monte Carlo " << best.mc_ettr_mean * 100 << "% +/- "
            << 1.96 * best.mc_ettr_std_error * 100 << ")\n";
  return 0;
}

}  // namespace mofasim::cli
