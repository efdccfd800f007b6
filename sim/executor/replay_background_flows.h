// The replay's side of BackgroundEgress (replay_background.h): builds the flows of the simulated
// GPUs on the replay's fluid model, records what is left of them when the step's last task ends,
// and when the last one ends. Internal to replay.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/fluid_model.h"
#include "sim/executor/instance_map.h"
#include "sim/executor/replay_background.h"
#include "topology/topology.h"

namespace mofasim::executor {

class BackgroundFlows {
 public:
  // Adds the limit resources and starts every flow now (each after its start_s latency).
  // `link_res` maps topology link index -> fluid resource; `world` is the placement's GPU count.
  // Throws std::invalid_argument on a malformed spec (sizes, streams < 1, negative values).
  void start(const BackgroundEgress& egress, const topology::Topology& topo, const InstanceMap& map, int world,
             std::span<const sim::ResourceId> link_res, sim::FluidModel& fluid);
  // Call once, at the instant the step's last task ends.
  void note_step_end(const sim::FluidModel& fluid);
  [[nodiscard]] BackgroundOutcome outcome() const { return outcome_; }

 private:
  struct Flow {
    sim::ActivityId id{};
    int gpu = 0;
  };
  std::vector<Flow> flows_;
  BackgroundOutcome outcome_;
};

}  // namespace mofasim::executor
