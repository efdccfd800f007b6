// Memory fit of a scenario's own layout (see memory_fit.h).
#include "sim/cli/memory_fit.h"

#include <ostream>
#include <vector>

#include "model/memory.h"
#include "schedules/factory.h"
#include "sim/scenario/node_hardware.h"
#include "sim/scenario/scenario_specs.h"
#include "topology/placement.h"
#include "topology/rank_order.h"
#include "sim/units/format.h"

namespace mofasim::cli {

namespace {

// Stages held by GPUs of each hardware class (class 0: the hardware section); one class: all.
std::vector<std::vector<char>> stages_by_class(const scenario::LoadedScenario& s,
                                               const std::vector<perturb::NodeHardware>& entries) {
  const int stages = s.parallel.pp;
  std::vector<std::vector<char>> held(entries.size() + 1, std::vector<char>(static_cast<std::size_t>(stages), 0));
  if (entries.empty()) {
    held[0].assign(static_cast<std::size_t>(stages), 1);
    return held;
  }
  const topology::TopologySpec topo = to_topology_spec(s.proto);
  const std::vector<int> klass = perturb::hardware_class_by_gpu(entries, topo);
  const topology::Placement placement = scenario_placement(s);
  for (int g = 0; g < placement.group_count(topology::GroupKind::kPp); ++g) {
    const auto ranks = placement.members(topology::GroupKind::kPp, g);
    for (int st = 0; st < stages && st < static_cast<int>(ranks.size()); ++st) {
      held[static_cast<std::size_t>(klass[static_cast<std::size_t>(ranks[static_cast<std::size_t>(st)])])]
          [static_cast<std::size_t>(st)] = 1;
    }
  }
  return held;
}

}  // namespace

MemoryFit memory_fit(const scenario::LoadedScenario& s) {
  const std::vector<double> inflight = schedules::stage_inflight_microbatches(s.model, s.parallel, s.features);
  const std::vector<model::RankOrder> orders = schedules::rank_orders(s.model, s.parallel, s.features);
  // Heterogeneous GPUs: every GPU against its own capacity; the stage and GPU with the least
  // room (the most excess) is the one reported.
  const std::vector<perturb::NodeHardware> entries = scenario::to_node_hardware(s.proto);
  const std::vector<std::vector<char>> held = stages_by_class(s, entries);
  MemoryFit fit;
  bool first = true;
  double worst_room = 0;
  std::vector<char> over(static_cast<std::size_t>(s.parallel.pp), 0);
  for (std::size_t c = 0; c < held.size(); ++c) {
    const model::HardwareSpec& hw = c == 0 ? s.hardware : entries[c - 1].hardware;
    const model::MemoryReport report = model::memory_report(s.model, hw, s.parallel, s.features, inflight, orders);
    for (const model::StageMemory& st : report.stages) {
      const auto i = static_cast<std::size_t>(st.rank);
      if (i >= held[c].size() || held[c][i] == 0) continue;
      if (!st.fits()) over[i] = 1;
      const double room = st.capacity_bytes - st.peak_bytes;
      // One class: the highest peak, as memory_report's worst_rank; several: the least room.
      const bool worse = held.size() == 1 ? st.rank == report.worst_rank : room < worst_room;
      if (first || worse) {
        first = false;
        worst_room = room;
        fit.worst_stage = st.rank;
        fit.capacity_bytes = st.capacity_bytes;
        fit.peak_bytes = st.peak_bytes;
        fit.allocated_bytes = st.allocated_bytes;
        fit.excess_bytes = st.excess_bytes;
        if (held.size() > 1) fit.hardware = hw.name;
      }
    }
  }
  for (char o : over) fit.stages_over += o;
  if (s.parallel.schedule == schedules::ScheduleKind::kDualPipe && s.parallel.pp > 1) {
    const int mirror = s.parallel.pp - 1 - fit.worst_stage;
    fit.worst_stages_held = {fit.worst_stage};
    if (mirror != fit.worst_stage) fit.worst_stages_held.push_back(mirror);
  }
  fit.fits = fit.stages_over == 0;
  return fit;
}

void warn_if_out_of_memory(const std::string& command, const MemoryFit& fit, std::ostream& err) {
  if (fit.fits) return;
  std::string where = "stage " + std::to_string(fit.worst_stage);
  if (!fit.worst_stages_held.empty()) {
    where = "rank " + std::to_string(fit.worst_stage) + " (stages ";
    for (std::size_t k = 0; k < fit.worst_stages_held.size(); ++k) {
      where += (k == 0 ? "" : "+") + std::to_string(fit.worst_stages_held[k]);
    }
    where += ")";
  }
  err << "mofasim " << command << ": warning: the scenario's layout does not fit in GPU memory: " << where << " needs "
      << format_bytes(fit.peak_bytes) << " reserved (" << format_bytes(fit.allocated_bytes) << " allocated) of "
      << format_bytes(fit.capacity_bytes)
      << (fit.hardware.empty() ? "" : " on " + fit.hardware) << " ("
      << format_bytes(fit.excess_bytes) << " over; " << fit.stages_over << (fit.stages_over == 1 ? " stage" : " stages")
      << " over; see mofasim memory)\n";
}

nlohmann::json to_json(const MemoryFit& fit) {
  nlohmann::json j = {{"fits", fit.fits},
          {"worst_stage", fit.worst_stage},
          {"stages_over", fit.stages_over},
          {"peak_bytes", fit.peak_bytes},
          {"allocated_bytes", fit.allocated_bytes},
          {"capacity_bytes", fit.capacity_bytes},
          {"excess_bytes", fit.excess_bytes}};
  if (!fit.hardware.empty()) j["hardware"] = fit.hardware;
  return j;
}

}  // namespace mofasim::cli
