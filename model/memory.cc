// Static, activation and peak memory per pipeline rank (see memory.h).
#include "model/memory.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/op_table.h"
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
};

LayerMemory layer_memory(const LayerTotals& x, const FeatureSpec& f, int memfine_chunks) {
  // MemFine: expert intermediates are recomputed chunk by chunk; only the dispatched inputs stay.
  const double chunked = memfine_chunks > 0 ? x.routed_activation_bytes - x.routed_input_bytes : 0;
  const double chunk_working = memfine_chunks > 0 ? chunked / memfine_chunks : 0;
  LayerMemory m;
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
      m.working = x.activation_bytes - chunked + chunk_working;
      break;
  }
  return m;
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
                                const MemoryOpTotals& totals) {
  const ShardGroups shards = optimizer_shard_groups(parallel);
  // Dense and MoE layers each cost the same wherever they sit: one op table each.
  const LayerMemory dense = model.is_moe() && model.moe.first_k_dense_layers == 0
                                ? LayerMemory{}
                                : layer_memory(totals.dense, features, memfine_chunks);
  const LayerMemory moe = model.is_moe() ? layer_memory(totals.moe, features, memfine_chunks) : LayerMemory{};
  const double embedding = totals.embedding.activation_bytes;
  const double head = totals.head.activation_bytes;
  const double mtp_projection = model.mtp_depth > 0 ? totals.mtp_projection.activation_bytes : 0;
  const LayerMemory& mtp_layer = model.is_moe_layer(model.num_layers - 1) ? moe : dense;

  MemoryReport report;
  report.memfine_chunks = memfine_chunks;
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
      st.params = stage_gpu_params(model, parallel, rank);
      if (middle) {
        prev_kinds.swap(kinds);
        prev_params = st.params;
        have_prev = true;
      }
    }
    st.static_bytes = static_memory(st.params, features, shards);

    double layers_stored = 0;  // one micro-batch, offloadable
    double largest_stored = 0;
    double working = 0;
    auto add_layer = [&](const LayerMemory& lm) {
      layers_stored += lm.stored;
      largest_stored = std::max(largest_stored, lm.stored);
      working = std::max(working, lm.working);
    };
    for (std::size_t j = static_cast<std::size_t>(rank); j < chunks.size(); j += static_cast<std::size_t>(parallel.pp)) {
      const ChunkLayers& c = chunks[j];
      MOFASIM_DCHECK(c.rank == rank, "chunk j runs on rank j % pp");
      for (int i = c.first_layer; i < c.first_layer + c.num_layers; ++i) add_layer(model.is_moe_layer(i) ? moe : dense);
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
    if (features.activation_offload.enabled) {  // MoFa(33) MoFa(34) MoFa(35): only the layers in flight stay
      const double kept = std::min(n * layers_stored, kOffloadLayersInFlight * largest_stored);
      st.offloaded_bytes = n * layers_stored - kept;
      st.working_bytes = kept + working;
      st.activation_bytes = n * extras + n_head * head_extras + st.working_bytes;
    } else {
      st.working_bytes = n > 0 ? working : 0;
      st.activation_bytes = n * (layers_stored + extras) + n_head * head_extras + st.working_bytes;
    }
    st.reserved_bytes = hw.memory_reserved_bytes;
    st.peak_bytes = st.static_bytes.total() + st.activation_bytes + st.reserved_bytes;  // MoFa(6)
    st.capacity_bytes = hw.gpu_memory_bytes;
    st.excess_bytes = std::max(0.0, st.peak_bytes - st.capacity_bytes);
    if (st.peak_bytes > (report.stages.empty() ? -1.0 : report.stages[static_cast<std::size_t>(report.worst_rank)].peak_bytes)) {
      report.worst_rank = rank;
    }
    report.stages.push_back(st);
  }
  return report;
}

void validate_memory_inputs(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                            std::span<const double> inflight) {
  validate_model(model);
  validate_parallel(model, parallel);
  validate_inflight(parallel, inflight);
  if (!(hw.gpu_memory_bytes > 0)) {
    throw std::invalid_argument("hardware.gpu_memory_bytes must be > 0, got " + std::to_string(hw.gpu_memory_bytes));
  }
}

}  // namespace

BytesPerParam bytes_per_param(const FeatureSpec& features) {
  BytesPerParam b;
  b.weight = dtype_bytes(features.param_dtype);
  b.grad = dtype_bytes(features.grad_dtype);
  b.master = features.master_weights && features.param_dtype != DType::kFp32 ? 4 : 0;
  b.moments = 2 * dtype_bytes(features.optimizer_state_dtype);
  return b;
}

double gpu_bytes_per_param(const FeatureSpec& features, int dp_shards) {
  if (dp_shards < 1) throw std::invalid_argument("dp_shards must be >= 1, got " + std::to_string(dp_shards));
  const BytesPerParam b = bytes_per_param(features);
  if (features.optimizer_placement == OptimizerPlacement::kCpu) return b.weight + b.grad;  // MoFa(27)
  const double shards = features.distributed_optimizer ? dp_shards : 1;                     // MoFa(25)
  return b.weight + b.grad + b.optimizer() / shards;
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

StaticMemory static_memory(const GpuParams& params, const FeatureSpec& features, const ShardGroups& shards) {
  if (shards.dense_dp < 1 || shards.expert_dp < 1) throw std::invalid_argument("ShardGroups: sizes must be >= 1");
  const BytesPerParam b = bytes_per_param(features);
  StaticMemory m;
  m.weights = params.total() * b.weight;  // MoFa(4)
  m.grads = params.total() * b.grad;
  const double shard_dense = features.distributed_optimizer ? shards.dense_dp : 1;
  const double shard_expert = features.distributed_optimizer ? shards.expert_dp : 1;
  const double optimizer = b.optimizer() * (params.dense() / shard_dense + params.expert / shard_expert);
  if (features.optimizer_placement == OptimizerPlacement::kCpu) {
    m.host_bytes = optimizer;  // MoFa(27)
  } else {
    m.optimizer_states = optimizer;
  }
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
  MemoryOpTotals t;
  if (!(model.is_moe() && model.moe.first_k_dense_layers == 0)) t.dense = ops_for_layer(model, parallel, 0).totals();
  if (model.is_moe()) t.moe = ops_for_layer(model, parallel, model.num_layers - 1).totals();
  t.embedding = ops_for_embedding(model, parallel).totals();
  t.head = ops_for_head(model, parallel).totals();
  if (model.mtp_depth > 0) t.mtp_projection = ops_for_mtp_projection(model, parallel).totals();
  return t;
}

MemoryReport memory_report(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                           const FeatureSpec& features, std::span<const double> inflight) {
  validate_memory_inputs(model, hw, parallel, inflight);
  return memory_report(model, hw, parallel, features, inflight, memory_op_totals(model, parallel));
}

MemoryReport memory_report(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                           const FeatureSpec& features, std::span<const double> inflight, const MemoryOpTotals& totals) {
  validate_memory_inputs(model, hw, parallel, inflight);
  if (features.memfine_chunks < 0) {
    throw std::invalid_argument("features.memfine_chunks must be >= 0, got " + std::to_string(features.memfine_chunks));
  }
  if (!features.memfine || !model.is_moe()) return report_with_chunks(model, hw, parallel, features, inflight, 0, totals);
  if (features.memfine_chunks > 0) {
    return report_with_chunks(model, hw, parallel, features, inflight, features.memfine_chunks, totals);
  }
  const std::optional<int> chunks = memfine_min_chunks(model, hw, parallel, features, inflight);
  return report_with_chunks(model, hw, parallel, features, inflight, chunks.value_or(kDefaultMaxMemfineChunks), totals);
}

std::optional<int> memfine_min_chunks(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                                      const FeatureSpec& features, std::span<const double> inflight, int max_chunks) {
  validate_memory_inputs(model, hw, parallel, inflight);
  if (max_chunks < 1) throw std::invalid_argument("max_chunks must be >= 1, got " + std::to_string(max_chunks));
  const MemoryOpTotals totals = memory_op_totals(model, parallel);
  if (!model.is_moe()) {
    if (report_with_chunks(model, hw, parallel, features, inflight, 0, totals).fits()) return 1;
    return std::nullopt;
  }
  // Peak memory falls monotonically with the chunk count: binary search would do, but the
  // linear scan is already cheap (a report is a handful of op tables) and simpler to read.
  for (int n = 1; n <= max_chunks; ++n) {
    if (report_with_chunks(model, hw, parallel, features, inflight, n, totals).fits()) return n;
  }
  return std::nullopt;
}

}  // namespace mofasim::model
