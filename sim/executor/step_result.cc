// StepResult renderings: JSON (nlohmann) and a human table.
#include "sim/executor/step_result.h"
#include "sim/units/format.h"

#include <cstdio>
#include <string>
#include <vector>

namespace mofasim::executor {
namespace {

// The hardware class with the most critical-path compute (the first on a tie).
const HardwareUse* bound_by(const StepResult& r) {
  const HardwareUse* best = nullptr;
  for (const HardwareUse& h : r.hardware) {
    if (best == nullptr || h.critical_path_compute_s > best->critical_path_compute_s) best = &h;
  }
  return best;
}

// "0+15", as `mofasim memory` names a DualPipe rank's two stages.
std::string held_label(const std::vector<int>& stages) {
  std::string out;
  for (int s : stages) out += (out.empty() ? "" : "+") + std::to_string(s);
  return out;
}

}  // namespace

nlohmann::json to_json(const StepResult& r) {
  const Breakdown& b = r.breakdown;
  nlohmann::json j;
  j["fidelity"] = r.fidelity == Fidelity::kFull ? "full" : "folded";
  if (!r.fidelity_note.empty()) j["fidelity_note"] = r.fidelity_note;
  j["gpus"] = r.gpus;
  j["simulated_ranks"] = r.simulated_ranks;
  j["step_time_s"] = r.step_time_s;
  j["critical_stage"] = r.critical_stage;
  j["breakdown"] = {{"compute_s", b.compute}, {"recompute_s", b.recompute}, {"optimizer_s", b.optimizer},
                    {"tp_s", b.tp},           {"cp_s", b.cp},               {"ep_s", b.ep},
                    {"pp_comm_s", b.pp_comm}, {"dp_s", b.dp},               {"offload_s", b.offload},
                    {"pp_bubble_s", b.pp_bubble}};
  j["tflops_per_gpu"] = r.tflops_per_gpu;
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  j["tokens_per_s"] = r.tokens_per_s;
  j["peak_memory_bytes"] = r.peak_memory_bytes;
  nlohmann::json mem = nlohmann::json::array();
  for (const StageMemory& m : r.memory) {
    mem.push_back({{"stage", m.stage},
                   {"static_bytes", m.static_bytes},
                   {"peak_activation_bytes", m.peak_activation_bytes},
                   {"model_activation_bytes", m.model_activation_bytes},
                   {"allocated_bytes", m.allocated_bytes},
                   {"fragmentation_bytes", m.fragmentation_bytes},
                   {"cuda_context_bytes", m.cuda_context_bytes},
                   {"reserved_bytes", m.reserved_bytes},
                   {"peak_bytes", m.peak_bytes},
                   {"capacity_bytes", m.capacity_bytes},
                   {"fits", m.fits()}});
    if (!m.bound_hardware.empty()) mem.back()["bound_by"] = m.bound_hardware;
    if (!m.stages_held.empty()) mem.back()["stages_held"] = m.stages_held;
  }
  j["memory"] = mem;
  nlohmann::json cp = nlohmann::json::object();
  for (int c = 0; c < kCategoryCount; ++c) {
    cp[std::string(category_name(static_cast<Category>(c)))] = r.critical_path_share[static_cast<std::size_t>(c)];
  }
  j["critical_path"] = cp;
  nlohmann::json path = nlohmann::json::array();
  for (const CriticalTask& t : r.critical_path_tasks) {
    path.push_back({{"task", t.name}, {"stage", t.stage}, {"rank", t.rank}, {"start_s", t.start_s},
                    {"duration_s", t.duration_s}});
  }
  if (!r.critical_path_tasks.empty()) j["critical_path_tasks"] = path;
  if (r.healthy_step_time_s) {
    nlohmann::json each = nlohmann::json::array();
    for (const PerturbationCost& c : r.perturbation_costs) {
      each.push_back({{"name", c.name}, {"step_time_s", c.step_time_s}, {"cost_s", c.cost_s},
                      {"critical_path_s", c.critical_path_s}, {"on_critical_path", c.critical_path_s > 0}});
    }
    j["perturbations"] = {{"healthy_step_time_s", *r.healthy_step_time_s},
                          {"cost_s", r.step_time_s - *r.healthy_step_time_s},
                          {"critical_path_s", r.critical_path_perturbed_s},
                          {"each", each}};
  }
  if (const HardwareUse* bound = bound_by(r)) {
    nlohmann::json each = nlohmann::json::array();
    for (const HardwareUse& h : r.hardware) {
      each.push_back({{"name", h.name}, {"gpus", h.gpus}, {"critical_path_compute_s", h.critical_path_compute_s}});
    }
    j["hardware"] = {{"bound_by", bound->name}, {"each", each}};
  }
  j["events"] = r.events;
  j["tasks"] = r.tasks;
  j["instances"] = r.instances;
  return j;
}

std::string to_table(const StepResult& r) {
  const Breakdown& b = r.breakdown;
  std::string s;
  auto row = [&](const std::string& name, const std::string& value) {
    s += name;
    s.append(name.size() < 28 ? 28 - name.size() : 1, ' ');
    s += value;
    s += '\n';
  };
  auto secs = [&](const char* name, double v) {
    row(name, format_number("%.6f s", v) + format_number("  (%5.1f%%)", r.step_time_s > 0 ? 100.0 * v / r.step_time_s : 0.0));
  };
  row("fidelity", std::string(r.fidelity == Fidelity::kFull ? "full" : "folded") +
                     (r.fidelity_note.empty() ? "" : " (" + r.fidelity_note + ")"));
  row("gpus (simulated ranks)", std::to_string(r.gpus) + " (" + std::to_string(r.simulated_ranks) + ")");
  row("step time", format_number("%.6f s", r.step_time_s));
  row("critical stage", std::to_string(r.critical_stage));
  secs("  compute", b.compute);
  secs("  recompute", b.recompute);
  secs("  exposed TP", b.tp);
  secs("  exposed CP", b.cp);
  secs("  exposed EP", b.ep);
  secs("  PP bubble", b.pp_bubble);
  secs("  exposed PP comm", b.pp_comm);
  secs("  exposed DP", b.dp);
  secs("  optimizer", b.optimizer);
  secs("  exposed offload", b.offload);
  row("TFLOPS/GPU", format_number("%.1f", r.tflops_per_gpu));
  row("MFU / HFU", format_number("%.1f%%", 100 * r.mfu) + " / " + format_number("%.1f%%", 100 * r.hfu));
  row("tokens/s", format_number("%.0f", r.tokens_per_s));
  if (const HardwareUse* bound = bound_by(r)) {
    row("hardware", "step bound by " + bound->name + " (the most critical-path compute)");
    for (const HardwareUse& h : r.hardware) {
      row("  " + h.name, std::to_string(h.gpus) + (h.gpus == 1 ? " GPU, " : " GPUs, ") +
                             format_number("%.6f s of critical-path compute", h.critical_path_compute_s));
    }
  }
  row("peak memory", format_number("%.2f GiB", r.peak_memory_bytes / (1024.0 * 1024 * 1024)));
  for (const StageMemory& m : r.memory) {
    row(m.stages_held.empty() ? "  stage " + std::to_string(m.stage)
                              : "  rank " + std::to_string(m.stage) + " (stages " + held_label(m.stages_held) + ")",
        format_number("%.2f GiB", m.peak_bytes / (1024.0 * 1024 * 1024)) + " reserved (allocated " +
            format_number("%.2f", m.allocated_bytes / (1024.0 * 1024 * 1024)) + ": static " +
            format_number("%.2f", m.static_bytes / (1024.0 * 1024 * 1024)) + " + activation " +
            format_number("%.2f", m.peak_activation_bytes / (1024.0 * 1024 * 1024)) + ")" +
            (m.bound_hardware.empty() ? "" : " on " + m.bound_hardware + format_number(" of %.2f GiB", m.capacity_bytes / (1024.0 * 1024 * 1024))) +
            (m.fits() ? "" : "  OUT OF MEMORY"));
  }
  std::string path;
  for (int c = 0; c < kCategoryCount; ++c) {
    const double v = r.critical_path_share[static_cast<std::size_t>(c)];
    if (v <= 0) continue;
    path += std::string(category_name(static_cast<Category>(c))) + format_number(" %.1f%% ", 100 * v);
  }
  row("critical path", path);
  if (r.healthy_step_time_s) {
    const double healthy = *r.healthy_step_time_s;
    row("perturbations", format_number("%+.6f s", r.step_time_s - healthy) + " over the healthy " +
                             format_number("%.6f s", healthy) + format_number(" (%.1f%%)", healthy > 0 ? 100 * (r.step_time_s / healthy - 1) : 0.0));
    for (const PerturbationCost& c : r.perturbation_costs) {
      row("  " + c.name, format_number("%+.6f s alone", c.cost_s) +
                             (c.critical_path_s > 0 ? format_number(", %.6f s of its critical path", c.critical_path_s)
                                                    : std::string(", off the critical path")));
    }
  }
  row("events", std::to_string(r.events));
  return s;
}

}  // namespace mofasim::executor
