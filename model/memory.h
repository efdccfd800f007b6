// Memory per GPU (MoFa(4) MoFa(5) MoFa(6) MoFa(25) MoFa(26) MoFa(27) MoFa(28) MoFa(29) MoFa(30) MoFa(31) MoFa(32)
// MoFa(33) MoFa(34) MoFa(35)): static bytes (weights, gradients, optimizer state)
// from the parameters each pipeline rank holds, activation bytes from the op table's stored
// activations times the micro-batches in flight (supplied by the schedule), the effect of
// selective / full recompute, activation offload and MemFine, and the peak per stage against the
// device capacity: the allocated peak plus the CUDA context, the allocator's fragmentation and the
// framework's buffers (memory_reserve.h). Out of memory is a result (StageMemory::excess_bytes), not an error.
//
// Stored activations are the op table's (fused attention, no dropout: LLaMA-style accounting for
// every block, GPT/GeLU ones included); activation_reference.h has the Korthikanti/Megatron GPT
// accounting with dropout masks and s^2 score tensors for comparison.
// Recompute: selective keeps everything but what the recomputed core attention rebuilds (one
// layer's worth is live again during its backward); full keeps each layer's input and rebuilds one
// layer at a time. Activation offload keeps two layers of one micro-batch on the GPU and the rest
// in host memory. MemFine keeps the dispatched token copies of each MoE layer and rebuilds the
// expert intermediates in `chunks` pieces, so one chunk of one layer is live at a time.
#pragma once

#include <cstdint>

#include <optional>
#include <span>
#include <vector>

#include "model/op_table.h"
#include "model/params.h"
#include "model/spec.h"
#include "model/stage_layout.h"

namespace mofasim::model {

// Bytes per parameter by role (MoFa(4)), in Megatron's precision fields: weight (params_dtype),
// gradient (main_grads_dtype), master copy (main_params_dtype; only when master_weights and the
// weights are 16-bit), the optimizer's fp32 copy of its gradient shard (legacy fp16 gradients
// only), Adam m and v (exp_avg_dtype, exp_avg_sq_dtype). Megatron's table
// (reference-formulas.md §1.3): bf16 / fp32 grads 2 + 4 + 4 + 8 = 18; fp16 / fp16 grads
// 2 + 2 + 4 + 4 + 8 = 20; fp32 / fp32 4 + 4 + 8 = 16; DeepSeek-V3's bf16 moments 2 + 4 + 4 + 4 = 14.
struct BytesPerParam {
  double weight = 0;
  double grad = 0;
  double master = 0;
  double main_grad_copy = 0;
  double moments = 0;
  [[nodiscard]] double optimizer() const { return master + main_grad_copy + moments; }
  [[nodiscard]] double total() const { return weight + grad + optimizer(); }
};
BytesPerParam bytes_per_param(const FeatureSpec& features);

// Whether full recompute rebuilds the layer at position `position_in_chunk` (0-based) of its model
// chunk: every layer with recompute_method uniform, the first recompute_num_layers with block, the
// k-th, 2k-th, ... with every_nth (k = recompute_num_layers); false without full recompute. The memory model, the step plan and the analytic model ask this.
bool full_recompute_applies(const FeatureSpec& features, int position_in_chunk);

// The data-parallel sharding in effect: features.dp_sharding, at least kOptim with the
// distributed optimizer.
DpSharding dp_sharding(const FeatureSpec& features);
// InternEvo's broadcast sync applies (DpParamSync::kBroadcast with ZeRO-1 over the whole DP group,
// as the scenario loader allows it); otherwise the Megatron sync of dp_sharding runs.
bool zero_broadcast_sync(const FeatureSpec& features);

// GPU bytes per parameter when the optimizer state is sharded over `dp_shards` ranks: with the
// distributed optimizer (ZeRO-1) weight + grad + optimizer/d (MoFa(25) MoFa(26); 6 + 12/d for the
// default dtypes), ZeRO-2 weight + (grad + optimizer)/d, ZeRO-3 all of it /d, without sharding
// the full total; with the CPU optimizer only weight + grad (MoFa(27)). Transient unsharded
// buffers (StaticMemory::unsharded) are not in it.
// Throws std::invalid_argument when dp_shards < 1.
double gpu_bytes_per_param(const FeatureSpec& features, int dp_shards);

// Ranks the optimizer state of dense and of expert parameters is sharded over by the distributed
// optimizer: dense over dp*cp (Megatron's data-parallel-with-CP group), experts over the expert-DP
// group tp*cp*dp / (ep*etp).
struct ShardGroups {
  int dense_dp = 1;
  int expert_dp = 1;
  int instances = 1;  // HSDP: replicas of each shard group (FeatureSpec::dist_opt_instances)
};
ShardGroups optimizer_shard_groups(const ParallelSpec& parallel);
// The groups the sharded state really is split over: optimizer_shard_groups cut by HSDP's
// features.dist_opt_instances = N (Megatron's partial distributed optimizer), dense dp*cp/N and
// expert edp/N ranks, each shard group replicated N times. Memory and DP traffic use these; a
// checkpoint is still written by the whole DP group (checkpoint_shard.h).
// Throws std::invalid_argument when N < 1 or N does not divide both groups.
ShardGroups hsdp_shard_groups(const ParallelSpec& parallel, const FeatureSpec& features);

struct StaticMemory {
  double weights = 0;
  double grads = 0;
  double optimizer_states = 0;  // master + moments kept on the GPU
  double host_bytes = 0;        // optimizer state kept in host memory (CPU optimizer)
  // Full-size buffers of sharded state while they are in use: ZeRO-2 one gradient bucket
  // (FeatureSpec::dp_bucket_bytes) before its reduce-scatter; ZeRO-3 the parameters of two layers
  // (the one computing and the one prefetched, as FSDP does) and one layer's gradients. Filled by
  // memory_report (it needs the layers), 0 from static_memory.
  double unsharded = 0;
  // precision fp8 (FeatureSpec::fp8): Transformer Engine's FP8 copy of each weight and its
  // transpose (1 + 1 B per parameter; mxfp8 and blockwise add their scales: 2 x 1/32 and 2 x 4/128 B),
  // cached for the step. static_memory counts them over all TP-sharded and expert parameters;
  // memory_report leaves out the embedding and (unless fp8_output_layer) the head, which no FP8
  // GEMM reads.
  double fp8_weights = 0;
  // token_dispatcher_type flex: DeepEP's NVLink and RDMA buffers, allocated once per rank for the
  // dispatcher's ep*etp group (model/moe_deepep.h; 0 with the other dispatchers). Filled by
  // memory_report, 0 from static_memory.
  double deepep_buffers = 0;
  [[nodiscard]] double total() const {
    return weights + grads + optimizer_states + unsharded + fp8_weights + deepep_buffers;
  }
};
StaticMemory static_memory(const GpuParams& params, const FeatureSpec& features, const ShardGroups& shards);
// Bytes per parameter of StaticMemory::fp8_weights: 2, plus 2 x 1/32 (mxfp8) or 2 x 4/128 (blockwise).
double fp8_weight_bytes_per_param(Fp8Recipe recipe);

// One row of the report: a pipeline rank with everything it holds. Under DualPipe that is two
// model chunks (stage `rank` on lane 0 and its mirror p - 1 - rank on lane 1): both chunks'
// weights and both chunks' in-flight activations.
struct StageMemory {
  int rank = 0;
  GpuParams params;
  StaticMemory static_bytes;
  double activation_bytes = 0;  // kept for in-flight micro-batches, working set included
  double working_bytes = 0;     // the transient part of activation_bytes (recompute / MemFine / offload)
  // With EP-overlapped F&B pairs in the walked order: the largest forward pass of this rank (one
  // micro-batch through one chunk). The walk allocates a pair's forward before its backward
  // releases; the step simulation interleaves them and peaks lower by at most this. 0 otherwise.
  double pair_slack_bytes = 0;
  double offloaded_bytes = 0;   // activations held in host memory (activation offload)
  double allocated_bytes = 0;   // MoFa(6): static + activation, what max_memory_allocated measures
  double fragmentation_bytes = 0;  // reserved by the allocator beyond allocated_bytes (memory_reserve.h)
  double cuda_context_bytes = 0;   // HardwareSpec::cuda_context_bytes
  double reserved_bytes = 0;    // HardwareSpec::memory_reserved_bytes (NCCL, cuBLAS workspaces)
  // The reserved total the GPU must hold, what fit is judged on: allocated + fragmentation +
  // CUDA context + reserved (DeviceReserve::total).
  double peak_bytes = 0;
  double capacity_bytes = 0;    // HardwareSpec::gpu_memory_bytes
  double excess_bytes = 0;      // peak - capacity when it does not fit, else 0
  [[nodiscard]] bool fits() const { return excess_bytes <= 0; }
};

// One unit of a chunk (the embedding, a transformer layer, the head with the MTP modules), per
// micro-batch.
struct UnitMemory {
  double stored = 0;                // allocated by the forward, kept until its backward
  double working = 0;               // live in addition while its backward runs
  double kept_for_weight_grad = 0;  // what an input-gradient pass leaves until the weight-gradient pass
};

struct MemoryReport {
  std::vector<StageMemory> stages;  // one per pipeline rank
  // The last chunk's head unit (final norm, output head, loss and the MTP modules) as the walk
  // counts it: the step simulation allocates and frees its post-layer block by these numbers.
  UnitMemory head_unit;
  int worst_rank = 0;               // highest peak (first such rank)
  int memfine_chunks = 0;           // chunks used for MoE expert activations (0 = MemFine off)
  [[nodiscard]] bool fits() const;
  [[nodiscard]] double peak_bytes() const { return stages.empty() ? 0 : stages[static_cast<std::size_t>(worst_rank)].peak_bytes; }
};

// Micro-batches whose output-head and loss activations (logits, and each MTP module's projection
// and head) the last pipeline rank holds at its peak, given the rank's in-flight count. The head
// runs last in a micro-batch's forward, and every schedule but GPipe starts that micro-batch's
// backward on the same rank right after it (1F1B, interleaved, ZB-H1, DualPipe's last stage), so
// the logits of at most one micro-batch are live; GPipe holds all `stage_inflight` of them. Used by
// memory_report; the step simulation reaches the same count from its replay (a test compares them).
// Throws std::invalid_argument when stage_inflight < 0.
double head_microbatches_in_flight(ScheduleKind schedule, double stage_inflight);

// Micro-batches (in units of one whole stage's activation) each rank holds at the 1F1B peak:
// min(p - k, m) for rank k. The schedules module supplies these for other schedules.
std::vector<double> one_f_one_b_inflight(const ParallelSpec& parallel);

// The stored activation only a weight gradient reads: the inputs of the ops with weight-gradient
// FLOPs (`all`), and of them the part MemFine rebuilds chunk by chunk in the backward
// (`memfine_rebuilt`: the routed-expert ops' inputs but fc1's, which are the dispatched tokens
// MemFine keeps). An input-gradient pass leaves kept(memfine) live until the weight-gradient pass:
// the memory walk (kept_for_weight_grad) and the step simulation (which frees them at the
// weight-gradient pass, the rest at the input-gradient one) both count it with this one rule.
struct WeightGradInputs {
  double all = 0;
  double memfine_rebuilt = 0;
  [[nodiscard]] double kept(bool memfine) const { return memfine ? all - memfine_rebuilt : all; }
};
WeightGradInputs weight_grad_inputs(const LayerOps& ops);

// The op-table totals a report is built from, for a caller that holds the tables already (the
// analytic model): dense / moe are any dense / the last layer's ops_for_layer totals (layer tables
// differ only by is_moe_layer), then ops_for_embedding, ops_for_head and, with mtp_depth > 0,
// ops_for_mtp_projection. memory_op_totals builds them.
struct MemoryOpTotals {
  LayerTotals dense;           // unused when no layer is dense
  LayerTotals moe;             // the last layer's; unused for dense models
  LayerTotals embedding;
  LayerTotals head;
  LayerTotals mtp_projection;  // unused when mtp_depth == 0
  // weight_grad_inputs of each table: what a split backward (ZB-H1's and DualPipe's
  // input-gradient pass) leaves live until the weight-gradient pass.
  WeightGradInputs dense_weight_grad;
  WeightGradInputs moe_weight_grad;
  WeightGradInputs head_weight_grad;
  WeightGradInputs mtp_projection_weight_grad;
};

// A rank's passes in the order its pipeline schedule runs them (schedules::rank_orders builds
// them): `chunks` are the model chunks the rank runs (chunk_layers entries: the one with .chunk 0
// holds the embedding, the last one the head), `passes` index them. With these the report walks
// the order pass by pass (memory_walk.h) instead of multiplying an in-flight count: a DualPipe
// rank's two chunks of different size, the weight-gradient inputs a split backward keeps, and the
// recompute working set at the moment it is live are then counted as the step simulation counts them.
struct RankPass {
  Phase phase = Phase::kForward;
  int chunk = 0;                  // index into RankOrder::chunks
  bool paired_with_next = false;  // runs interleaved with the next pass (an EP-overlapped F&B pair)
};
struct RankOrder {
  std::vector<ChunkLayers> chunks;
  std::vector<RankPass> passes;
  // Nonzero for an order that never changes once built (schedules::shared_rank_orders gives each a
  // number of its own): the walk may remember its peaks per chunk contents (memory_walk.h).
  std::uint64_t id = 0;
};
MemoryOpTotals memory_op_totals(const ModelSpec& model, const ParallelSpec& parallel);
// The same with the layer tables set for features.recompute_modules (recompute_modules.h).
MemoryOpTotals memory_op_totals(const ModelSpec& model, const ParallelSpec& parallel, const FeatureSpec& features);

// The full report. `inflight` has one entry per pipeline rank (>= 0). With features.memfine and
// memfine_chunks == 0 the smallest chunk count that fits is chosen (64 when none does).
// `orders` (one per rank, or empty): the schedule's pass order; given, activation memory is the
// peak of the pass-by-pass walk (except with activation offload, whose copies overlap by timing:
// the in-flight formula below), and `inflight` only checks the shape. Empty: MoFa(5)'s closed form,
// `inflight` stage activations of the rank's own layers.
// Throws std::invalid_argument on invalid specs or a wrong-sized `inflight` or `orders`.
MemoryReport memory_report(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                           const FeatureSpec& features, std::span<const double> inflight,
                           std::span<const RankOrder> orders = {});
// The same from prebuilt totals (memory_op_totals(model, parallel) or the same tables).
MemoryReport memory_report(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                           const FeatureSpec& features, std::span<const double> inflight, const MemoryOpTotals& totals,
                           std::span<const RankOrder> orders = {});

// MemFine: the smallest chunk count in [1, max_chunks] for which every stage fits, or nullopt.
// Dense models (no routed experts) need 1 chunk if they fit at all.
std::optional<int> memfine_min_chunks(const ModelSpec& model, const HardwareSpec& hw, const ParallelSpec& parallel,
                                      const FeatureSpec& features, std::span<const double> inflight,
                                      int max_chunks = 64, std::span<const RankOrder> orders = {});

}  // namespace mofasim::model
