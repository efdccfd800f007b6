// The priced per-rank plan (see rank_plan.h).
#include "model/rank_plan.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "model/attention_window.h"
#include "model/compute_time.h"
#include "model/flops.h"
#include "model/params.h"
#include "model/recompute_modules.h"
#include "model/rank_plan_groups.h"
#include "model/stage_layout.h"
#include "model/zero_broadcast.h"
#include "schedules/factory.h"
#include "schedules/schedule.h"

namespace mofasim::model {
namespace {

using topology::CollectiveKind;
using topology::GroupKind;


// MoFa(1) MoFa(17) MoFa(19): every op of every phase at the specs' rates.
void price_ops(PlanBlock& block, const HardwareSpec& hw, const FeatureSpec& f) {
  constexpr Phase kPhases[kPhaseCount] = {Phase::kForward, Phase::kInputGrad, Phase::kWeightGrad};
  const auto ops = block.ops.ops();
  for (int ph = 0; ph < kPhaseCount; ++ph) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      block.op_seconds[static_cast<std::size_t>(ph)][i] = phase_seconds(ops[i].phase(kPhases[ph]), ops[i].op_class, hw, f);
    }
  }
}

// Rank r's gradient buckets per DP group (GradientBuckets), in the order its backward finishes the
// blocks: chunks from the last pipeline position to the first; in each, the head, the layers from
// last to first, the embedding. Dense gradients the blocks do not carry ride in the last bucket.
void count_gradient_buckets(const RankPlan& plan, const ModelSpec& model, int r, double grad_bytes_per_param,
                            double cap, RankDp& d) {
  GradientBuckets dense(cap);
  GradientBuckets expert(cap);
  double carried = 0;
  auto add = [&](const PlanBlock& b) {
    const double dense_bytes = b.dense_params * grad_bytes_per_param;
    const double expert_bytes = b.expert_params * grad_bytes_per_param;
    carried += dense_bytes;
    if (dense_bytes > 0) dense.add(dense_bytes);
    if (expert_bytes > 0) expert.add(expert_bytes);
  };
  // The rank's v chunks by descending pipeline position (v is small: pick the next one each time;
  // the key tells DualPipe's two copies of one middle chunk apart).
  const int v = plan.v;
  int below = plan.p * v * v;
  for (int n = 0; n < v; ++n) {
    int next = -1;
    for (int k = 0; k < v; ++k) {
      const int key = plan.chunk(r, k).chunk * v + k;
      if (key < below && key > next) next = key;
    }
    below = next;
    const PlanChunk* c = &plan.chunk(r, next % v);
    if (c->head) add(plan.head);
    for (int l = c->first_layer + c->num_layers - 1; l >= c->first_layer; --l) add(plan.layer_block(model, l));
    if (c->embedding) add(plan.embedding);
  }
  if (d.dense_grad_bytes - carried > 0) dense.add_to_last(d.dense_grad_bytes - carried);
  d.dense_grad_buckets = dense.count();
  d.expert_grad_buckets = expert.count();
}

// InternEvo's ZeRO-1 owners of rank r's parameters (zero_broadcast.h): its tensors in module order,
// chunk by pipeline position (embedding, layers, final norm and head), over each group's shard size.
void count_broadcast_owners(const RankPlan& plan, const ModelSpec& model, const ParallelSpec& par, int r,
                            const ShardGroups& shards, RankDp& d) {
  std::vector<double> dense;
  std::vector<double> expert;
  const double h = model.hidden_size;
  std::vector<int> locals(static_cast<std::size_t>(plan.v));
  for (int k = 0; k < plan.v; ++k) locals[static_cast<std::size_t>(k)] = k;
  std::sort(locals.begin(), locals.end(), [&](int a, int b) { return plan.chunk(r, a).chunk < plan.chunk(r, b).chunk; });
  for (int k : locals) {
    const PlanChunk& c = plan.chunk(r, k);
    if (c.embedding) dense.push_back(plan.embedding.dense_params);
    for (int l = c.first_layer; l < c.first_layer + c.num_layers; ++l) {
      const LayerTensors t = layer_tensors(model, par, l);
      dense.insert(dense.end(), t.dense.begin(), t.dense.end());
      expert.insert(expert.end(), t.expert.begin(), t.expert.end());
    }
    if (c.head) {
      const double final_norm = h * norm_vectors(model.norm);
      dense.push_back(final_norm);  // then the head's own weights (none when tied on one stage)
      if (plan.head.dense_params > final_norm) dense.push_back(plan.head.dense_params - final_norm);
    }
  }
  d.dense_param_broadcasts = shards.dense_dp > 1 ? zero_broadcast_owners(dense, shards.dense_dp) : 0;
  d.expert_param_broadcasts = shards.expert_dp > 1 ? zero_broadcast_owners(expert, shards.expert_dp) : 0;
}

}  // namespace

const PlanBlock& RankPlan::layer_work_block(const ModelSpec& model, int layer) const {
  if (!window_mixed()) return layer_block(model, layer);
  const int span = is_window_layer(model, layer) ? kWindowSpan : kFullSpan;
  return (model.is_moe_layer(layer) ? spans->moe : spans->dense)[static_cast<std::size_t>(span)];
}

RankPlan build_rank_plan(const RankPlanInput& in) {
  const ModelSpec& model = *in.model;
  const ParallelSpec& par = in.parallel;
  const FeatureSpec& feat = in.features;
  const bool dualpipe = par.schedule == ScheduleKind::kDualPipe;
  RankPlan plan;
  plan.p = par.pp;
  plan.m = par.microbatches();
  plan.v = dualpipe ? 2 : par.vpp;
  plan.priced = in.topology != nullptr;
  const int p = plan.p;
  const int v = plan.v;

  // Rank 0's groups (rank r runs on GPU r), each priced on a cluster holding just its GPUs. The
  // expert groups of a MoE model come from the folded expert layout (placement.h). A group of one
  // carries no collective and is never placed.
  std::optional<RankZeroGroups> groups;
  LayerGroups layer_groups{};
  CommCostCache cost;
  ParallelSpec with_ep_nodes;  // par with ep_nodes, the nodes an ETP x EP group spans, when priced (MoE)
  const ParallelSpec* layer_par = &par;
  if (plan.priced) {
    groups.emplace(*in.topology,
                   topology::ParallelSizes{.tp = par.tp, .cp = par.cp, .ep = par.ep, .dp = par.dp, .pp = par.pp,
                                           .etp = model.is_moe() ? par.etp : 0,
                                           .dist_opt_instances = feat.dist_opt_instances},
                   in.rank_order);
    // Only a MoE layer's dispatch reads ep_nodes (model/moe_dispatch.h).
    if (model.is_moe() && par.ep_nodes <= 0) {
      with_ep_nodes = par;
      with_ep_nodes.ep_nodes = topology::nodes_spanned(groups->sizes(), in.rank_order, GroupKind::kExpertTpEp,
                                                       in.topology->gpus_per_node);
      layer_par = &with_ep_nodes;
    }
    auto communicator = [&](std::vector<int> members) {
      return members.size() > 1 ? &groups->communicator(std::move(members)) : nullptr;
    };
    if (par.tp > 1) layer_groups.tp = communicator(groups->members(GroupKind::kTp));
    // The expert layout's expert-TP and ETP x EP groups (placement.h); a dense model has none.
    if (model.is_moe() && par.etp > 1) layer_groups.etp = communicator(groups->members(GroupKind::kExpertTp));
    if (model.is_moe() && par.ep * par.etp > 1) {
      layer_groups.etp_ep = communicator(groups->members(GroupKind::kExpertTpEp));
    }
    if (par.ep > 1) layer_groups.ep = communicator(groups->members(GroupKind::kEp));
    if (par.cp > 1) layer_groups.cp = communicator(groups->members(GroupKind::kCp));
  }
  auto finish_block = [&](PlanBlock& b) {
    if (groups) price_block(b, layer_groups, par.etp, cost);
    if (in.simulation_detail) price_ops(b, *in.hardware, feat);
    b.present = true;
  };

  // Block types: layer tables differ only by is_moe_layer (op_table.h), so one of each.
  // A model without experts has dense layers only: the first one is all it needs.
  for (int l = 0; l < model.num_layers && !(plan.dense.present && (plan.moe.present || !model.is_moe())); ++l) {
    PlanBlock& b = model.is_moe_layer(l) ? plan.moe : plan.dense;
    if (b.present) continue;
    b.ops = with_activation_storage(ops_for_layer(model, *layer_par, l), model, par, feat);
    const LayerParams lp = layer_params(model, l);
    b.dense_params = (lp.attention + lp.mlp) / par.tp + lp.router + lp.norms;
    b.expert_params = lp.routed_experts / (par.ep * par.etp);
    finish_block(b);
  }
  // Chunks of another window mix than the model's: each block type once more per attention span,
  // from a layer of that type and span (attention_window.h).
  auto spans = window_mix_differs(model, par) ? std::make_shared<RankPlan::SpanBlocks>() : nullptr;
  for (int l = 0; spans && l < model.num_layers; ++l) {
    const int span = is_window_layer(model, l) ? RankPlan::kWindowSpan : RankPlan::kFullSpan;
    PlanBlock& b = (model.is_moe_layer(l) ? spans->moe : spans->dense)[static_cast<std::size_t>(span)];
    if (b.present) continue;
    const PlanBlock& mean = model.is_moe_layer(l) ? plan.moe : plan.dense;
    b.ops = with_activation_storage(ops_for_layer(model, *layer_par, l, AttentionSpan::kLayer), model, par, feat);
    b.dense_params = mean.dense_params;
    b.expert_params = mean.expert_params;
    finish_block(b);
  }
  plan.spans = std::move(spans);
  // Embedding and head parameters join the dense DP group: the embedding with chunk 0, the head
  // (its own weight when untied, the tied copy on the last stage when pp > 1) with the last chunk.
  // Both step models' gradient buckets need them per block (GradientBuckets).
  plan.embedding.ops = ops_for_embedding(model, par);
  plan.head.ops = with_activation_storage(ops_for_head(model, par), model, par, feat);
  {
    const ModelParams mp = edge_params(model);
    plan.embedding.dense_params = (mp.embedding + mp.position_embedding) / par.tp;
    const double head_weight =
        (mp.head > 0 || par.pp > 1) ? model.vocab_size * static_cast<double>(model.hidden_size) : 0.0;
    plan.head.dense_params = head_weight / par.tp + mp.final_norm;
  }
  finish_block(plan.embedding);
  finish_block(plan.head);
  if (model.mtp_depth > 0) {
    plan.mtp_projection.ops = with_activation_storage(ops_for_mtp_projection(model, par), model, par, feat);
    finish_block(plan.mtp_projection);
  }

  // PP hop: the bytes of a boundary, priced as the slowest boundary between consecutive virtual
  // stages (wrapping for interleaved).
  const LayerOps pp = pp_boundary_comm(model, par);
  for (const CommOp& c : pp.comms()) {
    if (c.phase == Phase::kForward) plan.pp_bytes = c.bytes;
  }
  if (groups && !pp.comms().empty()) {
    const CompactGroup& pp_group = groups->compact(groups->members(GroupKind::kPp));
    plan.pp_hop = slowest_hop(pp_group.topology(), pp_group.gpus(), v > 1 && !dualpipe, pp.comms()[0].bytes);
  }

  // Chunks per rank, in the schedule's local order (model::parameter_chunks' order): virtual
  // stages k = 0..v-1 of rank r are chunks k*p + r; DualPipe's stage r runs chunk r on lane 0 and
  // the mirror chunk p-1-r on lane 1.
  const std::vector<ChunkLayers> layout = chunk_layers(model, par);
  const int last_chunk = static_cast<int>(layout.size()) - 1;
  // Without experts, full recompute or a window mix every layer is a dense one kept as it is: no
  // walk needed.
  const bool walk = model.is_moe() || feat.recompute == RecomputeKind::kFull || plan.window_mixed();
  auto chunk_of = [&](const ChunkLayers& cl, PlanChunk& c) {
    c = PlanChunk{.chunk = cl.chunk, .first_layer = cl.first_layer, .num_layers = cl.num_layers};
    if (!walk) c.dense_layers = cl.num_layers;
    for (int l = cl.first_layer; walk && l < cl.first_layer + cl.num_layers; ++l) {
      const bool moe = model.is_moe_layer(l);
      const bool windowed = plan.window_mixed() && is_window_layer(model, l);
      (moe ? c.moe_layers : c.dense_layers) += 1;
      if (windowed) ++(moe ? c.windowed.moe : c.windowed.dense);
      if (feat.recompute == RecomputeKind::kFull && !full_recompute_applies(feat, l - cl.first_layer)) {
        (moe ? c.moe_kept : c.dense_kept) += 1;
        if (windowed) ++(moe ? c.windowed.moe_kept : c.windowed.dense_kept);
      }
    }
    c.embedding = cl.chunk == 0;
    c.head = cl.chunk == last_chunk;
  };
  plan.chunks.resize(static_cast<std::size_t>(p * v));
  for (int r = 0; r < p; ++r) {
    if (dualpipe) {
      chunk_of(layout[static_cast<std::size_t>(r)], plan.chunks[static_cast<std::size_t>(r * 2)]);
      chunk_of(layout[static_cast<std::size_t>(p - 1 - r)], plan.chunks[static_cast<std::size_t>(r * 2 + 1)]);
    } else {
      for (int k = 0; k < v; ++k) {
        chunk_of(layout[static_cast<std::size_t>(k * p + r)], plan.chunks[static_cast<std::size_t>(r * v + k)]);
      }
    }
  }

  // The schedule's in-flight micro-batches and, under DualPipe with EP overlap, the F&B pairs each
  // stage really runs (its warm-up and cool-down passes run alone and expose their all-to-all).
  std::vector<double> inflight;
  std::shared_ptr<const schedules::Schedule> built;
  const schedules::Schedule* order = in.schedule;
  plan.pair_share.assign(static_cast<std::size_t>(p), 1.0);
  if (dualpipe && feat.ep_overlap.enabled) {
    if (order == nullptr) {
      built = schedules::shared_schedule(par.schedule, schedules::step_shape(model, par, feat));
      order = built.get();
    }
    for (int r = 0; r < p; ++r) {
      int pairs = 0;
      for (const schedules::Op& op : order->ops(r)) pairs += op.overlaps_next ? 1 : 0;
      plan.pair_share[static_cast<std::size_t>(r)] = static_cast<double>(pairs) / plan.m;
    }
  }
  // The step's own schedule: its orders come from the cache (schedules::shared_rank_orders).
  const std::shared_ptr<const std::vector<RankOrder>> orders =
      in.schedule != nullptr ? std::make_shared<const std::vector<RankOrder>>(schedules::rank_orders(*order, model, par, feat))
                             : schedules::shared_rank_orders(model, par, feat);
  if (in.schedule != nullptr) {
    const schedules::Schedule& s = *in.schedule;
    const schedules::PipelineShape shape{.stages = s.stages(), .microbatches = s.microbatches(), .chunks = s.chunks(),
                                         .pair_steady_passes = s.pair_steady_passes()};
    for (int r = 0; r < s.stages(); ++r) inflight.push_back(schedules::peak_activation(s.kind(), shape, r));
  } else {
    inflight = schedules::stage_inflight_microbatches(model, par, feat);
  }

  // Memory (MoFa(4) MoFa(5) MoFa(6) MoFa(25) MoFa(26) MoFa(27) MoFa(28) MoFa(29) MoFa(30) MoFa(31) MoFa(32)
  // MoFa(33) MoFa(34) MoFa(35)) from the tables above.
  const bool last_moe = model.is_moe_layer(model.num_layers - 1);
  const MemoryOpTotals op_totals{.dense = plan.dense.present ? plan.dense.ops.totals() : LayerTotals{},
                                 .moe = last_moe ? plan.moe.ops.totals() : plan.dense.ops.totals(),
                                 .embedding = plan.embedding.ops.totals(),
                                 .head = plan.head.ops.totals(),
                                 .mtp_projection = plan.mtp_projection.ops.totals(),
                                 .dense_weight_grad = plan.dense.present ? weight_grad_inputs(plan.dense.ops) : WeightGradInputs{},
                                 .moe_weight_grad = weight_grad_inputs(last_moe ? plan.moe.ops : plan.dense.ops),
                                 .head_weight_grad = weight_grad_inputs(plan.head.ops),
                                 .mtp_projection_weight_grad = weight_grad_inputs(plan.mtp_projection.ops)};
  plan.memory = memory_report(model, *in.hardware, par, feat, inflight, op_totals, *orders);

  // DP reduction and optimizer per rank (MoFa(13) MoFa(24) MoFa(25) MoFa(26) MoFa(27) MoFa(28)).
  const BytesPerParam bpp = bytes_per_param(feat);
  const ShardGroups shards = hsdp_shard_groups(par, feat);
  // The DP groups, each placed when bytes first travel on it (a dense model's expert groups never).
  struct DpGroup {
    GroupKind kind;
    bool placed = false;
    const topology::CommGroup* comm = nullptr;
  };
  DpGroup dense_dp{.kind = GroupKind::kDpCpShard};  // the shard groups (the whole DP groups without HSDP)
  DpGroup expert_dp{.kind = GroupKind::kExpertDpShard};
  DpGroup dense_replicas{.kind = GroupKind::kDpCpReplica};  // HSDP: across the shard groups
  DpGroup expert_replicas{.kind = GroupKind::kExpertDpReplica};
  const bool replicas = shards.instances > 1;
  auto placed = [&](DpGroup& g) -> const topology::CommGroup* {
    if (!g.placed) {
      g.placed = true;
      if (groups) g.comm = &groups->communicator(groups->members(g.kind));
    }
    return g.comm;
  };
  // A collective issued `calls` times over `bytes` in all: each call pays α, the bytes pay β once.
  auto bucketed = [&](DpGroup& g, CollectiveKind kind, double bytes, int calls) {
    if (bytes <= 0) return CommCost{};
    const topology::CommGroup* group = placed(g);
    if (group == nullptr || group->size() == 1) return CommCost{};
    const CommCost whole = cost(*group, kind, bytes);
    return CommCost{whole.latency * std::max(calls, 1), whole.bandwidth};
  };
  const bool distributed = feat.distributed_optimizer;
  const bool broadcast = zero_broadcast_sync(feat);
  // `calls` broadcasts sharing `bytes` evenly: each pays its latency and pipeline fill (priced at
  // the mean size, exact while every broadcast is above the fill's chunk), the bytes pay β once.
  auto broadcasts = [&](DpGroup& g, double bytes, int calls) {
    if (bytes <= 0 || calls < 1) return CommCost{};
    const topology::CommGroup* group = placed(g);
    if (group == nullptr || group->size() == 1) return CommCost{};
    const CommCost one = cost(*group, CollectiveKind::kBroadcast, bytes / calls);
    return CommCost{one.latency * calls, one.bandwidth * calls};
  };
  // ZeRO-3 / FSDP: each transformer layer is one FSDP unit, all-gathered whole (one collective per
  // group, the unit's flat parameter buffer) before its forward and before its backward.
  const bool zero3 = dp_sharding(feat) == DpSharding::kOptimGradsParams;
  if (zero3) {
    for (PlanBlock* b : {&plan.dense, &plan.moe}) {
      if (!b->present) continue;
      if (shards.dense_dp > 1) b->fsdp_gather_bytes = b->dense_params * bpp.weight;
      if (shards.expert_dp > 1) b->fsdp_expert_gather_bytes = b->expert_params * bpp.weight;
      // one collective per unit (FSDP's flat buffer): no dp_bucket_bytes split
      auto whole = [&](DpGroup& g, double bytes) { return bucketed(g, CollectiveKind::kAllGather, bytes, 1); };
      b->fsdp_gather = whole(dense_dp, b->fsdp_gather_bytes) + whole(expert_dp, b->fsdp_expert_gather_bytes);
    }
  }
  plan.dp.assign(static_cast<std::size_t>(p), RankDp{});
  for (int r = 0; r < p; ++r) {
    const GpuParams& gp = plan.memory.stages[static_cast<std::size_t>(r)].params;
    const double dense = gp.dense();  // DualPipe's second copy is in gp (parameter_chunks)
    const double expert = gp.expert;
    RankDp& d = plan.dp[static_cast<std::size_t>(r)];
    d.dense_grad_bytes = dense * bpp.grad;
    d.expert_grad_bytes = expert * bpp.grad;
    count_gradient_buckets(plan, model, r, bpp.grad, feat.dp_bucket_bytes, d);
    // The distributed optimizer's parameter all-gathers, as the step simulation issues them: one
    // per chunk ahead of its forward with DP overlap, one per gradient bucket after its CPU update,
    // else one after the GPU update.
    d.param_gathers = feat.dp_overlap.enabled                            ? v
                      : feat.optimizer_placement == OptimizerPlacement::kCpu ? d.dense_grad_buckets + d.expert_grad_buckets
                                                                         : 1;
    if (broadcast) count_broadcast_owners(plan, model, par, r, shards, d);
    // Everything below is a function of these: a rank laid out like the rank above (the middle
    // ranks of a uniform split) reduces and updates what it does.
    if (r > 0) {
      const RankDp& above = plan.dp[static_cast<std::size_t>(r - 1)];
      const GpuParams& above_gp = plan.memory.stages[static_cast<std::size_t>(r - 1)].params;
      if (dense == above_gp.dense() && expert == above_gp.expert && d.dense_grad_buckets == above.dense_grad_buckets &&
          d.expert_grad_buckets == above.expert_grad_buckets && d.param_gathers == above.param_gathers &&
          d.dense_param_broadcasts == above.dense_param_broadcasts &&
          d.expert_param_broadcasts == above.expert_param_broadcasts) {
        d = above;
        continue;
      }
    }
    if (broadcast) {  // InternEvo's ZeRO-1: gradients all-reduced, then one broadcast per owner
      if (shards.dense_dp > 1) d.dense_param_bytes = dense * bpp.weight;
      if (shards.expert_dp > 1) d.expert_param_bytes = expert * bpp.weight;
      d.grad = bucketed(dense_dp, CollectiveKind::kAllReduce, d.dense_grad_bytes, d.dense_grad_buckets) +
               bucketed(expert_dp, CollectiveKind::kAllReduce, d.expert_grad_bytes, d.expert_grad_buckets);
      d.params = broadcasts(dense_dp, d.dense_param_bytes, d.dense_param_broadcasts) +
                 broadcasts(expert_dp, d.expert_param_bytes, d.expert_param_broadcasts);
    } else if (distributed) {  // MoFa(25) MoFa(26): RS of gradients + AG of parameters
      if (shards.dense_dp > 1 && !zero3) d.dense_param_bytes = dense * bpp.weight;
      if (shards.expert_dp > 1 && !zero3) d.expert_param_bytes = expert * bpp.weight;
      d.grad = bucketed(dense_dp, CollectiveKind::kReduceScatter, d.dense_grad_bytes, d.dense_grad_buckets) +
               bucketed(expert_dp, CollectiveKind::kReduceScatter, d.expert_grad_bytes, d.expert_grad_buckets);
      if (replicas) {  // HSDP: each bucket's shard all-reduced across the replicas
        d.dense_replica_bytes = d.dense_grad_bytes / shards.dense_dp;
        d.expert_replica_bytes = d.expert_grad_bytes / shards.expert_dp;
        d.grad = d.grad +
                 bucketed(dense_replicas, CollectiveKind::kAllReduce, d.dense_replica_bytes, d.dense_grad_buckets) +
                 bucketed(expert_replicas, CollectiveKind::kAllReduce, d.expert_replica_bytes, d.expert_grad_buckets);
      }
      // ZeRO-3 gathers per layer (above), not after the update: no gather bytes, no gather cost.
      d.params = bucketed(dense_dp, CollectiveKind::kAllGather, zero3 ? 0.0 : dense * bpp.weight, d.param_gathers) +
                 bucketed(expert_dp, CollectiveKind::kAllGather, zero3 ? 0.0 : expert * bpp.weight, d.param_gathers);
    } else {
      d.grad = bucketed(dense_dp, CollectiveKind::kAllReduce, d.dense_grad_bytes, d.dense_grad_buckets) +
               bucketed(expert_dp, CollectiveKind::kAllReduce, d.expert_grad_bytes, d.expert_grad_buckets);
    }
    d.updated_params = distributed ? dense / shards.dense_dp + expert / shards.expert_dp : dense + expert;
    // Megatron's optimizer step (megatron/core/optimizer: clip_grads.py, optimizer.py,
    // distrib_optimizer.py), per parameter of this GPU's shard unless said otherwise:
    // - Adam (multi_tensor_adam) reads the gradient, reads and writes master weights and moments;
    //   the copy to the model's parameters then reads the master weight again and writes the
    //   weight (master = 0 without master weights: the update writes the weight in place);
    // - gradient clipping's norm (multi_tensor_l2norm) reads the gradient once (the scaling pass
    //   runs only when the norm exceeds the threshold, so it is left out);
    // - zero_grad_buffer clears the whole local gradient buffer (every parameter of the rank, not
    //   only the shard) for the next step.
    d.adam_bytes = d.updated_params * (bpp.grad + 2 * bpp.optimizer() + bpp.master + bpp.weight);
    d.clip_norm_bytes = d.updated_params * bpp.grad;
    d.zero_grad_bytes = (dense + expert) * bpp.grad;
    d.update_bytes = d.adam_bytes + d.clip_norm_bytes + d.zero_grad_bytes;
    d.d2h_bytes = d.updated_params * bpp.grad;    // MoFa(27) MoFa(28)
    d.h2d_bytes = d.updated_params * bpp.weight;
    if (in.simulation_detail) {
      d.gpu_update_seconds = optimizer_update_seconds(d.update_bytes, *in.hardware, feat);
    }
  }

  plan.model_flops = model_flops_per_step(model, par);
  plan.hardware_flops = hardware_flops_per_step(model, par, feat);
  plan.tokens = tokens_per_step(model, par);
  return plan;
}

}  // namespace mofasim::model
