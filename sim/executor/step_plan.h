// StepPlan: what the workload generator needs to know about the model on this cluster, per layer
// and per pipeline stage, already priced by model/ (op seconds from its compute-time model,
// communication volumes and activation bytes from its per-op table, static memory and optimizer
// cost from its memory model). The generator only arranges these into a DAG; it computes no cost.
//
// A layer's pass (forward, input-gradient, weight-gradient) is a program: an ordered list of
// compute ops and communication ops, as the framework issues them for ONE micro-batch on ONE GPU.
// Flags mark the ops a MoFa feature transforms (TP-overlap GEMMs, the attention core that CP ring
// attention splits, expert compute that load imbalance stretches and MemFine chunks, the ops that
// selective recompute re-runs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/memory.h"
#include "sim/executor/task.h"

namespace mofasim::executor {

enum PlanFlag : std::uint8_t {
  kFlagNone = 0,
  kFlagTpOverlappable = 1,   // GEMM next to a TP collective: split and pipelined with it (MoFa(20))
  kFlagAttentionCore = 2,    // attention core: split into c ring steps under CP (MoFa(21))
  kFlagExpert = 4,           // routed-expert compute: x load imbalance; MemFine chunks it
  kFlagSelectiveRecompute = 8,  // re-run before the backward under selective recompute (MoFa(29) MoFa(30)),
                                // a collective inside the re-run part included
};

struct PlanOp {
  std::string name;
  bool is_comm = false;
  // compute
  double seconds = 0;  // uncontended device time of this op for one micro-batch (model/)
  double flops = 0;    // FLOPs it executes
  // forward ops selective recompute re-runs (kFlagSelectiveRecompute): the part it re-runs
  // (model/recompute_modules.h: all of the op, or the MLA up-projections of the QKV op)
  double recompute_seconds = 0;
  double recompute_flops = 0;
  // communication
  Scope scope = Scope::kTp;  // kTp, kCp or kEp
  std::optional<CollectiveKind> collective{};  // a CP block exchange is a kRingStep
  double bytes = 0;          // buffer bytes per member (all-reduce/gather input, a2a send, CP block)
  std::uint8_t flags = kFlagNone;
};

struct PassPlan {
  std::vector<PlanOp> ops{};
};

struct LayerPlan {
  PassPlan forward{};
  PassPlan input_grad{};   // activation gradient (ZB "B")
  PassPlan weight_grad{};  // weight gradient (ZB "W"); no communication
  // Stored activation of one micro-batch on this GPU between its forward and its backward, by
  // recompute mode (model/'s memory model): none, selective, full (the layer input only).
  double activation_bytes = 0;
  bool full_recompute = true;  // full recompute rebuilds this layer (false: recompute_method block leaves it out)
  double activation_bytes_selective = 0;
  double activation_bytes_full = 0;
  // Part of the stored activation that only the weight gradient reads (GEMM inputs): kept until W,
  // kept(memfine) of them (model::weight_grad_inputs, the memory model's rule).
  model::WeightGradInputs weight_grad_inputs{};
  // Live in addition during the backward of the head block (the MTP modules' rebuilt working set;
  // model::MemoryReport::head_unit); 0 for transformer layers, whose recompute allocates its own.
  double backward_working_bytes = 0;
  // Routed-expert activation inside activation_bytes (what MemFine chunks).
  double expert_activation_bytes = 0;
  // Gradient bytes this layer contributes to the dense and expert DP reductions (per GPU).
  double dense_grad_bytes = 0;
  double expert_grad_bytes = 0;
  // ZeRO-3 / FSDP: parameter bytes all-gathered (DP, expert DP) before each forward and backward
  // of this layer (model::PlanBlock::fsdp_gather_bytes); 0 otherwise.
  double fsdp_gather_bytes = 0;
  double fsdp_expert_gather_bytes = 0;
};

// Per pipeline rank (stage): static memory and optimizer costs (model/'s memory model).
struct StagePlan {
  double static_bytes = 0;          // weights + grads + optimizer state on one GPU (MoFa(4) MoFa(25) MoFa(27))
  double expected_peak_activation_bytes = 0;  // model/'s M_act(k) for this stage, for the check
  double optimizer_gpu_seconds = 0;           // GPU update (MoFa(13) MoFa(26))
  double optimizer_cpu_seconds = 0;           // CPU update (MoFa(28))
  double grad_d2h_bytes = 0;                  // CPU optimizer: gradients to host (MoFa(28))
  double param_h2d_bytes = 0;                 // CPU optimizer: updated parameters back (MoFa(28))
  double param_gather_bytes = 0;              // distributed optimizer: dense params all-gathered (DP)
  double expert_param_gather_bytes = 0;       // distributed optimizer: expert params all-gathered (expert DP)
  // DpParamSync::kBroadcast: the parameters go out as this many broadcasts (one per owner rank,
  // model::RankDp) instead of one all-gather; 0 = all-gather.
  int param_broadcasts = 0;
  int expert_param_broadcasts = 0;
  double extra_grad_bytes = 0;                // embedding / head gradients (dense DP)
  // HSDP: the fraction of each reduce-scattered bucket this GPU then all-reduces across the
  // replicas of its shard group (1 / shard group size, model::RankDp::*_replica_bytes); 0 otherwise.
  double dense_replica_share = 0;
  double expert_replica_share = 0;
};

struct StepPlan {
  std::vector<LayerPlan> layers{};       // one per transformer layer, index = layer id
  std::optional<LayerPlan> pre{};        // embedding, on the first virtual stage
  std::optional<LayerPlan> post{};       // final norm, head and loss, on the last virtual stage
  std::vector<StagePlan> stages{};       // one per pipeline rank
  double pp_bytes = 0;                 // activation (and its gradient) sent per micro-batch per rank
  double model_flops_per_step = 0;     // MFU numerator for the whole cluster (MoFa(15))
  double hardware_flops_per_step = 0;  // HFU numerator (adds recompute)
  double tokens_per_step = 0;
};

}  // namespace mofasim::executor
