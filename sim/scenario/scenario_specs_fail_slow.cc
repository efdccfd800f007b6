// Binding and pricing of fault_tolerance.fail_slow.
#include "sim/scenario/scenario_specs_fail_slow.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/executor/simulate_step.h"
#include "sim/units/format.h"
#include "sim/scenario/scenario_specs.h"
#include "topology/placement.h"
#include "topology/rank_order.h"

namespace mofasim::cli {
namespace {

const std::string kField = "fault_tolerance.fail_slow";

void require(bool ok, const std::string& field, const std::string& message) {
  if (!ok) throw std::invalid_argument(kField + "." + field + ": " + message);
}

const char* scope_name(proto::FailSlowScope s) {
  switch (s) {
    case proto::FAIL_SLOW_GPU: return "gpu";
    case proto::FAIL_SLOW_LINK: return "link";
    default: return "node";
  }
}

}  // namespace

model::FailSlowSpec to_fail_slow_spec(const scenario::LoadedScenario& loaded) {
  const proto::Scenario& sc = loaded.proto;
  model::FailSlowSpec f;
  if (!sc.fault_tolerance().has_fail_slow()) return f;
  const proto::FailSlow& p = sc.fault_tolerance().fail_slow();
  require(p.has_rate_per_day(), "rate_per_day", "missing (episode onsets per unit per day)");
  require(p.has_slowdown(), "slowdown", "missing (how much slower the part runs, >= 1)");
  require(p.slowdown() >= 1, "slowdown", "must be >= 1, got " + std::to_string(p.slowdown()));
  f.rate_per_unit_per_day = p.rate_per_day();
  f.units = p.scope() == proto::FAIL_SLOW_GPU ? sc.topology().gpus()
                                               : sc.topology().gpus() / std::max(1, sc.topology().gpus_per_node());
  switch (p.distribution()) {
    case proto::FIXED: f.duration.kind = model::RecoveryKind::kFixed; break;
    case proto::LOGNORMAL: f.duration.kind = model::RecoveryKind::kLognormal; break;
    case proto::EMPIRICAL: f.duration.kind = model::RecoveryKind::kEmpirical; break;
    default: f.duration.kind = model::RecoveryKind::kExponential; break;
  }
  if (f.duration.kind == model::RecoveryKind::kEmpirical) {
    require(p.samples_size() > 0, "samples", "missing (episode lengths in seconds, for distribution empirical)");
    f.duration.samples_s.assign(p.samples().begin(), p.samples().end());
  } else {
    require(p.has_duration() && p.duration() > 0, "duration", "missing or 0 (the mean episode length, > 0)");
    f.duration.mean_s = p.duration();
    f.duration.sigma = p.sigma();
    require(f.duration.kind != model::RecoveryKind::kLognormal || p.sigma() > 0, "sigma", "must be > 0 for a lognormal");
  }
  switch (p.policy()) {
    case proto::FAIL_SLOW_RESTART: f.policy = model::FailSlowPolicy::kRestart; break;
    case proto::FAIL_SLOW_CORDON: f.policy = model::FailSlowPolicy::kCordon; break;
    case proto::FAIL_SLOW_HOT_SPARE: f.policy = model::FailSlowPolicy::kHotSpare; break;
    default: f.policy = model::FailSlowPolicy::kNone; break;
  }
  f.detection_time_s = p.detection_time();
  f.action_time_s = p.action_time();
  f.dp_replicas = sc.parallelism().dp();
  require(f.policy != model::FailSlowPolicy::kCordon || f.dp_replicas >= 2, "policy",
          "cordon needs parallelism.dp >= 2 (it goes on with one DP replica fewer)");
  f.slow_step_factor = {p.slowdown()};
  return f;
}

FailSlowPricing price_fail_slow(const scenario::LoadedScenario& loaded, model::FailSlowSpec& spec) {
  FailSlowPricing out;
  if (!spec.on()) return out;
  const proto::FailSlow& p = loaded.proto.fault_tolerance().fail_slow();
  out.scope = scope_name(p.scope());
  out.slowdown = p.slowdown();
  const executor::SimulationInput healthy = simulation_input(loaded);
  const executor::SimulateOptions options{};
  out.healthy_step_s = executor::simulate_step(healthy, options).step_time_s;
  const topology::Placement placement = scenario_placement(loaded);
  const auto stage_ranks = placement.members(topology::GroupKind::kPp, 0);
  const int per_node = healthy.topology.gpus_per_node;
  // A node whose GPUs are all one TP group: every TP collective of the layer waits on its slowest
  // member, so one slow GPU stands for the slow node. That case folds (the GPU is in replica 0);
  // the whole node would not (its other GPUs are in other pipelines, sim/executor/
  // perturbed_folding.h) and would replay every rank. On llama3-405b-h100-2048 at 1.5x: one GPU
  // 6.344165 s folded, the node 6.344473 s at full fidelity (0.005 % apart, 1.7 s vs 11 s).
  const bool node_in_one_tp_group = out.scope == "node" && healthy.rank_order.starts_with("tp") &&
                                    healthy.parallel.tp % per_node == 0;
  if (node_in_one_tp_group) out.note = "the node is one TP group: priced as its first GPU slow (folded, exact to 0.005 %)";
  spec.slow_step_factor.clear();
  for (const int rank : stage_ranks) {
    executor::SimulationInput in = healthy;
    perturb::PerturbationSpec extra;
    if (out.scope == "link") {
      const int nic = (rank % per_node) * healthy.topology.nics() / per_node;
      extra.degraded_links.push_back({.name = "fail-slow link", .level = perturb::LinkLevel::kNic,
                                      .node = rank / per_node, .nic = nic, .bandwidth_fraction = 1 / out.slowdown});
    } else {
      perturb::SlowGpus slow;
      slow.name = "fail-slow " + out.scope;
      if (out.scope == "gpu" || node_in_one_tp_group) {
        slow.ranks = {rank};
      } else {
        slow.nodes = {rank / per_node};
      }
      slow.slowdown = out.slowdown;
      extra.slow.push_back(slow);
    }
    // Whatever the scenario perturbs already stays, so the case is "this and one more slow part".
    in.perturbations.slow.insert(in.perturbations.slow.end(), extra.slow.begin(), extra.slow.end());
    in.perturbations.degraded_links.insert(in.perturbations.degraded_links.end(), extra.degraded_links.begin(),
                                           extra.degraded_links.end());
    const double step = executor::simulate_step(in, options).step_time_s;
    out.slow_step_s.push_back(step);
    spec.slow_step_factor.push_back(step / out.healthy_step_s);
  }
  if (spec.policy == model::FailSlowPolicy::kCordon) {
    // One replica fewer at the same per-replica batch: the step of dp - 1 replicas, whose GPUs must
    // still form the topology's nodes and supernodes. Where they do not (e.g. 127 replicas of 16
    // nodes on 256-node supernodes), the healthy step stands in for it: every replica still runs the
    // same micro-batches and only the DP ring is one member shorter.
    executor::SimulationInput smaller = healthy;
    smaller.parallel.dp -= 1;
    smaller.parallel.global_batch = healthy.parallel.global_batch / healthy.parallel.dp * smaller.parallel.dp;
    smaller.topology.gpus = healthy.topology.gpus / healthy.parallel.dp * smaller.parallel.dp;
    try {
      smaller.topology.validate();
      out.cordon_step_s = executor::simulate_step(smaller, options).step_time_s;
      out.cordon_source = "simulated at dp " + std::to_string(smaller.parallel.dp);
    } catch (const std::invalid_argument& e) {
      out.cordon_step_s = out.healthy_step_s;
      out.cordon_source = std::string("the healthy step (dp - 1 does not fit the topology: ") + e.what() + ")";
    }
    spec.cordon_step_factor = out.cordon_step_s / out.healthy_step_s;
  }
  return out;
}

namespace {

const char* policy_word(model::FailSlowPolicy p) {
  switch (p) {
    case model::FailSlowPolicy::kRestart: return "restart";
    case model::FailSlowPolicy::kCordon: return "cordon";
    case model::FailSlowPolicy::kHotSpare: return "hot_spare";
    default: return "none";
  }
}

const char* duration_word(model::RecoveryKind k) {
  switch (k) {
    case model::RecoveryKind::kFixed: return "fixed";
    case model::RecoveryKind::kLognormal: return "lognormal";
    case model::RecoveryKind::kEmpirical: return "empirical";
    default: return "exponential";
  }
}

}  // namespace

std::string render_fail_slow_cases(const FailSlowPricing& p, const model::FailSlowSpec& spec) {
  std::string out = "fail-slow  one slow " + p.scope + format_number(" (x%.4g)", p.slowdown) +
                    format_number(" at %.4g per ", spec.rate_per_unit_per_day) + (p.scope == "gpu" ? "GPU" : "node") +
                    " per day, " + duration_word(spec.duration.kind) +
                    (spec.duration.kind == model::RecoveryKind::kEmpirical
                         ? std::string(" lengths")
                         : " lengths of mean " + format_duration(spec.duration.mean_s)) +
                    "; policy " + policy_word(spec.policy);
  if (spec.policy != model::FailSlowPolicy::kNone) {
    out += " after " + format_duration(spec.detection_time_s) + " (action " + format_duration(spec.action_time_s) + ")";
  }
  if (p.slow_step_s.empty() || spec.slow_step_factor.size() < p.slow_step_s.size()) return out;  // nothing priced
  out += "\n           step simulated with it at each pipeline stage:";
  double lo = spec.slow_step_factor.front();
  double hi = lo;
  for (std::size_t i = 0; i < p.slow_step_s.size(); ++i) {
    out += format_number(" %.4g", p.slow_step_s[i]);
    lo = std::min(lo, spec.slow_step_factor[i]);
    hi = std::max(hi, spec.slow_step_factor[i]);
  }
  out += format_number(" s (x%.4f", lo) + format_number(" to x%.4f", hi) +
         format_number(" the healthy %.4g s)\n", p.healthy_step_s);
  if (!p.note.empty()) out += "           " + p.note + "\n";
  if (spec.policy == model::FailSlowPolicy::kCordon) {
    out += format_number("           dp - 1 step %.4g s, ", p.cordon_step_s) + p.cordon_source + "\n";
  }
  return out;
}

nlohmann::json fail_slow_json(const FailSlowPricing& p, const model::FailSlowSpec& spec) {
  nlohmann::json j = {{"scope", p.scope},
                      {"slowdown", p.slowdown},
                      {"rate_per_unit_per_day", spec.rate_per_unit_per_day},
                      {"units", spec.units},
                      {"policy", policy_word(spec.policy)},
                      {"detection_time_s", spec.detection_time_s},
                      {"action_time_s", spec.action_time_s},
                      {"healthy_step_s", p.healthy_step_s},
                      {"slow_step_s_by_stage", p.slow_step_s},
                      {"slow_step_factor_by_stage", spec.slow_step_factor},
                      {"note", p.note}};
  if (spec.policy == model::FailSlowPolicy::kCordon) {
    j["cordon_step_s"] = p.cordon_step_s;
    j["cordon_step_source"] = p.cordon_source;
  }
  return j;
}

}  // namespace mofasim::cli
