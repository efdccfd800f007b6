// Workload generator: the entry points and the order of its passes (generator.h).
#include "sim/executor/generate.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "model/stage_layout.h"
#include "sim/executor/generator.h"

namespace mofasim::executor {
namespace detail {

Generator::Generator(const GenerateInput& in)
    : in_(in), sched_(*in.schedule), plan_(*in.plan), f_(in.features), w_(sched_.stages(), sched_.microbatches()) {
  positions_ = sched_.positions_per_lane();
  lanes_ = sched_.lanes();
  m_ = sched_.microbatches();
  p2p_fwd_.assign(static_cast<std::size_t>(lanes_) * positions_ * m_, kNone);
  p2p_bwd_.assign(p2p_fwd_.size(), kNone);
  const std::size_t chunk_slots = static_cast<std::size_t>(sched_.stages()) * sched_.chunks();
  chunk_last_bi_.assign(chunk_slots * m_, kNone);
  offload_d2h_.assign(chunk_slots * m_, {});
  layer_last_grad_.assign(chunk_slots, {});
  gather_before_forward_.assign(chunk_slots, kNone);
  fsdp_pass_end_.assign(static_cast<std::size_t>(sched_.stages()), {kNone, kNone});
  fsdp_last_gather_.assign(static_cast<std::size_t>(sched_.stages()), kNone);
}

// The passes in order: the early parameter all-gathers (what the forwards wait for), the
// schedule walk of every stage, then each stage's DP reduction and update after its walk.
Workload Generator::run() {
  validate_input();
  if (f_.distributed_optimizer && f_.dp_overlap.enabled) gather_before_forward_ = emit_early_param_gathers();
  std::vector<StageEnd> ends;
  ends.reserve(static_cast<std::size_t>(sched_.stages()));
  for (int s = 0; s < sched_.stages(); ++s) ends.push_back(emit_stage(s));
  for (int s = 0; s < sched_.stages(); ++s) emit_dp_and_optimizer(s, ends[static_cast<std::size_t>(s)]);
  w_.finalize();
  return std::move(w_);
}

void Generator::validate_input() const {
  if (static_cast<int>(in_.position_layers.size()) != positions_) {
    throw std::invalid_argument("generate_workload: position_layers has " +
                                std::to_string(in_.position_layers.size()) + " entries, schedule has " +
                                std::to_string(positions_) + " positions per lane");
  }
  for (const LayerRange& r : in_.position_layers) {
    if (r.first < 0 || r.count < 0 || r.first + r.count > static_cast<int>(plan_.layers.size())) {
      throw std::invalid_argument("generate_workload: a position's layers lie outside the plan's " +
                                  std::to_string(plan_.layers.size()) + " layers");
    }
  }
  if (static_cast<int>(plan_.stages.size()) != sched_.stages()) {
    throw std::invalid_argument("generate_workload: plan has " + std::to_string(plan_.stages.size()) +
                                " stages, schedule has " + std::to_string(sched_.stages()));
  }
  if (in_.load_imbalance < 1.0) {
    throw std::invalid_argument("generate_workload: load_imbalance must be >= 1, got " +
                                std::to_string(in_.load_imbalance));
  }
  if (f_.tp_overlap.enabled && f_.tp_overlap.chunks < 1) {
    throw std::invalid_argument("generate_workload: features.tp_overlap.chunks must be >= 1");
  }
  if (f_.memfine && f_.memfine_chunks < 1) {
    throw std::invalid_argument("generate_workload: features.memfine_chunks must be >= 1 when memfine is on "
                                "(resolve 0 = auto with the memory model first)");
  }
}

}  // namespace detail

Workload generate_workload(const GenerateInput& input) {
  if (input.schedule == nullptr || input.plan == nullptr) {
    throw std::invalid_argument("generate_workload: schedule and plan are required");
  }
  detail::Generator g(input);
  return g.run();
}

std::vector<LayerRange> position_layers(const model::ModelSpec& model, const model::ParallelSpec& parallel,
                                        const schedules::Schedule& schedule) {
  model::ParallelSpec p = parallel;
  p.pp = schedule.stages();
  if (schedule.positions_per_lane() % schedule.stages() != 0) {
    throw std::invalid_argument("position_layers: positions per lane (" +
                                std::to_string(schedule.positions_per_lane()) + ") not a multiple of pp");
  }
  p.vpp = schedule.positions_per_lane() / schedule.stages();
  if (!p.stage_layers.empty() && static_cast<int>(p.stage_layers.size()) != p.pp * p.vpp) {
    throw std::invalid_argument("position_layers: parallelism.stage_layers has " +
                                std::to_string(p.stage_layers.size()) + " entries, need pp*vpp = " +
                                std::to_string(p.pp * p.vpp));
  }
  std::vector<LayerRange> out;
  for (const model::ChunkLayers& c : model::chunk_layers(model, p)) {
    out.push_back({.first = c.first_layer, .count = c.num_layers});
  }
  return out;
}

}  // namespace mofasim::executor
