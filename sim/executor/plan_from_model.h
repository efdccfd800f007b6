// Builds the StepPlan from model/: per layer, the op table (ops_for_layer, ops_for_embedding,
// ops_for_head) in issue order with each collective at its attached op, op seconds from the
// compute-time model (phase_seconds), stored activations and their recompute variants, gradient
// bytes from the parameter counts, static memory and M_act from the memory model, optimizer costs.
// The op table already prices routed experts for the busiest EP rank (load imbalance included),
// so the generator's load_imbalance stays 1 for a model-built plan.
#pragma once

#include "model/spec.h"
#include "schedules/schedule.h"
#include "sim/executor/step_plan.h"
#include "topology/rank_order.h"
#include "topology/topology_spec.h"

namespace mofasim::executor {

struct PlanInput {
  const model::ModelSpec* model = nullptr;
  const model::HardwareSpec* hardware = nullptr;
  model::ParallelSpec parallel{};
  model::FeatureSpec features{};  // memfine_chunks must be resolved (>= 1) when memfine is on
  const schedules::Schedule* schedule = nullptr;
  // The cluster and rank order, read only for a DeepEP (flex) MoE model: the rank plan prices its
  // two hops to know which one hides under the other (model::PlanBlock::comm_hidden), as the
  // closed form does; the replay prices every collective itself.
  const topology::TopologySpec* topology = nullptr;
  topology::RankOrder rank_order{};
};

StepPlan plan_from_model(const PlanInput& input);

}  // namespace mofasim::executor
