// Static, activation and peak memory per pipeline rank (see memory.h).
#include "model/memory.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/memory_reserve.h"
#include "model/memory_walk.h"
#include "model/moe_deepep.h"
#include "model/op_table.h"
#include "model/recompute_modules.h"
#include "model/shape.h"
#include "model/stage_layout.h"
#include "sim/units/check.h"

namespace mofasim::model {
namespace {

constexpr int kDefaultMaxMemfineChunks = 64;
constexpr double kOffloadLayersInFlight = 2;  // the layer computing and the one being copied

// What one layer keeps per micro-batch, and its transient working set, under the features.
struct LayerMemory {
  double stored = 0;
  double working = 0;  // live only while this layer runs (one micro-batch)
  double kept = 0;     // left by an input-gradient pass until the weight-gradient pass
};

LayerMemory layer_memory(const LayerTotals& x, const WeightGradInputs& weight_grad, const FeatureSpec& f,
                         int memfine_chunks) {
  // MemFine: expert intermediates are recomputed chunk by chunk; only the dispatched inputs stay.
  const bool memfine = memfine_chunks > 0;
  const double chunked = memfine ? x.routed_activation_bytes - x.routed_input_bytes : 0;
  const double chunk_working = memfine ? chunked / memfine_chunks : 0;
  LayerMemory m;
  // The weight-gradient inputs (the rebuilt ones too under recompute), but those MemFine rebuilds
  // chunk by chunk, which its input-gradient pass frees (weight_grad_inputs).
  m.kept = weight_grad.kept(memfine);
  switch (f.recompute) {
    case RecomputeKind::kNone:  // MoFa(5)
      m.stored = x.activation_bytes - chunked;
      m.working = chunk_working;
      break;
    case RecomputeKind::kSelective:  // MoFa(29): attention intermediates dropped
      m.stored = x.activation_bytes - x.selective_dropped_bytes - chunked;
      m.working = x.selective_dropped_bytes + chunk_working;
      break;
    case RecomputeKind::kFull:  // MoFa(31): the layer input only, plus one layer rebuilt at a time
      m.stored = x.input_bytes;
      m.working = x.activation_bytes - x.input_bytes - chunked + chunk_working;  // the input is stored already
      break;
  }
  return m;
}

// StaticMemory::unsharded: the transient full-size buffers of ZeRO-2 / ZeRO-3.
double unsharded_bytes(const ModelSpec& model, const ParallelSpec& parallel, const FeatureSpec& features) {
  const DpSharding level = dp_sharding(features);
  const BytesPerParam b = bytes_per_param(features);
  if (level == DpSharding::kOptimGrads) return features.dp_bucket_bytes;
  if (level != DpSharding::kOptimGradsParams) return 0;
  double largest = 0;  // one layer's parameters on this GPU, the largest layer kind
  for (int l : {0, model.num_layers - 1}) {
    const LayerParams p = layer_params(model, l);
    largest = std::max(largest, (p.attention + p.mlp) / parallel.tp + p.router + p.norms +
                                    p.routed_experts / (parallel.ep * parallel.etp));
  }
  return largest * (2 * b.weight + b.grad);
}

void validate_inflight(const ParallelSpec& parallel, std::span<const double> inflight) {
  if (static_cast<int>(inflight.size()) != parallel.pp) {
    throw std::invalid_argument("inflight micro-batches: expected one entry per pipeline rank (pp = " +
                                std::to_string(parallel.pp) + "), got " + std::to_string(inflight.size()));
  }
  for (double n : inflight) {
    if (!(n >= 0)) throw std::invalid_argument("inflight micro-batches must be >= 0, got " + std::to_string(n));
  }
}

MemoryReport report_with_chunks(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                                const FeatureSpec& features, std::span<const double> inflight, int memfine_chunks,
                                const MemoryOpTotals& totals, std::span<const RankOrder> orders) {
  const ShardGroups shards = hsdp_shard_groups(parallel, features);
  // Dense and MoE layers each cost the same wherever they sit: one op table each.
  const bool has_dense = model.first_layer_of_type(false) >= 0;
  const LayerMemory dense =
      has_dense ? layer_memory(totals.dense, totals.dense_weight_grad, features, memfine_chunks) : LayerMemory{};
  const LayerMemory moe =
      model.is_moe() ? layer_memory(totals.moe, totals.moe_weight_grad, features, memfine_chunks) : LayerMemory{};
  const double embedding = totals.embedding.activation_bytes;
  const double head = totals.head.activation_bytes;
  const double mtp_projection = model.mtp_depth > 0 ? totals.mtp_projection.activation_bytes : 0;
  const LayerMemory& mtp_layer = model.is_moe_layer(model.num_layers - 1) ? moe : dense;
  // Full recompute by Megatron's method: `block` recomputes the first recompute_num_layers layers
  // of each chunk and keeps every activation of the others; `uniform` keeps one input per group of
  // recompute_num_layers layers and rebuilds a whole group at once in the backward.
  FeatureSpec kept_features = features;
  kept_features.recompute = RecomputeKind::kNone;
  const LayerMemory dense_kept =
      has_dense ? layer_memory(totals.dense, totals.dense_weight_grad, kept_features, memfine_chunks) : LayerMemory{};
  const LayerMemory moe_kept =
      model.is_moe() ? layer_memory(totals.moe, totals.moe_weight_grad, kept_features, memfine_chunks) : LayerMemory{};
  const bool full = features.recompute == RecomputeKind::kFull;
  const int group = std::max(1, features.recompute_num_layers);
  const double unsharded = unsharded_bytes(model, parallel, features);
  const double deepep = model.is_moe() && model.moe.token_dispatcher == MoeDispatcher::kFlex
                            ? deepep_buffers(model.hidden_size, parallel.ep * parallel.etp).total()
                            : 0.0;
  std::vector<LayerMemory> sequence;

  // A chunk's transformer layers in forward order, as `add` receives them.
  auto append_chunk_layers = [&](const ChunkLayers& c, auto&& add) {
    double group_working = 0;
    for (int i = c.first_layer; i < c.first_layer + c.num_layers; ++i) {
      const bool is_moe = model.is_moe_layer(i);
      const LayerMemory& lm = is_moe ? moe : dense;
      const int pos = i - c.first_layer;
      if (!full) {
        add(lm);
      } else if (features.recompute_method != RecomputeMethod::kUniform) {  // MoFa(31) for the layers it picks
        add(full_recompute_applies(features, pos) ? lm : (is_moe ? moe_kept : dense_kept));
      } else {  // MoFa(31): one input per group; the group's layers are rebuilt together
        group_working = pos % group == 0 ? lm.working : group_working + lm.working;
        add(LayerMemory{.stored = pos % group == 0 ? lm.stored : 0, .working = group_working, .kept = lm.kept});
      }
    }
  };
  // The walk's units of a chunk (memory_walk.h): the embedding with chunk 0, its layers, and with
  // the last chunk one unit for the head, the loss and the MTP modules (each a layer of the last
  // layer's kind, its projection and its own head), which the backward releases first.
  const int last_chunk = parallel.pp * parallel.vpp - 1;
  const bool memfine = memfine_chunks > 0;
  const double mtp_depth = model.mtp_depth;
  const double head_kept = totals.head_weight_grad.kept(memfine);
  const UnitMemory head_unit{
      .stored = head + mtp_depth * (mtp_layer.stored + mtp_projection + head),
      .working = mtp_depth > 0 ? mtp_layer.working : 0,
      .kept_for_weight_grad =
          head_kept + mtp_depth * (mtp_layer.kept + totals.mtp_projection_weight_grad.kept(memfine) + head_kept)};
  // Into `units`, reused from rank to rank so the walk allocates nothing once warm.
  auto chunk_units = [&](const ChunkLayers& c, std::vector<UnitMemory>& units) {
    units.clear();
    if (c.chunk == 0) {
      // The embedding has no input gradient (its input is token ids): a split backward releases
      // nothing of it, its weight-gradient pass all of it.
      units.push_back({.stored = embedding, .kept_for_weight_grad = embedding});
    }
    append_chunk_layers(c, [&](const LayerMemory& lm) {
      units.push_back({.stored = lm.stored, .working = lm.working, .kept_for_weight_grad = lm.kept});
    });
    if (c.chunk == last_chunk) units.push_back(head_unit);
  };
  std::vector<std::vector<UnitMemory>> rank_units;

  MemoryReport report;
  report.memfine_chunks = memfine_chunks;
  report.head_unit = head_unit;
  report.stages.reserve(static_cast<std::size_t>(parallel.pp));
  const std::vector<ChunkLayers> chunks = chunk_layers(model, parallel);  // rank r's: r, r + pp, ...
  // A rank's parameters depend only on the kinds of its layers in order (every dense layer, and
  // every MoE layer, holds the same) and on whether it is the first or last rank: a middle rank
  // laid out like the middle rank before it reuses its count (bit for bit the same sums).
  std::vector<bool> kinds;       // is_moe_layer of this rank's layers, in order
  std::vector<bool> prev_kinds;  // the same for the last middle rank counted
  GpuParams prev_params;
  bool have_prev = false;
  for (int rank = 0; rank < parallel.pp; ++rank) {
    StageMemory st;
    st.rank = rank;
    kinds.clear();
    for (std::size_t j = static_cast<std::size_t>(rank); j < chunks.size(); j += static_cast<std::size_t>(parallel.pp)) {
      const ChunkLayers& c = chunks[j];
      MOFASIM_DCHECK(c.rank == rank, "chunk j runs on rank j % pp");
      for (int i = c.first_layer; i < c.first_layer + c.num_layers; ++i) kinds.push_back(model.is_moe_layer(i));
    }
    const bool middle = rank != 0 && rank != parallel.pp - 1;
    if (middle && have_prev && kinds == prev_kinds) {
      st.params = prev_params;
    } else {
      st.params = stage_gpu_params(model, parallel, rank, chunks);
      if (middle) {
        prev_kinds.swap(kinds);
        prev_params = st.params;
        have_prev = true;
      }
    }
    st.static_bytes = static_memory(st.params, features, shards);
    if (features.fp8.enabled) {  // no FP8 copies of the embedding and the BF16 head on this rank
      const double bf16_gemm_params = st.params.embedding_sharded + (features.fp8.output_layer ? 0 : st.params.head_sharded);
      st.static_bytes.fp8_weights -= bf16_gemm_params * fp8_weight_bytes_per_param(features.fp8.recipe);
    }
    st.static_bytes.unsharded = unsharded;
    st.static_bytes.deepep_buffers = deepep;

    double layers_stored = 0;  // one micro-batch, offloadable
    double largest_stored = 0;
    double working = 0;
    sequence.clear();  // this rank's layers in forward order
    auto add_layer = [&](const LayerMemory& lm) {
      layers_stored += lm.stored;
      largest_stored = std::max(largest_stored, lm.stored);
      working = std::max(working, lm.working);
      sequence.push_back(lm);
    };
    for (std::size_t j = static_cast<std::size_t>(rank); j < chunks.size(); j += static_cast<std::size_t>(parallel.pp)) {
      MOFASIM_DCHECK(chunks[j].rank == rank, "chunk j runs on rank j % pp");
      append_chunk_layers(chunks[j], add_layer);
    }
    double extras = 0;       // embedding activations, never offloaded, kept per micro-batch in flight
    double head_extras = 0;  // output head + loss (and each MTP module's projection and head)
    if (rank == 0) extras += embedding;
    if (rank == parallel.pp - 1) {
      head_extras += head;
      for (int d = 0; d < model.mtp_depth; ++d) {
        add_layer(mtp_layer);
        head_extras += mtp_projection + head;
      }
    }
    const double n = inflight[static_cast<std::size_t>(rank)];
    const double n_head = head_microbatches_in_flight(parallel.schedule, n);
    if (!orders.empty() && !features.activation_offload.enabled) {  // the schedule's order, pass by pass
      const RankOrder& order = orders[static_cast<std::size_t>(rank)];
      rank_units.resize(order.chunks.size());
      for (std::size_t k = 0; k < order.chunks.size(); ++k) chunk_units(order.chunks[k], rank_units[k]);
      st.working_bytes = 0;
      for (const auto& units : rank_units) {
        for (const UnitMemory& u : units) st.working_bytes = std::max(st.working_bytes, u.working);
      }
      const WalkResult walked = walk_rank(order, rank_units);
      st.activation_bytes = walked.peak;
      if (walked.paired) {
        for (const auto& units : rank_units) {
          double forward = 0;
          for (const UnitMemory& u : units) forward += u.stored;
          st.pair_slack_bytes = std::max(st.pair_slack_bytes, forward);
        }
      }
    } else if (features.activation_offload.enabled) {  // MoFa(33) MoFa(34) MoFa(35): only the layers in flight stay
      const double kept = std::min(n * layers_stored, kOffloadLayersInFlight * largest_stored);
      st.offloaded_bytes = n * layers_stored - kept;
      st.working_bytes = kept + working;
      st.activation_bytes = n * extras + n_head * head_extras + st.working_bytes;
    } else {
      // A layer's working set is rebuilt in its backward, when the layers after it in the same
      // micro-batch have already freed theirs: the most live is max_j(working_j - stored after j)
      // on top of the n micro-batches' stored bytes. The head's logits are freed by its own
      // backward, before any layer's: one micro-batch's head or the transient, not both.
      double transient = 0;
      double after = 0;
      for (auto it = sequence.rbegin(); it != sequence.rend(); ++it) {
        transient = std::max(transient, it->working - after);
        after += it->stored;
      }
      st.working_bytes = n > 0 ? transient : 0;
      const double head_part = n_head > 0 ? (n_head - 1) * head_extras + std::max(head_extras, transient)
                                          : st.working_bytes;
      st.activation_bytes = n * (layers_stored + extras) + head_part;
    }
    const DeviceReserve device = device_reserve(hw, st.static_bytes.total() + st.activation_bytes);  // MoFa(6)
    assign_device_reserve(device, hw, st);
    st.excess_bytes = std::max(0.0, st.peak_bytes - st.capacity_bytes);
    if (st.peak_bytes > (report.stages.empty() ? -1.0 : report.stages[static_cast<std::size_t>(report.worst_rank)].peak_bytes)) {
      report.worst_rank = rank;
    }
    report.stages.push_back(st);
  }
  return report;
}

void validate_memory_inputs(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                            std::span<const double> inflight, std::span<const RankOrder> orders) {
  validate_model(model);
  validate_parallel(model, parallel);
  validate_inflight(parallel, inflight);
  if (!orders.empty() && static_cast<int>(orders.size()) != parallel.pp) {
    throw std::invalid_argument("pipeline pass orders: expected one per pipeline rank (pp = " +
                                std::to_string(parallel.pp) + "), got " + std::to_string(orders.size()));
  }
  if (!(hw.gpu_memory_bytes > 0)) {
    throw std::invalid_argument("hardware.gpu_memory_bytes must be > 0, got " + std::to_string(hw.gpu_memory_bytes));
  }
}

}  // namespace

BytesPerParam bytes_per_param(const FeatureSpec& features) {
  BytesPerParam b;
  b.weight = dtype_bytes(features.param_dtype);
  b.grad = dtype_bytes(features.grad_dtype);
  const bool master = features.master_weights && features.param_dtype != DType::kFp32 &&
                      features.master_dtype != features.param_dtype;
  b.master = master ? dtype_bytes(features.master_dtype) : 0;
  // Legacy fp16 training keeps fp16 gradients; the optimizer updates fp32 master weights from an
  // fp32 copy of its gradient shard (Megatron docs/user-guide/features/dist_optimizer.md: fp16
  // param / fp16 grads = 20 B, 4 + 16/d distributed). --main-grads-dtype bf16 (precision-aware
  // optimizer) updates from the bf16 gradients directly.
  b.main_grad_copy = master && features.grad_dtype == DType::kFp16 ? 4 : 0;
  b.moments = dtype_bytes(features.optimizer_state_dtype) + dtype_bytes(features.exp_avg_sq_dtype);
  return b;
}

bool full_recompute_applies(const FeatureSpec& features, int position_in_chunk) {
  if (features.recompute != RecomputeKind::kFull) return false;
  switch (features.recompute_method) {
    case RecomputeMethod::kUniform: return true;
    case RecomputeMethod::kBlock: return position_in_chunk < features.recompute_num_layers;
    case RecomputeMethod::kEveryNth:  // torchtitan counts layers from 1: the k-th, 2k-th, ...
      return features.recompute_num_layers > 0 && (position_in_chunk + 1) % features.recompute_num_layers == 0;
  }
  return true;
}

bool zero_broadcast_sync(const FeatureSpec& features) {
  return features.param_sync == DpParamSync::kBroadcast && dp_sharding(features) == DpSharding::kOptim &&
         features.dist_opt_instances == 1;
}

DpSharding dp_sharding(const FeatureSpec& features) {
  return features.distributed_optimizer ? std::max(features.dp_sharding, DpSharding::kOptim) : features.dp_sharding;
}

double gpu_bytes_per_param(const FeatureSpec& features, int dp_shards) {
  if (dp_shards < 1) throw std::invalid_argument("dp_shards must be >= 1, got " + std::to_string(dp_shards));
  const BytesPerParam b = bytes_per_param(features);
  if (features.optimizer_placement == OptimizerPlacement::kCpu) return b.weight + b.grad;  // MoFa(27)
  const DpSharding level = dp_sharding(features);
  const double shards = level >= DpSharding::kOptim ? dp_shards : 1;  // MoFa(25)
  const double grads = level >= DpSharding::kOptimGrads ? b.grad / dp_shards : b.grad;
  const double weights = level >= DpSharding::kOptimGradsParams ? b.weight / dp_shards : b.weight;
  return weights + grads + b.optimizer() / shards;
}

ShardGroups optimizer_shard_groups(const ParallelSpec& parallel) {
  const int expert_group = parallel.ep * parallel.etp;
  const int attention_ranks = parallel.tp * parallel.cp * parallel.dp;
  if (expert_group < 1 || attention_ranks % expert_group != 0) {
    throw std::invalid_argument("parallel: ep*etp (" + std::to_string(expert_group) + ") must divide tp*cp*dp (" +
                                std::to_string(attention_ranks) + ")");
  }
  return ShardGroups{.dense_dp = parallel.dp * parallel.cp, .expert_dp = attention_ranks / expert_group};
}

double fp8_weight_bytes_per_param(Fp8Recipe recipe) {
  return 2 * fp8_activation_bytes_per_element(recipe);  // the FP8 weight and its transpose, each with its scales
}

ShardGroups hsdp_shard_groups(const ParallelSpec& parallel, const FeatureSpec& features) {
  const ShardGroups whole = optimizer_shard_groups(parallel);
  const int n = features.dist_opt_instances;
  if (n > 1 && dp_sharding(features) == DpSharding::kNone) {
    throw std::invalid_argument("optimizations.optimizer.num_distributed_optimizer_instances: " + std::to_string(n) +
                                " needs a sharded optimizer (data_parallel_sharding_strategy other than no_shard)");
  }
  if (n < 1 || whole.dense_dp % n != 0 || whole.expert_dp % n != 0) {
    throw std::invalid_argument("optimizations.optimizer.num_distributed_optimizer_instances: must divide dp*cp = " +
                                std::to_string(whole.dense_dp) + " and the expert-DP size " +
                                std::to_string(whole.expert_dp) + ", got " + std::to_string(n));
  }
  return ShardGroups{.dense_dp = whole.dense_dp / n, .expert_dp = whole.expert_dp / n, .instances = n};
}

StaticMemory static_memory(const GpuParams& params, const FeatureSpec& features, const ShardGroups& shards) {
  if (shards.dense_dp < 1 || shards.expert_dp < 1) throw std::invalid_argument("ShardGroups: sizes must be >= 1");
  const BytesPerParam b = bytes_per_param(features);
  const DpSharding level = dp_sharding(features);
  const double sharded = params.dense() / shards.dense_dp + params.expert / shards.expert_dp;
  StaticMemory m;
  // MoFa(4); ZeRO-2 keeps the gradient shard, ZeRO-3 the parameter shard as well.
  m.weights = (level >= DpSharding::kOptimGradsParams ? sharded : params.total()) * b.weight;
  m.grads = (level >= DpSharding::kOptimGrads ? sharded : params.total()) * b.grad;
  const double optimizer = b.optimizer() * (level >= DpSharding::kOptim ? sharded : params.total());
  if (features.optimizer_placement == OptimizerPlacement::kCpu) {
    m.host_bytes = optimizer;  // MoFa(27)
  } else {
    m.optimizer_states = optimizer;
  }
  if (features.fp8.enabled) m.fp8_weights = (params.dense_sharded + params.expert) * fp8_weight_bytes_per_param(features.fp8.recipe);
  return m;
}

bool MemoryReport::fits() const {
  return std::all_of(stages.begin(), stages.end(), [](const StageMemory& s) { return s.fits(); });
}

double head_microbatches_in_flight(ScheduleKind schedule, double stage_inflight) {
  if (!(stage_inflight >= 0)) {
    throw std::invalid_argument("inflight micro-batches must be >= 0, got " + std::to_string(stage_inflight));
  }
  // GPipe runs every forward before the first backward: all of them hold their logits.
  if (schedule == ScheduleKind::kGpipe) return stage_inflight;
  return std::min(stage_inflight, 1.0);
}

std::vector<double> one_f_one_b_inflight(const ParallelSpec& parallel) {
  if (parallel.pp < 1) throw std::invalid_argument("parallel.pp must be >= 1");
  const int m = parallel.microbatches();
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(parallel.pp));
  for (int k = 0; k < parallel.pp; ++k) out.push_back(std::min(parallel.pp - k, m));
  return out;
}

MemoryOpTotals memory_op_totals(const ModelSpec& model, const ParallelSpec& parallel) {
  return memory_op_totals(model, parallel, FeatureSpec{});
}

WeightGradInputs weight_grad_inputs(const LayerOps& ops) {
  WeightGradInputs w;
  for (const OpCost& op : ops.ops()) {
    if (!(op.backward_weight.flops > 0)) continue;
    w.all += op.activation_bytes;
    // MemFine keeps the dispatched tokens (fc1's input, LayerTotals::routed_input_bytes) and
    // rebuilds the rest of the routed experts' activations chunk by chunk (layer_memory).
    if (op.routed_expert && op.op != OpKind::kExpertLinear1) w.memfine_rebuilt += op.activation_bytes;
  }
  return w;
}

MemoryOpTotals memory_op_totals(const ModelSpec& model, const ParallelSpec& parallel, const FeatureSpec& features) {
  MemoryOpTotals t;
  auto stored = [&](const LayerOps& ops) { return with_activation_storage(ops, model, parallel, features); };
  // One layer of each type the model has (dense and MoE layers may interleave: MoeSpec::layer_period).
  if (const int dense = model.first_layer_of_type(false); dense >= 0) {
    const LayerOps ops = stored(ops_for_layer(model, parallel, dense));
    t.dense = ops.totals();
    t.dense_weight_grad = weight_grad_inputs(ops);
  }
  if (model.is_moe()) {
    const LayerOps ops = stored(ops_for_layer(model, parallel, model.first_layer_of_type(true)));
    t.moe = ops.totals();
    t.moe_weight_grad = weight_grad_inputs(ops);
  }
  t.embedding = ops_for_embedding(model, parallel).totals();
  const LayerOps head = stored(ops_for_head(model, parallel));
  t.head = head.totals();
  t.head_weight_grad = weight_grad_inputs(head);
  if (model.mtp_depth > 0) {
    const LayerOps projection = stored(ops_for_mtp_projection(model, parallel));
    t.mtp_projection = projection.totals();
    t.mtp_projection_weight_grad = weight_grad_inputs(projection);
  }
  return t;
}

MemoryReport memory_report(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                           const FeatureSpec& features, std::span<const double> inflight,
                           std::span<const RankOrder> orders) {
  validate_memory_inputs(model, hw, parallel, inflight, orders);
  return memory_report(model, hw, parallel, features, inflight, memory_op_totals(model, parallel, features), orders);
}

MemoryReport memory_report(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                           const FeatureSpec& features, std::span<const double> inflight, const MemoryOpTotals& totals,
                           std::span<const RankOrder> orders) {
  validate_memory_inputs(model, hw, parallel, inflight, orders);
  if (features.memfine_chunks < 0) {
    throw std::invalid_argument("features.memfine_chunks must be >= 0, got " + std::to_string(features.memfine_chunks));
  }
  if (!features.memfine || !model.is_moe()) {
    return report_with_chunks(model, hw, parallel, features, inflight, 0, totals, orders);
  }
  if (features.memfine_chunks > 0) {
    return report_with_chunks(model, hw, parallel, features, inflight, features.memfine_chunks, totals, orders);
  }
  const std::optional<int> chunks =
      memfine_min_chunks(model, hw, parallel, features, inflight, kDefaultMaxMemfineChunks, orders);
  return report_with_chunks(model, hw, parallel, features, inflight, chunks.value_or(kDefaultMaxMemfineChunks), totals,
                            orders);
}

std::optional<int> memfine_min_chunks(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                                      const FeatureSpec& features, std::span<const double> inflight, int max_chunks,
                                      std::span<const RankOrder> orders) {
  validate_memory_inputs(model, hw, parallel, inflight, orders);
  if (max_chunks < 1) throw std::invalid_argument("max_chunks must be >= 1, got " + std::to_string(max_chunks));
  const MemoryOpTotals totals = memory_op_totals(model, parallel, features);
  if (!model.is_moe()) {
    if (report_with_chunks(model, hw, parallel, features, inflight, 0, totals, orders).fits()) return 1;
    return std::nullopt;
  }
  // Peak memory falls monotonically with the chunk count: binary search would do, but the
  // linear scan is already cheap (a report is a handful of op tables) and simpler to read.
  for (int n = 1; n <= max_chunks; ++n) {
    if (report_with_chunks(model, hw, parallel, features, inflight, n, totals, orders).fits()) return n;
  }
  return std::nullopt;
}

}  // namespace mofasim::model
