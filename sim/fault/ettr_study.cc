// The ETTR study and its table / JSON / CSV renderings.
#include "sim/fault/ettr_study.h"
#include "sim/units/format.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

namespace mofasim::fault {
namespace {

nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

const char* mode_name(model::CheckpointMode mode) {
  return mode == model::CheckpointMode::kBlocking ? "blocking" : "async";
}

const char* policy_name(model::FailSlowPolicy policy) {
  switch (policy) {
    case model::FailSlowPolicy::kNone: return "none";
    case model::FailSlowPolicy::kRestart: return "restart";
    case model::FailSlowPolicy::kCordon: return "cordon";
    case model::FailSlowPolicy::kHotSpare: return "hot spare";
  }
  return "?";
}

const char* process_name(model::FailureProcessKind kind) {
  switch (kind) {
    case model::FailureProcessKind::kPoisson: return "poisson";
    case model::FailureProcessKind::kWeibull: return "weibull";
    case model::FailureProcessKind::kEmpirical: return "empirical";
  }
  return "?";
}

}  // namespace

EttrStudy run_ettr_study(const model::FaultSpec& spec, const model::RunSpec& run, const MonteCarloOptions& options) {
  return ettr_study_from_trials(spec, run, run_monte_carlo(spec, run, options));
}

EttrStudy ettr_study_from_trials(const model::FaultSpec& spec, const model::RunSpec& run, MonteCarloResult trials) {
  EttrStudy s;
  s.spec = spec;
  s.run = run;
  s.analytic = model::analytic_e2e(spec, run);
  s.optimum = model::optimal_interval(spec, run);
  s.renewal_ettr = model::renewal_ettr(spec, run);
  s.monte_carlo = std::move(trials);
  return s;
}

std::vector<TimeShare> time_breakdown(const EttrStudy& s) {
  const MonteCarloSummary& mc = s.monte_carlo.summary;
  std::vector<TimeShare> out = {
      {"training", "useful steps", static_cast<double>(s.run.n_steps) * s.run.step_time_s},
      {"fail_stop_lost_work", "fail-stop: lost work", mc.mean_lost_work_s},
      {"fail_stop_recovery", "fail-stop: restarts (recovery)", mc.mean_downtime_s},
      {"checkpoints", "checkpoints", mc.mean_checkpoint_s},
      {"init", "init", mc.mean_init_s},
  };
  if (s.spec.fail_slow.on()) {
    out.push_back({"fail_slow_steps", "fail-slow: slow steps and cordons", mc.mean_slow_s});
    out.push_back({"fail_slow_policy", "fail-slow: policy restarts", mc.mean_mitigation_s});
  }
  return out;
}

std::string render_ettr_table(const EttrStudy& s) {
  const MonteCarloSummary& mc = s.monte_carlo.summary;
  std::string out;
  auto line = [&](const std::string& label, const std::string& value) {
    out += label;
    out.append(label.size() < 34 ? 34 - label.size() : 1, ' ');
    out += value + "\n";
  };
  auto pct = [](double x) { return format_number("%.4f %%", 100 * x); };
  auto secs = [](double x) { return format_duration(x); };
  out += "inputs\n";
  line("  failure units", format_number("%.0f", static_cast<double>(s.spec.failure_units)));
  line("  failures per unit per day", format_number("%.6g", s.spec.node_failure_rate_per_day));
  line("  failure process", process_name(s.spec.process.kind));
  line("  downtime per failure (D)", format_number("%.2f s", s.analytic.downtime_s));
  line("  checkpoint interval", format_number("%.0f steps", static_cast<double>(s.spec.checkpoint.interval_steps)) +
                                    ", " + mode_name(s.spec.checkpoint.mode) +
                                    format_number(", save %.3g s", s.spec.checkpoint.save_time_s));
  line("  step time x steps", format_number("%.4g s", s.run.step_time_s) + format_number(" x %.0f", static_cast<double>(s.run.n_steps)));
  out += "\n                                  analytic (MoFa(40))     monte carlo\n";
  auto row = [&](const std::string& label, const std::string& a, const std::string& m) {
    std::string r = label;
    r.append(34 - label.size(), ' ');
    r += a;
    r.append(a.size() < 22 ? 22 - a.size() : 1, ' ');
    out += r + m + "\n";
  };
  // The interval of the mean carries its level; the tails are named by quantile and the bad side
  // is said outright (low ETTR, long E2E), since "P99" alone reads as "the bad case".
  const std::string level = format_number("%.0f %% CI ", 100 * kCiLevel);
  row("  ETTR mean", pct(s.analytic.ettr),
      pct(mc.ettr.mean) + " (" + level + format_number("%.4f-", 100 * mc.ettr.ci95[0]) +
          format_number("%.4f %%)", 100 * mc.ettr.ci95[1]));
  row("  ETTR (pooled: useful/mean E2E)", "", pct(mc.ettr_pooled));
  row("  ETTR renewal (exact, Poisson)", pct(s.renewal_ettr), "");
  // The E2E interval is mean ± z*se: printed as its half-width, since at three significant figures
  // its two ends would read the same ("308 d-308 d") where the half-width says "mean ± 9 min 22 s".
  row("  E2E mean", secs(s.analytic.t_total_s),
      secs(mc.e2e_s.mean) + " (" + format_number("%.0f %% CI: mean ± ", 100 * kCiLevel) + secs((mc.e2e_s.ci95[1] - mc.e2e_s.ci95[0]) / 2) + ")");
  row("  failures", format_number("%.2f", s.analytic.n_failures), format_number("%.2f", mc.mean_failures));
  for (std::size_t c = 0; c < s.monte_carlo.class_names.size(); ++c) {
    row("    " + s.monte_carlo.class_names[c], "", format_number("%.2f", mc.mean_failures_by_class[c]));
  }
  row("  lost work", "", secs(mc.mean_lost_work_s));
  row("  checkpoint overhead", secs(s.analytic.checkpoint_s), secs(mc.mean_checkpoint_s));
  row("  downtime", "", secs(mc.mean_downtime_s));
  if (s.spec.fail_slow.on()) {
    row("  fail-slow episodes", "", format_number("%.2f", mc.mean_episodes));
    if (s.spec.fail_slow.policy != model::FailSlowPolicy::kNone) {
      row("    acted on (" + std::string(policy_name(s.spec.fail_slow.policy)) + ")", "",
          format_number("%.2f", mc.mean_mitigations));
    }
  }
  row("  trials / seed", "", format_number("%.0f / ", static_cast<double>(mc.trials)) + std::to_string(mc.seed));
  std::string head = "\ndistribution over trials";
  head.append(34 - head.size() + 1, ' ');
  for (const char* q : {"P1", "P10", "median", "P90", "P99"}) head += std::string(9 - std::string(q).size(), ' ') + q;
  out += head + "\n";
  auto tails = [&](const std::string& label, const SampleSummary& d, double scale, const char* f, const char* bad) {
    std::string r = label;
    r.append(label.size() < 34 ? 34 - label.size() : 1, ' ');
    for (double q : {d.p1, d.p10, d.p50, d.p90, d.p99}) r += format_number(f, scale * q);
    out += r + "  " + bad + "\n";
  };
  tails("  ETTR (%)", mc.ettr, 100, " %8.4f", "(low = bad: P1 = worst 1 % of runs)");
  tails("  E2E (days)", mc.e2e_s, 1.0 / 86400, " %8.3f", "(high = bad: P99 = worst 1 % of runs)");
  if (mc.has_goodput) tails("  goodput (Mtokens/s)", mc.goodput, 1e-6, " %8.4f", "(low = bad: P1 = worst 1 % of runs)");
  out += "\nwhere the time went (mean per run)                 time    share\n";
  for (const TimeShare& t : time_breakdown(s)) {
    std::string r = "  " + t.label;
    r.append(r.size() < 40 ? 40 - r.size() : 1, ' ');
    const std::string d = secs(t.seconds);
    r.append(d.size() < 14 ? 14 - d.size() : 1, ' ');
    out += r + d + format_number(" %7.3f %%", 100 * t.seconds / mc.e2e_s.mean) + "\n";
  }
  out += "\noptimal interval (MoFa(44))\n";
  // With no failures (rate 0) the optimum is infinite: said in words, never printed as "inf".
  auto interval = [](double x) { return std::isfinite(x) ? format_number("%.2f", x) : std::string("unbounded"); };
  const bool unbounded = !std::isfinite(s.optimum.exact_real);
  line("  exact root", interval(s.optimum.exact_real) + " steps" + (unbounded ? " (no failures)" : ""));
  line("  best integer", format_number("%.0f steps", static_cast<double>(s.optimum.steps)) +
                             format_number(" (ETTR %.4f %%", 100 * s.optimum.ettr) + ", E2E " + format_duration(s.optimum.t_total_s) + ")");
  line("  Young / Daly", interval(s.optimum.young_steps) + " / " + interval(s.optimum.daly_steps) + " steps");
  return out;
}

nlohmann::json ettr_study_json(const EttrStudy& s) {
  const MonteCarloSummary& mc = s.monte_carlo.summary;
  nlohmann::json by_class = nlohmann::json::object();
  for (std::size_t c = 0; c < s.monte_carlo.class_names.size(); ++c) {
    by_class[s.monte_carlo.class_names[c]] = mc.mean_failures_by_class[c];
  }
  nlohmann::json j = {
      {"analytic",
       {{"ettr", number(s.analytic.ettr)},
        {"e2e_s", number(s.analytic.t_total_s)},
        {"t_eff_s", number(s.analytic.t_eff_s)},
        {"n_failures", number(s.analytic.n_failures)},
        {"downtime_per_failure_s", number(s.analytic.downtime_s)},
        {"checkpoint_s", number(s.analytic.checkpoint_s)},
        {"converges", s.analytic.converges},
        {"renewal_ettr", number(s.renewal_ettr)},
        {"optimal_interval_steps", s.optimum.steps},
        {"optimal_interval_exact", number(s.optimum.exact_real)},
        {"optimal_ettr", number(s.optimum.ettr)},
        {"young_interval_steps", number(s.optimum.young_steps)},
        {"daly_interval_steps", number(s.optimum.daly_steps)}}},
      {"monte_carlo",
       {{"trials", mc.trials},
        {"seed", mc.seed},
        {"ettr_mean", mc.ettr.mean},
        {"ettr_std_error", mc.ettr.std_error},
        {"ci_level", kCiLevel},
        {"ettr_ci95", {mc.ettr.ci95[0], mc.ettr.ci95[1]}},
        {"ettr_bad_tail", "low"},
        {"ettr_p1", mc.ettr.p1},
        {"ettr_p10", mc.ettr.p10},
        {"ettr_p50", mc.ettr.p50},
        {"ettr_p90", mc.ettr.p90},
        {"ettr_p99", mc.ettr.p99},
        {"ettr_pooled", mc.ettr_pooled},
        {"e2e_mean_s", mc.e2e_s.mean},
        {"e2e_std_error_s", mc.e2e_s.std_error},
        {"e2e_ci95_s", {mc.e2e_s.ci95[0], mc.e2e_s.ci95[1]}},
        {"e2e_bad_tail", "high"},
        {"e2e_p1_s", mc.e2e_s.p1},
        {"e2e_p10_s", mc.e2e_s.p10},
        {"e2e_p50_s", mc.e2e_s.p50},
        {"e2e_p90_s", mc.e2e_s.p90},
        {"e2e_p99_s", mc.e2e_s.p99},
        {"failures_mean", mc.mean_failures},
        {"failures_by_class_mean", by_class},
        {"lost_work_mean_s", mc.mean_lost_work_s},
        {"checkpoint_mean_s", mc.mean_checkpoint_s},
        {"downtime_mean_s", mc.mean_downtime_s},
        {"init_mean_s", mc.mean_init_s}}},
  };
  nlohmann::json& m = j["monte_carlo"];
  if (mc.has_goodput) {
    m["goodput_bad_tail"] = "low";
    m["goodput_mean_tokens_per_s"] = mc.goodput.mean;
    m["goodput_p1_tokens_per_s"] = mc.goodput.p1;
    m["goodput_p10_tokens_per_s"] = mc.goodput.p10;
    m["goodput_p50_tokens_per_s"] = mc.goodput.p50;
    m["goodput_p90_tokens_per_s"] = mc.goodput.p90;
    m["goodput_p99_tokens_per_s"] = mc.goodput.p99;
  }
  if (s.spec.fail_slow.on()) {
    m["fail_slow"] = {{"policy", policy_name(s.spec.fail_slow.policy)},
                      {"episodes_mean", mc.mean_episodes},
                      {"actions_mean", mc.mean_mitigations},
                      {"slow_steps_mean_s", mc.mean_slow_s},
                      {"policy_restarts_mean_s", mc.mean_mitigation_s}};
  }
  nlohmann::json breakdown = nlohmann::json::object();
  for (const TimeShare& t : time_breakdown(s)) breakdown[t.key] = t.seconds;
  m["time_breakdown_mean_s"] = breakdown;
  return j;
}

void write_trials_csv(std::ostream& out, const MonteCarloResult& r, bool fail_slow) {
  out << "trial,wall_s,ettr,lost_work_s,checkpoint_s,downtime_s,init_s,failures";
  for (const std::string& name : r.class_names) out << ",failures_" << name;
  if (fail_slow) out << ",slow_s,policy_restarts_s,episodes,actions";
  out << "\n";
  const std::size_t classes = r.class_names.size();
  char buffer[256];
  for (std::size_t i = 0; i < r.trials.size(); ++i) {
    const TrialResult& t = r.trials[i];
    std::snprintf(buffer, sizeof buffer, "%zu,%.6f,%.9f,%.6f,%.6f,%.6f,%.6f,%lld", i, t.wall_s, t.ettr, t.lost_work_s,
                  t.checkpoint_s, t.downtime_s, t.init_s, static_cast<long long>(t.failures));
    out << buffer;
    for (std::size_t c = 0; c < classes; ++c) out << ',' << r.failures_by_class[i * classes + c];
    if (fail_slow) {
      std::snprintf(buffer, sizeof buffer, ",%.6f,%.6f,%lld,%lld", t.slow_s, t.mitigation_s,
                    static_cast<long long>(t.episodes), static_cast<long long>(t.mitigations));
      out << buffer;
    }
    out << "\n";
  }
}

}  // namespace mofasim::fault
