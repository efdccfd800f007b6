// StepPlan from model/'s op table, compute-time model, parameter counts and memory model.
#include "sim/executor/plan_from_model.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "model/compute_time.h"
#include "model/flops.h"
#include "model/memory.h"
#include "model/op_table.h"
#include "model/params.h"
#include "model/recompute_modules.h"
#include "model/stage_layout.h"
#include "schedules/factory.h"
#include "sim/units/check.h"

namespace mofasim::executor {
namespace {

Scope scope_of(model::CommGroup g) {
  switch (g) {
    case model::CommGroup::kTp:
    case model::CommGroup::kEtp: return Scope::kTp;
    case model::CommGroup::kCp: return Scope::kCp;
    case model::CommGroup::kEp: return Scope::kEp;
    case model::CommGroup::kPp: break;
  }
  MOFASIM_UNREACHABLE("PP boundary comm inside a layer");
}

Collective collective_of(model::Collective c) {
  switch (c) {
    case model::Collective::kAllReduce: return Collective::kAllReduce;
    case model::Collective::kReduceScatter: return Collective::kReduceScatter;
    case model::Collective::kAllGather: return Collective::kAllGather;
    case model::Collective::kAllToAll: return Collective::kAllToAll;
    case model::Collective::kSendRecv: return Collective::kSendRecv;
  }
  MOFASIM_UNREACHABLE("bad collective");
}

bool attention_core(model::OpKind k) {
  return k == model::OpKind::kAttentionMap || k == model::OpKind::kSoftmax || k == model::OpKind::kAttentionValue;
}

class Builder {
 public:
  explicit Builder(const PlanInput& in) : in_(in), hw_(*in.hardware), f_(in.features) {}

  // One pass program: ops in issue order (reversed for the backward passes), each op's
  // collectives of that phase before / after it; the three attention-core ops merge into one.
  PassPlan program(const model::LayerOps& ops, model::Phase phase) const {
    PassPlan out;
    const auto list = ops.ops();
    const bool reverse = phase != model::Phase::kForward;
    const std::size_t n = list.size();
    for (std::size_t k = 0; k < n; ++k) {
      const model::OpCost& op = list[reverse ? n - 1 - k : k];
      add_comms(ops, op.op, phase, /*before=*/true, out);
      const model::PhaseCost cost = op.phase(phase);
      // MoFa(1) MoFa(17) MoFa(19): the same op pricing as the closed form.
      const double seconds = model::phase_seconds(cost, op.op_class, hw_, f_);
      if (seconds > 0 || cost.flops > 0) {
        std::uint8_t flags = kFlagNone;
        if (op.op_class == model::OpClass::kGemm) flags |= kFlagTpOverlappable;
        if (op.routed_expert) flags |= kFlagExpert;
        if (op.recomputed_by_selective) flags |= kFlagSelectiveRecompute;
        if (attention_core(op.op)) flags |= kFlagAttentionCore;
        const bool merge = attention_core(op.op) && !out.ops.empty() && !out.ops.back().is_comm &&
                           (out.ops.back().flags & kFlagAttentionCore) != 0;
        const model::PhaseCost rc = phase == model::Phase::kForward ? model::selective_recompute_cost(op)
                                                                     : model::PhaseCost{};
        const double rc_seconds = rc.flops > 0 || rc.hbm_bytes > 0 ? model::phase_seconds(rc, op.op_class, hw_, f_) : 0;
        if (merge) {
          out.ops.back().seconds += seconds;
          out.ops.back().flops += cost.flops;
          out.ops.back().recompute_seconds += rc_seconds;
          out.ops.back().recompute_flops += rc.flops;
          out.ops.back().flags |= flags;
        } else {
          out.ops.push_back({.name = attention_core(op.op) ? "attention" : model::op_name(op.op),
                             .seconds = seconds, .flops = cost.flops, .recompute_seconds = rc_seconds,
                             .recompute_flops = rc.flops, .flags = flags});
        }
      }
      add_comms(ops, op.op, phase, /*before=*/false, out);
    }
    return out;
  }

  void add_comms(const model::LayerOps& ops, model::OpKind at, model::Phase phase, bool before, PassPlan& out) const {
    for (const model::CommOp& c : ops.comms()) {
      if (c.op != at || c.phase != phase || c.before_op != before || c.group == model::CommGroup::kPp) continue;
      if (c.group_size <= 1 || c.bytes <= 0) continue;
      out.ops.push_back({.name = std::string(model::comm_group_name(c.group)) + "_" + model::collective_name(c.collective),
                         .is_comm = true, .scope = scope_of(c.group), .collective = collective_of(c.collective),
                         .bytes = c.bytes * c.count});
    }
  }

  LayerPlan layer(const model::LayerOps& ops, double dense_grad, double expert_grad) const {
    LayerPlan lp{.forward = program(ops, model::Phase::kForward),
                 .input_grad = program(ops, model::Phase::kBackwardInput),
                 .weight_grad = program(ops, model::Phase::kBackwardWeight)};
    const model::LayerTotals& t = ops.totals();
    lp.activation_bytes = t.activation_bytes;
    lp.activation_bytes_selective = t.activation_bytes - t.selective_dropped_bytes;
    lp.activation_bytes_full = t.input_bytes;
    double wgrad = 0;
    for (const model::OpCost& op : ops.ops()) {
      if (op.backward_weight.flops > 0) wgrad += op.activation_bytes;
    }
    lp.weight_grad_activation_bytes = wgrad;
    lp.expert_activation_bytes = std::max(0.0, t.routed_activation_bytes - t.routed_input_bytes);
    lp.dense_grad_bytes = dense_grad;
    lp.expert_grad_bytes = expert_grad;
    return lp;
  }

  StepPlan build() {
    const model::ModelSpec& m = *in_.model;
    const model::ParallelSpec& par = in_.parallel;
    const schedules::Schedule& sched = *in_.schedule;
    const double grad_b = model::dtype_bytes(f_.grad_dtype);
    const double weight_b = model::dtype_bytes(f_.param_dtype);
    StepPlan plan;
    for (int l = 0; l < m.num_layers; ++l) {
      const model::LayerParams p = model::layer_params(m, l);
      const double dense = (p.attention + p.mlp) / par.tp + p.router + p.norms;
      const double expert = p.routed_experts / (par.ep * par.etp);
      plan.layers.push_back(layer(model::with_recompute_modules(model::ops_for_layer(m, par, l), m, par, f_.recompute_modules),
                                  dense * grad_b, expert * grad_b));
    }
    // Full recompute by method: block leaves the layers past recompute_num_layers of each chunk.
    for (const model::ChunkLayers& c : model::chunk_layers(m, par)) {
      for (int l = c.first_layer; l < c.first_layer + c.num_layers; ++l) {
        plan.layers[static_cast<std::size_t>(l)].full_recompute =
            f_.recompute != model::RecomputeKind::kFull || model::full_recompute_applies(f_, l - c.first_layer);
      }
    }
    // Embedding and head gradients join the DP buckets where the backward produces them: the
    // head's first on the last stage, the embedding's last on the first stage.
    const model::ModelParams mp = model::model_params(m);
    const double head = (mp.head > 0 || par.pp > 1) ? m.vocab_size * static_cast<double>(m.hidden_size) : 0.0;
    plan.pre = layer(model::ops_for_embedding(m, par), (mp.embedding + mp.position_embedding) / par.tp * grad_b, 0);
    plan.post = layer(model::ops_for_head(m, par), (head / par.tp + mp.final_norm) * grad_b, 0);
    const model::LayerOps pp = model::pp_boundary_comm(m, par);
    for (const model::CommOp& c : pp.comms()) {
      if (c.phase == model::Phase::kForward) plan.pp_bytes = c.bytes;
    }
    // Memory model with the schedule's in-flight activations (MoFa(4) MoFa(5) MoFa(6)).
    const schedules::PipelineShape shape{.stages = sched.stages(), .microbatches = sched.microbatches(),
                                         .chunks = sched.chunks(), .pair_steady_passes = sched.pair_steady_passes()};
    std::vector<double> inflight;
    for (int s = 0; s < sched.stages(); ++s) inflight.push_back(schedules::peak_activation(sched.kind(), shape, s));
    const model::MemoryReport mem = model::memory_report(m, hw_, par, f_, inflight);
    const model::ShardGroups shards = model::optimizer_shard_groups(par);
    for (int s = 0; s < sched.stages(); ++s) {
      const model::GpuParams gp = model::stage_gpu_params(m, par, s);
      const model::StageMemory& sm = mem.stages[static_cast<std::size_t>(s)];
      StagePlan st;
      st.static_bytes = sm.static_bytes.total();
      st.expected_peak_activation_bytes = sm.activation_bytes;
      // Parameters whose optimizer state this GPU updates (MoFa(25) MoFa(26): 1/d with the distributed optimizer).
      const double dense_shard = f_.distributed_optimizer ? gp.dense() / shards.dense_dp : gp.dense();
      const double expert_shard = f_.distributed_optimizer ? gp.expert / shards.expert_dp : gp.expert;
      const double updated = dense_shard + expert_shard;
      // Adam is memory-bound: read grad, master, m, v; write master, m, v and the param (MoFa(13)).
      const model::BytesPerParam bpp = model::bytes_per_param(f_);
      const double adam_bytes = updated * (bpp.grad + 2 * bpp.master + 2 * bpp.moments + bpp.weight);
      st.optimizer_gpu_seconds =
          model::phase_seconds({.flops = 0, .hbm_bytes = adam_bytes}, model::OpClass::kElementwise, hw_, f_);
      if (f_.optimizer_placement == model::OptimizerPlacement::kCpu) {
        if (hw_.cpu_optimizer_params_per_second <= 0) {
          throw std::invalid_argument(
              "hardware.cpu_optimizer_params_per_second must be > 0 with the CPU optimizer (MoFa(28))");
        }
        st.optimizer_cpu_seconds = updated / hw_.cpu_optimizer_params_per_second;
        st.grad_d2h_bytes = updated * grad_b;
        st.param_h2d_bytes = updated * weight_b;
      }
      // MoFa(25) MoFa(26): each optimizer shard group all-gathers the parameters it updated, the
      // routed experts over the expert-DP group as well as the dense part over the dense one.
      if (f_.distributed_optimizer && shards.dense_dp > 1) st.param_gather_bytes = gp.dense() * weight_b;
      if (f_.distributed_optimizer && shards.expert_dp > 1) st.expert_param_gather_bytes = gp.expert * weight_b;
      // The gradients the layer buckets already carry: every chunk whose parameters this rank
      // holds (DualPipe's reverse copy included), the embedding with chunk 0, the head with the last.
      double layer_dense = 0;
      const int last_chunk = par.pp * par.vpp - 1;
      for (const model::ChunkLayers& c : model::parameter_chunks(m, par, s)) {
        for (int l = c.first_layer; l < c.first_layer + c.num_layers; ++l) {
          layer_dense += plan.layers[static_cast<std::size_t>(l)].dense_grad_bytes;
        }
        if (c.chunk == 0) layer_dense += plan.pre->dense_grad_bytes;
        if (c.chunk == last_chunk) layer_dense += plan.post->dense_grad_bytes;
      }
      st.extra_grad_bytes = std::max(0.0, gp.dense() * grad_b - layer_dense);
      plan.stages.push_back(st);
    }
    plan.model_flops_per_step = model::model_flops_per_step(m, par);
    plan.hardware_flops_per_step = model::hardware_flops_per_step(m, par, f_);
    plan.tokens_per_step = model::tokens_per_step(m, par);
    return plan;
  }

 private:
  const PlanInput& in_;
  const model::HardwareSpec& hw_;
  const model::FeatureSpec& f_;
};

}  // namespace

StepPlan plan_from_model(const PlanInput& input) {
  if (input.model == nullptr || input.hardware == nullptr || input.schedule == nullptr) {
    throw std::invalid_argument("plan_from_model: model, hardware and schedule are required");
  }
  Builder b(input);
  return b.build();
}

}  // namespace mofasim::executor
