// StepPlan from the priced per-rank plan (model/rank_plan.h): the programs the generator arranges.
#include "sim/executor/plan_from_model.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <algorithm>
#include <utility>

#include "model/memory.h"
#include "model/op_table.h"
#include "model/rank_plan.h"
#include "model/recompute_modules.h"
#include "model/compute_time.h"
#include "model/stage_layout.h"
#include "sim/units/check.h"

namespace mofasim::executor {
namespace {

Scope scope_of(model::LayerGroup g) {
  switch (g) {
    case model::LayerGroup::kTp: return Scope::kTp;
    case model::LayerGroup::kEtp: return Scope::kExpertTp;
    case model::LayerGroup::kCp: return Scope::kCp;
    case model::LayerGroup::kEp: return Scope::kEp;
    case model::LayerGroup::kEtpEp: return Scope::kExpertTpEp;
    case model::LayerGroup::kPp: break;
  }
  MOFASIM_UNREACHABLE("PP boundary comm inside a layer");
}

// The op table lists a CP ring (cp_comm_type p2p) as its send/recv steps; each runs as one ring
// step of the group (CollectiveKind::kRingStep), as the rank plan prices it. The all-gather and
// all-to-all CP types are ordinary collectives on the CP group.
CollectiveKind collective_of(const model::CommOp& c) {
  return c.group == model::LayerGroup::kCp && c.collective == CollectiveKind::kSendRecv ? CollectiveKind::kRingStep
                                                                                       : c.collective;
}

bool attention_core(model::OpKind k) {
  return k == model::OpKind::kAttentionMap || k == model::OpKind::kSoftmax || k == model::OpKind::kAttentionValue;
}

// The layer collectives of `phase` attached before / after op `at` (PP boundaries excluded). A
// DeepEP hop hidden under its partner but for one chunk carries only that chunk
// (PlanBlock::comm_hidden), as the closed form prices it.
void add_comms(const model::PlanBlock& block, model::OpKind at, model::Phase phase, bool before, PassPlan& out) {
  const auto comms = block.ops.comms();
  for (std::size_t j = 0; j < comms.size(); ++j) {
    const model::CommOp& c = comms[j];
    if (c.op != at || c.phase != phase || c.before_op != before || c.group == model::LayerGroup::kPp) continue;
    if (c.group_size <= 1 || c.bytes <= 0) continue;
    out.ops.push_back({.name = std::string(model::layer_group_name(c.group)) + "_" + model::collective_name(c.collective),
                       .is_comm = true, .scope = scope_of(c.group), .collective = collective_of(c),
                       .bytes = c.bytes * c.count * (1 - block.comm_hidden[j]),
                       .flags = c.recomputed_by_selective ? kFlagSelectiveRecompute : kFlagNone});
  }
}

// A pass program: the block's ops in issue order (reversed for the backward passes), each op's
// collectives of that phase before / after it; the three attention-core ops merge into one. The
// op seconds are the plan's (MoFa(1) MoFa(17) MoFa(19), the same op pricing as the closed form).
PassPlan program(const model::PlanBlock& block, model::Phase phase, const model::HardwareSpec& hw,
                 const model::FeatureSpec& f) {
  PassPlan out;
  const auto list = block.ops.ops();
  const auto& seconds_of = block.op_seconds[static_cast<std::size_t>(phase)];
  const bool reverse = phase != model::Phase::kForward;
  const std::size_t n = list.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t index = reverse ? n - 1 - k : k;
    const model::OpCost& op = list[index];
    add_comms(block, op.op, phase, /*before=*/true, out);
    const model::PhaseCost cost = op.phase(phase);
    const double seconds = seconds_of[index];
    if (seconds > 0 || cost.flops > 0) {
      std::uint8_t flags = kFlagNone;
      if (op.op_class == model::OpClass::kGemm) flags |= kFlagTpOverlappable;
      if (op.routed_expert) flags |= kFlagExpert;
      if (op.recomputed_by_selective) flags |= kFlagSelectiveRecompute;
      if (attention_core(op.op)) flags |= kFlagAttentionCore;
      const bool merge = attention_core(op.op) && !out.ops.empty() && !out.ops.back().is_comm &&
                         (out.ops.back().flags & kFlagAttentionCore) != 0;
      // What selective recompute re-runs of this op (recompute_modules.h: all of it, or a part).
      const model::PhaseCost rc =
          phase == model::Phase::kForward ? model::selective_recompute_cost(op) : model::PhaseCost{};
      const double rc_seconds =
          rc.flops > 0 || rc.hbm_bytes > 0 ? model::phase_seconds(rc, op.op_class, hw, f) : 0;
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
    add_comms(block, op.op, phase, /*before=*/false, out);
  }
  return out;
}

// One block's three pass programs, its stored activations and the gradient bytes it adds to the
// dense and expert DP reductions.
LayerPlan layer(const model::PlanBlock& block, double grad_bytes_per_param, const model::HardwareSpec& hw,
                const model::FeatureSpec& f) {
  LayerPlan lp{.forward = program(block, model::Phase::kForward, hw, f),
               .input_grad = program(block, model::Phase::kInputGrad, hw, f),
               .weight_grad = program(block, model::Phase::kWeightGrad, hw, f)};
  const model::LayerTotals& t = block.ops.totals();
  lp.activation_bytes = t.activation_bytes;
  lp.activation_bytes_selective = t.activation_bytes - t.selective_dropped_bytes;
  lp.activation_bytes_full = t.input_bytes;
  lp.weight_grad_inputs = model::weight_grad_inputs(block.ops);
  lp.expert_activation_bytes = std::max(0.0, t.routed_activation_bytes - t.routed_input_bytes);
  lp.dense_grad_bytes = block.dense_params * grad_bytes_per_param;
  lp.expert_grad_bytes = block.expert_params * grad_bytes_per_param;
  lp.fsdp_gather_bytes = block.fsdp_gather_bytes;
  lp.fsdp_expert_gather_bytes = block.fsdp_expert_gather_bytes;
  return lp;
}

// The stage's static memory, optimizer work and the DP traffic its layers' buckets do not carry.
StagePlan stage(const model::RankPlan& rp, const StepPlan& plan, int s, const model::HardwareSpec& hw,
                const model::FeatureSpec& f) {
  const model::StageMemory& sm = rp.memory.stages[static_cast<std::size_t>(s)];
  const model::RankDp& dp = rp.dp[static_cast<std::size_t>(s)];
  StagePlan st;
  st.static_bytes = sm.static_bytes.total();
  st.expected_peak_activation_bytes = sm.activation_bytes;
  st.optimizer_gpu_seconds = dp.gpu_update_seconds;  // MoFa(13) MoFa(26)
  if (f.optimizer_placement == model::OptimizerPlacement::kCpu) {
    if (hw.cpu_optimizer_params_per_second <= 0) {
      throw std::invalid_argument("hardware.cpu_optimizer_params_per_second must be > 0 with the CPU optimizer (MoFa(28))");
    }
    st.optimizer_cpu_seconds = dp.updated_params / hw.cpu_optimizer_params_per_second;
    st.grad_d2h_bytes = dp.d2h_bytes;
    st.param_h2d_bytes = dp.h2d_bytes;
  }
  // MoFa(25) MoFa(26): each optimizer shard group all-gathers the parameters it updated, the
  // routed experts over the expert-DP group as well as the dense part over the dense one.
  st.param_gather_bytes = dp.dense_param_bytes;
  st.expert_param_gather_bytes = dp.expert_param_bytes;
  st.param_broadcasts = dp.dense_param_broadcasts;
  st.expert_param_broadcasts = dp.expert_param_broadcasts;
  // The gradients the layer buckets already carry: every chunk whose parameters this rank holds
  // (DualPipe's reverse copy included), the embedding with chunk 0, the head with the last.
  double layer_dense = 0;
  for (int c = 0; c < rp.v; ++c) {
    const model::PlanChunk& chunk = rp.chunk(s, c);
    for (int l = chunk.first_layer; l < chunk.first_layer + chunk.num_layers; ++l) {
      layer_dense += plan.layers[static_cast<std::size_t>(l)].dense_grad_bytes;
    }
    if (chunk.embedding) layer_dense += plan.pre->dense_grad_bytes;
    if (chunk.head) layer_dense += plan.post->dense_grad_bytes;
  }
  st.extra_grad_bytes = std::max(0.0, dp.dense_grad_bytes - layer_dense);
  if (dp.dense_grad_bytes > 0) st.dense_replica_share = dp.dense_replica_bytes / dp.dense_grad_bytes;
  if (dp.expert_grad_bytes > 0) st.expert_replica_share = dp.expert_replica_bytes / dp.expert_grad_bytes;
  return st;
}

}  // namespace

StepPlan plan_from_model(const PlanInput& input) {
  if (input.model == nullptr || input.hardware == nullptr || input.schedule == nullptr) {
    throw std::invalid_argument("plan_from_model: model, hardware and schedule are required");
  }
  // The same per-rank plan the closed form reads, with the simulation's detail (op seconds at
  // the specs' rates); the replay prices the collectives on the whole cluster itself.
  const bool deepep = input.model->is_moe() && input.model->moe.token_dispatcher == model::MoeDispatcher::kFlex;
  const model::RankPlan rp = model::build_rank_plan({.model = input.model, .hardware = input.hardware,
                                                     .parallel = input.parallel, .features = input.features,
                                                     .topology = deepep ? input.topology : nullptr,
                                                     .rank_order = input.rank_order,
                                                     .schedule = input.schedule, .simulation_detail = true});
  const model::ModelSpec& m = *input.model;
  const double grad_b = model::bytes_per_param(input.features).grad;
  const model::HardwareSpec& hw = *input.hardware;
  const model::FeatureSpec& f = input.features;
  StepPlan plan;
  // Layer tables differ only by the block that prices the layer (RankPlan::layer_work_block: its
  // type, and its attention span when the chunks mix windows unevenly): one program per block,
  // copied per layer.
  std::vector<std::pair<const model::PlanBlock*, LayerPlan>> programs;
  plan.layers.reserve(static_cast<std::size_t>(m.num_layers));
  for (int l = 0; l < m.num_layers; ++l) {
    const model::PlanBlock* block = &rp.layer_work_block(m, l);
    auto it = std::find_if(programs.begin(), programs.end(), [&](const auto& p) { return p.first == block; });
    if (it == programs.end()) it = programs.insert(programs.end(), {block, layer(*block, grad_b, hw, f)});
    plan.layers.push_back(it->second);
  }
  // Full recompute by method: block leaves out the layers past recompute_num_layers of each chunk.
  for (const model::ChunkLayers& c : model::chunk_layers(m, input.parallel)) {
    for (int l = c.first_layer; l < c.first_layer + c.num_layers; ++l) {
      plan.layers[static_cast<std::size_t>(l)].full_recompute =
          f.recompute != model::RecomputeKind::kFull || model::full_recompute_applies(f, l - c.first_layer);
    }
  }
  // Embedding and head gradients join the DP buckets where the backward produces them: the
  // head's first on the last stage, the embedding's last on the first stage.
  plan.pre = layer(rp.embedding, grad_b, hw, f);
  plan.post = layer(rp.head, grad_b, hw, f);
  // The MTP modules run in the head's block, after the main head (Megatron's MultiTokenPredictionBlock
  // follows the decoder's final hidden states): each an eh projection, a layer of the last layer's
  // type (its EP / TP collectives with it) and the shared output head, as the closed form prices
  // them (analytic_model.cc, block times). Their backward runs first, in reverse. Their gradient
  // bytes stay where the rank plan counts them; a transformer layer's recompute is not replayed
  // inside this block.
  if (m.mtp_depth > 0) {
    const LayerPlan head_only = *plan.post;
    const LayerPlan projection = layer(rp.mtp_projection, grad_b, hw, f);
    const LayerPlan mtp_layer = layer(rp.layer_block(m, m.num_layers - 1), grad_b, hw, f);
    const auto append = [](PassPlan& to, const PassPlan& from) { to.ops.insert(to.ops.end(), from.ops.begin(), from.ops.end()); };
    PassPlan input_grad;
    PassPlan weight_grad;
    for (int d = 0; d < m.mtp_depth; ++d) {
      for (const LayerPlan* part : {&projection, &mtp_layer, &head_only}) append(plan.post->forward, part->forward);
      for (const LayerPlan* part : {&head_only, &mtp_layer, &projection}) {
        append(input_grad, part->input_grad);
        append(weight_grad, part->weight_grad);
      }
    }
    append(input_grad, head_only.input_grad);
    append(weight_grad, head_only.weight_grad);
    plan.post->input_grad = std::move(input_grad);
    plan.post->weight_grad = std::move(weight_grad);
  }
  // The head block's memory is the memory model's head unit: the head and loss, and the MTP
  // modules' activations, so the replay's live peak counts them.
  plan.post->activation_bytes = rp.memory.head_unit.stored;
  // The head unit's kept bytes are already the memory model's count (MemFine included); the head
  // block holds no routed experts, so the replay takes them whole.
  plan.post->weight_grad_inputs = model::WeightGradInputs{.all = rp.memory.head_unit.kept_for_weight_grad, .memfine_rebuilt = 0};
  plan.post->backward_working_bytes = rp.memory.head_unit.working;
  plan.pp_bytes = rp.pp_bytes;
  // Static memory and the in-flight activation the memory model expects (MoFa(4) MoFa(5) MoFa(6)).
  for (int s = 0; s < input.schedule->stages(); ++s) plan.stages.push_back(stage(rp, plan, s, *input.hardware, input.features));
  plan.model_flops_per_step = rp.model_flops;
  plan.hardware_flops_per_step = rp.hardware_flops;
  plan.tokens_per_step = rp.tokens;
  return plan;
}

}  // namespace mofasim::executor
