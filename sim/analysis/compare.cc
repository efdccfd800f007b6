// Field-by-field comparison of the analytic MoFa model and the step simulation (see compare.h).
#include "sim/analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "sim/scenario/scenario_specs.h"
#include "sim/units/format.h"

namespace mofasim::analysis {
namespace {


double relative(double analytic, double simulated) {
  if (analytic == simulated) return 0;
  if (analytic == 0) return simulated > 0 ? std::numeric_limits<double>::infinity()
                                          : -std::numeric_limits<double>::infinity();
  return (simulated - analytic) / std::abs(analytic);
}

std::string printf_string(const char* format, double a, double b) {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, format, a, b);
  return buffer;
}

std::string number(double v) {
  char buffer[32];
  if (v == 0) return "0";
  if (std::abs(v) >= 1e5 || std::abs(v) < 1e-3) {
    std::snprintf(buffer, sizeof buffer, "%.6e", v);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.6f", v);
  }
  return buffer;
}

std::string percent(double r) {
  if (std::isinf(r)) return r > 0 ? "+inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.4f%%", 100 * r);
  return buffer;
}

std::string pad(std::string s, std::size_t width, bool right) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

const char* field_group_name(FieldGroup group) {
  switch (group) {
    case FieldGroup::kHeadline: return "headline";
    case FieldGroup::kBreakdown: return "breakdown";
    case FieldGroup::kThroughput: return "throughput";
    case FieldGroup::kMemory: return "memory";
  }
  return "?";
}

int ValidationReport::flagged_count() const {
  return static_cast<int>(std::count_if(fields.begin(), fields.end(), [](const FieldComparison& f) { return f.flagged; }));
}

const FieldComparison& ValidationReport::field(const std::string& name) const {
  for (const FieldComparison& f : fields) {
    if (f.name == name) return f;
  }
  throw std::invalid_argument("validation report: no field named '" + name + "'");
}

ValidationReport compare_results(const model::AnalyticResult& analytic, const executor::StepResult& simulated,
                                 const CompareOptions& options, std::string label) {
  if (!(options.tolerance >= 0) || !std::isfinite(options.tolerance)) {
    throw std::invalid_argument("tolerance must be a finite number >= 0, got " + std::to_string(options.tolerance));
  }
  if (!(options.breakdown_floor_share >= 0) || !std::isfinite(options.breakdown_floor_share)) {
    throw std::invalid_argument("breakdown_floor_share must be a finite number >= 0, got " +
                                std::to_string(options.breakdown_floor_share));
  }
  ValidationReport report{.scenario = std::move(label), .options = options, .fields = {}, .analytic = analytic,
                          .simulated = simulated};
  const model::StepTiming& a = analytic.timing;
  const model::StepBreakdown& ab = a.breakdown;
  const executor::Breakdown& sb = simulated.breakdown;
  const double floor = options.breakdown_floor_share * a.step_time_s;
  auto add = [&](std::string name, FieldGroup group, double av, double sv) {
    const double diff = std::abs(sv - av);
    bool flagged = diff > options.tolerance * std::max(std::abs(av), std::abs(sv));
    if (group == FieldGroup::kBreakdown && diff <= floor) flagged = false;
    report.fields.push_back(FieldComparison{.name = std::move(name),
                                            .group = group,
                                            .analytic = av,
                                            .simulated = sv,
                                            .relative_difference = relative(av, sv),
                                            .flagged = flagged});
  };
  add("step_time_s", FieldGroup::kHeadline, a.step_time_s, simulated.step_time_s);
  // Recompute and exposed offload copies live inside the analytic model's compute (compare.h).
  add("compute_s", FieldGroup::kBreakdown, ab.compute, sb.compute + sb.recompute + sb.offload);
  add("tp_exposed_s", FieldGroup::kBreakdown, ab.tp_exposed, sb.tp);
  add("cp_exposed_s", FieldGroup::kBreakdown, ab.cp_exposed, sb.cp);
  add("ep_exposed_s", FieldGroup::kBreakdown, ab.ep_exposed, sb.ep);
  add("pp_bubble_s", FieldGroup::kBreakdown, ab.pp_bubble, sb.pp_bubble);
  add("pp_exposed_s", FieldGroup::kBreakdown, ab.pp_exposed, sb.pp_comm);
  add("dp_exposed_s", FieldGroup::kBreakdown, ab.dp_exposed, sb.dp);
  add("optimizer_s", FieldGroup::kBreakdown, ab.optimizer, sb.optimizer);
  add("tflops_per_gpu", FieldGroup::kThroughput, a.tflops_per_gpu, simulated.tflops_per_gpu);
  add("mfu", FieldGroup::kThroughput, a.mfu, simulated.mfu);
  add("hfu", FieldGroup::kThroughput, a.hfu, simulated.hfu);
  add("tokens_per_s", FieldGroup::kThroughput, a.tokens_per_s, simulated.tokens_per_s);
  const std::size_t stages = std::max(analytic.memory.stages.size(), simulated.memory.size());
  for (std::size_t k = 0; k < stages; ++k) {
    const double av = k < analytic.memory.stages.size() ? analytic.memory.stages[k].peak_bytes : 0;
    const double sv = k < simulated.memory.size() ? simulated.memory[k].peak_bytes : 0;
    add("peak_memory_gib[" + std::to_string(k) + "]", FieldGroup::kMemory, av / kBytesPerGiB, sv / kBytesPerGiB);
  }
  return report;
}

ValidationReport validate_scenario(const scenario::LoadedScenario& loaded, const ValidateOptions& options) {
  const model::AnalyticResult analytic = model::evaluate_mofa(cli::analytic_input(loaded));
  executor::SimulateOptions simulate{.fidelity = options.fidelity};
  simulate.progress = options.progress;
  const executor::StepResult simulated = executor::simulate_step(cli::simulation_input(loaded), simulate);
  return compare_results(analytic, simulated, options.compare, loaded.path);
}

std::string to_table(const ValidationReport& report) {
  std::string out = "scenario: " + report.scenario + "\n";
  out += pad("field", 20, false) + pad("analytic", 16, true) + pad("simulated", 16, true) + pad("difference", 13, true) +
         "\n";
  for (const FieldComparison& f : report.fields) {
    out += pad(f.name, 20, false) + pad(number(f.analytic), 16, true) + pad(number(f.simulated), 16, true) +
           pad(percent(f.relative_difference), 13, true) + (f.flagged ? "  !" : "") + "\n";
  }
  const int flagged = report.flagged_count();
  out += flagged == 0 ? "agree: every field within " : std::to_string(flagged) + " field(s) differ by more than ";
  out += printf_string("%.4g%% (breakdown differences under %.2g of the step ignored)\n", 100 * report.options.tolerance,
                       report.options.breakdown_floor_share);
  return out;
}

std::string summary_table(std::span<const ValidationReport> reports) {
  std::string out = pad("scenario", 40, false) + pad("analytic s", 14, true) + pad("simulated s", 14, true) +
                    pad("difference", 13, true) + pad("flagged", 9, true) + "\n";
  for (const ValidationReport& r : reports) {
    const FieldComparison& step = r.field("step_time_s");
    out += pad(r.scenario, 40, false) + pad(number(step.analytic), 14, true) + pad(number(step.simulated), 14, true) +
           pad(percent(step.relative_difference), 13, true) + pad(std::to_string(r.flagged_count()), 9, true) + "\n";
  }
  return out;
}

nlohmann::json to_json(const ValidationReport& report) {
  nlohmann::json fields = nlohmann::json::array();
  for (const FieldComparison& f : report.fields) {
    nlohmann::json j{{"name", f.name},
                     {"group", field_group_name(f.group)},
                     {"analytic", f.analytic},
                     {"simulated", f.simulated},
                     {"flagged", f.flagged}};
    j["relative_difference"] =
        std::isfinite(f.relative_difference) ? nlohmann::json(f.relative_difference) : nlohmann::json(nullptr);
    fields.push_back(std::move(j));
  }
  return nlohmann::json{{"scenario", report.scenario},
                        {"tolerance", report.options.tolerance},
                        {"ok", report.ok()},
                        {"flagged", report.flagged_count()},
                        {"fields", std::move(fields)}};
}

executor::SimulationInput to_simulation_input(const model::AnalyticInput& input) {
  return executor::SimulationInput{.model = input.model,
                                   .hardware = input.hardware,
                                   .parallel = input.parallel,
                                   .features = input.features,
                                   .topology = input.topology,
                                   .rank_order = input.rank_order.to_string()};
}

std::function<double(const model::AnalyticInput&)> simulated_step_evaluator() {
  return [](const model::AnalyticInput& input) {
    return executor::simulate_step(to_simulation_input(input), executor::SimulateOptions{}).step_time_s;
  };
}

}  // namespace mofasim::analysis
