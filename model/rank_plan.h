// The priced per-rank plan: what each pipeline rank of one step holds and does, worked out ONCE
// from the specs, which both step models consume (the closed form, model/analytic_model.h, and the
// step simulation's DAG generator, sim/executor/plan_from_model.h):
//   * the op table of each block type (dense layer, MoE layer, embedding, head + loss, MTP
//     projection), every collective of it with its bytes and group and, when the plan is priced
//     on a topology, its α–β cost; per op the compute seconds at the specs' rates when asked;
//   * per rank, the chunks it runs in the schedule's local order: Megatron's virtual stages, or
//     DualPipe's two lanes (stage r holds chunk r and the mirror chunk p-1-r, each a parameter
//     copy of its own, model::parameter_chunks);
//   * per rank, its DP traffic per group (dense DP and expert DP: gradient all-reduce or
//     reduce-scatter, the distributed optimizer's parameter all-gather, expert all-gather
//     included) with bytes and, priced, α–β cost in dp_bucket_bytes buckets; and its optimizer
//     work (parameters updated, HBM bytes of the GPU update, D2H/H2D bytes of the CPU update);
//   * the pipeline hop (bytes, and the slowest hop's cost), the memory report and the step's FLOPs.
// The plan is a value: consumers read it and never work these out themselves.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/memory.h"
#include "model/op_table.h"
#include "model/spec.h"
#include "topology/rank_order.h"
#include "topology/topology_spec.h"

namespace mofasim::schedules {
class Schedule;
}

namespace mofasim::model {

// α–β cost of one collective running alone: seconds at μ_b = 1 = latency + bandwidth.
struct CommCost {
  double latency = 0;    // seconds, not scaled by μ_b
  double bandwidth = 0;  // seconds at μ_b = 1
};
// MoFa(18): the bandwidth term divided by μ_b.
inline double comm_seconds(const CommCost& c, double inv_mub) { return c.latency + c.bandwidth * inv_mub; }
inline CommCost operator+(CommCost a, CommCost b) { return {a.latency + b.latency, a.bandwidth + b.bandwidth}; }

inline constexpr int kPhaseCount = schedules::kOpCostPhaseCount;  // forward, input gradient, weight gradient

// One block type: its op table and what its collectives and ops cost.
struct PlanBlock {
  LayerOps ops;
  std::array<CommCost, kMaxComms> comm{};  // per ops.comms() entry; zero when the plan is unpriced
  // Per ops.comms() entry: the fraction of its bytes that runs hidden under the comm it is
  // pipelined with (DeepEP's shorter hop but its last chunk, CommOp::pipeline_chunks); `comm`
  // prices the rest. 0 for every other comm and in an unpriced plan.
  std::array<double, kMaxComms> comm_hidden{};
  // [phase][op] seconds at the specs' rates (MoFa(1) MoFa(17) MoFa(19)); filled with
  // RankPlanInput::simulation_detail (the closed form re-prices per rate knob set instead).
  std::array<std::array<double, kMaxOps>, kPhaseCount> op_seconds{};
  // Parameters of the block on one GPU, by the DP group that reduces their gradients (dense DP,
  // expert DP): they fill the gradient buckets (GradientBuckets).
  double dense_params = 0;
  double expert_params = 0;
  // ZeRO-3 / FSDP (DpSharding::kOptimGradsParams): the block's parameters all-gathered before each
  // forward and again before each backward of every micro-batch (one FSDP unit per transformer
  // layer), dense over the dense DP group and routed experts over the expert-DP group; 0 otherwise
  // and for the embedding and head. Bytes per GPU (its weight shard times the group), and priced.
  double fsdp_gather_bytes = 0;
  double fsdp_expert_gather_bytes = 0;
  CommCost fsdp_gather;
  bool present = false;      // the model has a block of this type
};

// One chunk a rank runs (and holds the parameters of).
struct PlanChunk {
  int chunk = 0;        // in pipeline order, 0 .. p*vpp-1 (model::chunk_layers)
  int first_layer = 0;
  int num_layers = 0;
  int dense_layers = 0;
  int moe_layers = 0;
  int dense_kept = 0;      // of them, layers full recompute leaves out (recompute_method block)
  int moe_kept = 0;
  // With RankPlan::window_mixed, of each count above, the layers that attend over the window
  // (the rest attend over the full sequence); 0 otherwise. 16 bits each (a chunk holds at most
  // 10,000 layers): the four compare as one word.
  struct Windowed {
    std::uint16_t dense = 0;
    std::uint16_t moe = 0;
    std::uint16_t dense_kept = 0;
    std::uint16_t moe_kept = 0;
    bool operator==(const Windowed&) const = default;
  } windowed{};
  bool embedding = false;  // chunk 0
  bool head = false;       // the last chunk: head + loss (and the MTP modules)
};

// Megatron DDP's gradient buckets: the gradients of whole blocks (a transformer layer, the
// embedding, the head) join the open bucket in the order the backward finishes them, and the
// bucket closes once it holds `cap` bytes or more (cap <= 0: a single bucket). A block is never
// split, so a layer larger than the cap is a bucket of its own. The plan counts a rank's buckets
// with it (each bucket pays its collective's α in the closed form) and the DAG generator emits one
// reduction per bucket with it, so both step models charge the same number of α.
class GradientBuckets {
 public:
  explicit GradientBuckets(double cap) : cap_(cap) {}
  // Adds one block's gradient bytes; true when they close the open bucket.
  bool add(double bytes) {
    open_ += bytes;
    if (cap_ <= 0 || open_ < cap_) return false;
    open_ = 0;
    ++closed_;
    return true;
  }
  // Bytes that ride in the last bucket without closing it (the open one, or a new one).
  void add_to_last(double bytes) { open_ += bytes; }
  [[nodiscard]] int count() const { return closed_ + (open_ > 0 ? 1 : 0); }

 private:
  double cap_;
  double open_ = 0;
  int closed_ = 0;
};

// One pipeline rank's DP reduction and optimizer update (MoFa(13) MoFa(24) MoFa(25) MoFa(26)
// MoFa(27) MoFa(28)), per group: dense over DP (dp*cp with CP), experts over expert DP; under HSDP
// over their shard groups, plus the all-reduce across the replicas.
struct RankDp {
  double dense_grad_bytes = 0;   // gradients the dense group reduces (all-reduce, or reduce-scatter)
  double expert_grad_bytes = 0;
  // HSDP (FeatureSpec::dist_opt_instances > 1): after the reduce-scatter within the shard group,
  // this GPU's gradient shard (grad bytes / shard group size) all-reduced across the replicas
  // (Megatron's inter-instance all-reduce, param_and_grad_buffer.py); 0 otherwise.
  double dense_replica_bytes = 0;
  double expert_replica_bytes = 0;
  // distributed optimizer (ZeRO-1/2): parameters all-gathered after the update (group > 1), else 0;
  // 0 under ZeRO-3, whose parameters stay sharded and are gathered per layer (PlanBlock::fsdp_*)
  double dense_param_bytes = 0;
  double expert_param_bytes = 0;
  int dense_grad_buckets = 0;    // GradientBuckets over the rank's blocks in backward order
  int expert_grad_buckets = 0;
  int param_gathers = 0;         // all-gathers of each group's parameters (see build_rank_plan)
  // DpParamSync::kBroadcast: the broadcasts of each group's parameters, one per owner rank
  // (model/zero_broadcast.h); 0 otherwise.
  int dense_param_broadcasts = 0;
  int expert_param_broadcasts = 0;
  CommCost grad;                 // priced: dense + expert gradient reduction (and HSDP's replica all-reduce), α per bucket
  CommCost params;               // priced: dense + expert parameter all-gather, α per gather
  double updated_params = 0;     // parameters whose optimizer state this GPU updates (1/d sharded)
  // HBM bytes of the GPU optimizer step (MoFa(13) MoFa(26)), the sum of the kernels Megatron runs
  // each step (priced as one memory-bound pass by both step models):
  double adam_bytes = 0;         //   multi-tensor Adam on this GPU's shard + the main -> model param copy
  double clip_norm_bytes = 0;    //   the gradient-clipping norm pass (multi_tensor_l2norm) over the shard
  double zero_grad_bytes = 0;    //   zeroing the whole local gradient buffer before the next step
  double update_bytes = 0;       //   adam_bytes + clip_norm_bytes + zero_grad_bytes
  double d2h_bytes = 0;          // CPU optimizer: gradients to host (MoFa(28))
  double h2d_bytes = 0;          // CPU optimizer: updated parameters back
  double gpu_update_seconds = 0;  // at the specs' rates, with RankPlanInput::simulation_detail
};

struct RankPlanInput {
  const ModelSpec* model = nullptr;
  const HardwareSpec* hardware = nullptr;
  ParallelSpec parallel{};
  FeatureSpec features{};
  // Prices every collective on rank 0's groups when given (the closed form); the step simulation
  // replays them on the whole cluster instead.
  const topology::TopologySpec* topology = nullptr;
  topology::RankOrder rank_order{};
  // The step's schedule when the caller built one already: its in-flight micro-batches size the
  // memory report, its order DualPipe's overlapped pairs. Without it the plan asks the schedules
  // module for the same (schedules::stage_inflight_microbatches, build_schedule on step_shape).
  const schedules::Schedule* schedule = nullptr;
  // Fill what only the step simulation reads: PlanBlock::op_seconds, RankDp::gpu_update_seconds. The closed form re-prices per knob set instead, and
  // its prepare path (the tuner's) stays free of the per-layer parameter walk.
  bool simulation_detail = false;
};

struct RankPlan {
  int p = 1;  // pipeline ranks
  int v = 1;  // chunks per rank (vpp; 2 for DualPipe's lanes)
  int m = 1;  // micro-batches
  PlanBlock dense;
  PlanBlock moe;
  PlanBlock embedding;
  PlanBlock head;
  PlanBlock mtp_projection;  // present with mtp_depth > 0
  // Sliding-window attention where some chunk holds another mix of windowed and full layers than
  // the model's (model::window_mix_differs): the dense and MoE blocks priced per attention span,
  // [kFullSpan] over the full causal sequence, [kWindowSpan] over the window; both step models
  // then cost each layer by its own span (the chunks count their windowed layers). `dense` and
  // `moe` keep the model's mean span for everything a layer's span does not change (parameters,
  // memory, the MTP modules).
  // Held on the heap: a PlanBlock is 12 KB, and the tuner's path builds a plan per candidate.
  static constexpr int kFullSpan = 0;
  static constexpr int kWindowSpan = 1;
  struct SpanBlocks {
    std::array<PlanBlock, 2> dense;
    std::array<PlanBlock, 2> moe;
  };
  std::shared_ptr<const SpanBlocks> spans;  // null when every chunk holds the model's mix
  [[nodiscard]] bool window_mixed() const { return spans != nullptr; }
  double pp_bytes = 0;       // activation (and gradient) sent per micro-batch across a stage boundary
  CommCost pp_hop;           // priced: the slowest boundary between consecutive virtual stages
  std::vector<PlanChunk> chunks;    // [rank * v + local chunk]
  // Per rank, the share of its passes DualPipe's order runs as overlapped F&B pairs (MoFa(22)
  // credits only those); 1 for every other schedule or without EP overlap.
  std::vector<double> pair_share;
  std::vector<RankDp> dp;           // per rank
  MemoryReport memory;              // MoFa(4) MoFa(5) MoFa(6) with the schedule's in-flight counts
  double model_flops = 0;           // per step, whole cluster (MoFa(15))
  double hardware_flops = 0;        // recompute included
  double tokens = 0;
  bool priced = false;              // collectives carry α–β costs

  [[nodiscard]] const PlanChunk& chunk(int rank, int local) const {
    return chunks[static_cast<std::size_t>(rank * v + local)];
  }
  // The block of transformer layer `layer`'s type.
  [[nodiscard]] const PlanBlock& layer_block(const ModelSpec& model, int layer) const {
    return model.is_moe_layer(layer) ? moe : dense;
  }
  // The block that prices layer `layer`'s work: its span's under window_mixed, else layer_block.
  [[nodiscard]] const PlanBlock& layer_work_block(const ModelSpec& model, int layer) const;
};

// Builds the plan. Expects specs the caller validated (the closed form and the scenario seal do);
// throws std::invalid_argument from the cost functions it calls on specs they refuse.
RankPlan build_rank_plan(const RankPlanInput& input);

}  // namespace mofasim::model
