#include "sim/executor/replay_background_flows.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/units/time.h"

namespace mofasim::executor {
namespace {

void check(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("background traffic: " + message);
}

bool non_negative(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace

void BackgroundFlows::start(const BackgroundEgress& egress, const topology::Topology& topo, const InstanceMap& map,
                            int world, std::span<const sim::ResourceId> link_res, sim::FluidModel& fluid) {
  check(egress.bytes_by_gpu.size() == static_cast<std::size_t>(world), "one byte count per GPU of the job");
  check(egress.streams >= 1, "streams must be >= 1");
  check(non_negative(egress.start_s) && non_negative(egress.node_limit) && non_negative(egress.shared_limit),
        "start and limits must be finite numbers >= 0");
  for (double b : egress.bytes_by_gpu) check(non_negative(b), "a byte count must be a finite number >= 0");
  outcome_.left_at_step_end.assign(egress.bytes_by_gpu.size(), 0.0);

  const int per_node = topo.gpus_per_node();
  std::vector<int> simulated_on_node(static_cast<std::size_t>(topo.nodes()), 0);
  std::vector<int> gpus;
  for (int s = 0; s < map.stages(); ++s) {
    for (int g = 0; g < map.replicas(); ++g) gpus.push_back(map.rank(s, g));
  }
  std::sort(gpus.begin(), gpus.end());
  for (int gpu : gpus) ++simulated_on_node[static_cast<std::size_t>(topo.node_of(gpu))];

  // Fold weights (replay_background.h): how many real flows one simulated flow stands for.
  const double shared_weight = static_cast<double>(world) / static_cast<double>(gpus.size());
  std::optional<sim::ResourceId> shared;
  if (egress.shared_limit > 0) shared = fluid.add_resource({.name = "storage", .capacity = egress.shared_limit});
  std::vector<std::optional<sim::ResourceId>> node_res(static_cast<std::size_t>(topo.nodes()));
  const double per_stream = 1.0 / egress.streams;
  for (int gpu : gpus) {
    const double bytes = egress.bytes_by_gpu[static_cast<std::size_t>(gpu)];
    if (bytes <= 0) continue;
    const int node = topo.node_of(gpu);
    std::vector<sim::ResourceUse> uses;
    uses.push_back({.resource = link_res[topology::index_of(topo.nic_tx(node, topo.rail_of(gpu)))]});
    if (egress.node_limit > 0) {
      auto& res = node_res[static_cast<std::size_t>(node)];
      if (!res) res = fluid.add_resource({.name = "storage_client:" + std::to_string(node), .capacity = egress.node_limit});
      const int node_gpus = std::min(per_node, world - node * per_node);
      uses.push_back({.resource = *res,
                      .weight = static_cast<double>(node_gpus) / simulated_on_node[static_cast<std::size_t>(node)]});
    }
    if (shared) uses.push_back({.resource = *shared, .weight = shared_weight});
    for (int k = 0; k < egress.streams; ++k) {
      const sim::ActivitySpec spec{.work = bytes * per_stream, .uses = uses, .kind = sim::ActivityKind::kCommunication,
                                   .latency = from_seconds(egress.start_s)};
      const sim::ActivityId id = fluid.start(spec, [this, &fluid] {
        outcome_.end_s = std::max(outcome_.end_s, to_seconds(fluid.now()));
      });
      flows_.push_back({.id = id, .gpu = gpu});
    }
  }
}

void BackgroundFlows::note_step_end(const sim::FluidModel& fluid) {
  for (const Flow& f : flows_) {
    outcome_.left_at_step_end[static_cast<std::size_t>(f.gpu)] += fluid.remaining(f.id);
  }
}

}  // namespace mofasim::executor
