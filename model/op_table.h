// The per-op cost table: THE interface between the architecture and everything that times a step.
// For one transformer layer (or the embedding, the head + loss, an MTP projection) and ONE
// micro-batch on ONE GPU, after TP / CP / EP / ETP sharding, it lists each op of MoFa Table 2 with
//   * FLOPs and HBM bytes for forward, backward input-grad (B) and backward weight-grad (W; split
//     for ZeroBubble-style schedules),
//   * its op class (which efficiency the compute-time model applies),
//   * the activation bytes its forward keeps for its backward, and which part selective recompute
//     drops,
// plus the collectives the layer needs (TP, CP, EP; PP boundaries via pp_boundary_comm()).
// Both the step-simulation workload generator and the analytic MoFa model consume it.
//
// Conventions (all per GPU, per micro-batch of b sequences):
//   T   = b*s/c tokens of the CP shard the GPU computes attention and TP GEMMs for;
//   T_sp = T/t with sequence parallelism (norms, stored layer inputs), else T;
//   T_g = T/t tokens each GPU dispatches to routed experts (Megatron requires SP for MoE with TP).
//   GEMM M x K times K x N costs 2*M*N*K FLOPs in each of forward, B and W; HBM bytes are
//   2*(MK + KN + MN) (bf16 operands) per phase. Attention is fused (flash): QK^T and PV count
//   causal-halved FLOPs over all s keys (ring attention across CP), backward 2x forward, all in B;
//   softmax is fused into them (no HBM traffic) and keeps fp32 log-sum-exp statistics (4 B per
//   head and token); no s^2 tensor is stored. Elementwise ops carry HBM bytes and no FLOPs
//   (Megatron's model FLOPs do not count them); OpCost::model_flops marks the ops Megatron counts.
//   ModelSpec::attention_impl == kUnfused instead costs Megatron's non-flash path: QK^T and PV as
//   batched GEMMs over the full s x s scores (no causal halving) that write / read the scores in
//   HBM, and the softmax (plus attention dropout when ModelSpec::attention_dropout > 0) as
//   memory-bound passes over them, storing the s^2 tensors for the backward (see op_table.cc).
//   Stored activations follow the LLaMA-style accounting (reference-formulas.md §2.5): per token
//   12h + 4h*g/a + 6f bytes for a dense SwiGLU/GQA layer without TP, plus the softmax statistics.
//   Each tensor is charged to the op whose backward reads it (a norm keeps its input, a GEMM its
//   input, SwiGLU its gate/up outputs); a tensor shared by several ops is charged once.
//   MoE: routed experts are costed for the most-loaded EP rank: each of its E/ep local experts gets
//   M_e = ep*etp*T_g*k*imbalance/E tokens at width f_e/etp (a small-gemm when M_e < 2048).
//   NOTE: MoE layers with t > 1 assume sequence parallelism (Megatron requires it): each TP rank
//   dispatches its T/t tokens; without SP the table omits the gather that would re-replicate them.
//   Selective recompute (Megatron: core attention) re-runs QK^T, softmax and PV; with flash
//   attention it drops only the softmax statistics (the s^2 terms of a non-fused kernel are not
//   stored at all; see activation_reference.h for GPT/Korthikanti accounting).
//
// Cost: no heap allocation; one call is a few hundred floating-point operations.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "model/spec.h"
#include "schedules/phase.h"
#include "topology/collective_kind.h"

namespace mofasim::model {

// The pass phase an op cost or a collective belongs to (schedules/phase.h): forward, input
// gradient or weight gradient; kBackward is the sum of the last two.
using schedules::Phase;
// The kind of each collective a layer issues (topology/collective_kind.h).
using topology::CollectiveKind;

enum class OpKind {
  kEmbedding,
  kInputNorm,
  kQkvProjection,     // Q/K/V (MLA: down/up projections and latent norms)
  kAttentionMap,      // QK^T
  kSoftmax,
  kAttentionValue,    // PV
  kOutputProjection,
  kPostAttentionNorm,
  kRouter,
  kMlpLinear1,        // dense FFN fc1 (gate + up for SwiGLU)
  kMlpActivation,
  kMlpLinear2,
  kSharedLinear1,     // shared experts of an MoE layer
  kSharedActivation,
  kSharedLinear2,
  kExpertLinear1,     // routed experts, grouped over the GPU's local experts
  kExpertActivation,
  kExpertLinear2,
  kExpertCombine,     // weighted sum of the k expert outputs
  kMtpProjection,     // MTP: the two norms and the eh projection
  kFinalNorm,
  kHead,
  kLoss,
  // Kernels of a Transformer Engine (or older eager) stack beyond MoFa Table 2 (KernelStack).
  kRope,               // rotary embedding of q and k
  kAttentionResidual,  // bias-dropout-add after the attention block
  kMlpResidual,        // bias-dropout-add after the MLP / MoE block
  kMoePermute,         // token sort and the gather of each token's k copies into expert order
  kQkNorm,             // ModelSpec::qk_layernorm: the norm of every query and key head
};
const char* op_name(OpKind op);

// True for the ops Transformer Engine runs as FP8-capable linear layers (see Fp8Gemm).
bool is_fp8_linear(OpKind op);

enum class OpClass { kGemm, kAttention, kElementwise, kSmallGemm };

// The shape of the kernel behind one op phase, for ComputeModelKind::kKernel (the other models use
// only FLOPs and bytes). kGemm: `groups` GEMMs of m x n output with reduction k (2*m*n*k*groups =
// the phase's FLOPs); kAttention: a causal flash-attention pass of `seq` queries and keys per call
// and q/k head dim `head_dim`, forward or backward; `flash1`: FlashAttention-1's kernel
// (ModelSpec::attention_impl kFlash1) instead of the family's default fused kernel.
enum class KernelKind { kNone, kGemm, kAttention };
struct KernelShape {
  KernelKind kind = KernelKind::kNone;
  double m = 0;
  double n = 0;
  double k = 0;
  int groups = 0;
  double seq = 0;
  double head_dim = 0;
  double head_batches = 0;  // attention: query heads x batch of one kernel call (0: unknown)
  bool backward = false;
  bool flash1 = false;
};

// Which GEMM of a Transformer Engine linear layer a phase is (FeatureSpec::fp8 decides whether it
// runs in FP8): the forward (fprop), input gradient (dgrad) or weight gradient (wgrad) of QKV, the
// output projection, MLP / shared / routed-expert fc1 and fc2 and the MTP projection. The output
// head is kHead* (BF16 unless Fp8Spec::output_layer); attention, router and the rest are kNone.
enum class Fp8Gemm { kNone, kFprop, kDgrad, kWgrad, kHeadFprop, kHeadDgrad, kHeadWgrad };

struct PhaseCost {
  double flops = 0;
  double hbm_bytes = 0;
  KernelShape shape{};  // not summed: a sum of phases has no single kernel shape
  Fp8Gemm fp8 = Fp8Gemm::kNone;  // not summed either
  friend PhaseCost operator+(PhaseCost x, PhaseCost y) { return {x.flops + y.flops, x.hbm_bytes + y.hbm_bytes}; }
};

// One GEMM instance: (m x k) times (k x n); `instances` of them (local experts), 0 for non-GEMMs.
struct GemmShape {
  double m = 0;
  double n = 0;
  double k = 0;
  int instances = 0;
};

struct OpCost {
  OpKind op = OpKind::kEmbedding;
  OpClass op_class = OpClass::kElementwise;
  PhaseCost forward;
  PhaseCost backward_input;
  PhaseCost backward_weight;
  GemmShape gemm;
  double activation_bytes = 0;          // kept from forward for backward (one micro-batch)
  double selective_dropped_bytes = 0;   // part of activation_bytes selective recompute does not keep
  // Part of activation_bytes that is the bf16 input of an FP8-capable linear (is_fp8_linear, or the
  // head): under precision fp8 with FP8 wgrad, Transformer Engine keeps that input as FP8 for the
  // weight gradient instead (with_activation_storage, recompute_modules.h).
  double fp8_linear_input_bytes = 0;
  bool recomputed_by_selective = false; // forward re-run during backward under selective recompute
  double selective_recompute_fraction = 1;  // part of the forward selective recompute re-runs (recompute_modules.h)
  bool model_flops = true;              // counted in Megatron's model FLOPs (router: no)
  bool routed_expert = false;           // part of the routed-expert block (MemFine chunks these)

  [[nodiscard]] PhaseCost phase(Phase p) const {
    switch (p) {
      case Phase::kForward: return forward;
      case Phase::kInputGrad: return backward_input;
      case Phase::kWeightGrad: return backward_weight;
      case Phase::kBackward: break;
    }
    return backward_input + backward_weight;
  }
};

// Which of a layer's communicators a collective runs on, as the op table sees one GPU: tp, cp, ep,
// the expert-TP group of the expert layout (etp), the etp*ep group the allgather dispatcher gathers
// over (etp_ep, Megatron's tp_ep group), or the pipeline neighbour (pp). Not a placement group
// (topology::GroupKind, the cluster's rank sets, where DP lives) nor a communicator object
// (topology::CommGroup): the rank plan maps each onto rank 0's groups (rank_plan_groups.h).
enum class LayerGroup { kTp, kCp, kEp, kEtp, kEtpEp, kPp };
// snake_case, as op and task names spell them ("tp_all_reduce"); topology::collective_kind_name
// spells a kind for messages.
const char* collective_name(CollectiveKind c);
const char* layer_group_name(LayerGroup g);

// One collective (or a repeated P2P step) a layer issues on this GPU.
struct CommOp {
  CollectiveKind collective = CollectiveKind::kAllReduce;  // a CP ring lists kSendRecv steps
  LayerGroup group = LayerGroup::kTp;
  int group_size = 1;
  Phase phase = Phase::kForward;
  OpKind op = OpKind::kQkvProjection;  // the op it is attached to
  bool before_op = false;              // runs before `op` in that phase (else after it)
  double bytes = 0;       // payload S per rank per call, nccl-tests convention (whole AG/RS buffer)
  double wire_bytes = 0;  // bytes this rank sends per call: AR 2(n-1)/n*S, AG/RS/A2A (n-1)/n*S, P2P S
  int count = 1;          // calls (CP ring: c-1 steps)
  // DeepEP's two hops run at once, pipelined over chunks (model/moe_deepep.h): the second hop names
  // the first by its index in LayerOps::comms() and carries the chunk count (> 0); the rank plan
  // hides the shorter of the two. -1 and 0 for every other comm, the first hop included.
  int pipelined_with = -1;
  double pipeline_chunks = 0;
  // A forward collective inside a part selective recompute re-runs (recompute_modules.h): it runs
  // again, with that part, before the layer's backward.
  bool recomputed_by_selective = false;
};

// Sums over a LayerOps, kept up to date by add().
struct LayerTotals {
  PhaseCost forward;
  PhaseCost backward_input;
  PhaseCost backward_weight;
  double model_flops = 0;                // forward FLOPs of model_flops ops (fwd+bwd = 3x this)
  double activation_bytes = 0;
  double selective_dropped_bytes = 0;
  PhaseCost selective_recompute;         // forward cost re-run under selective recompute
  double routed_activation_bytes = 0;    // activation of the routed-expert ops
  double routed_input_bytes = 0;         // the dispatched token copies among them (MemFine keeps these)
  double input_bytes = 0;                // the block's input (all full recompute keeps)
  double comm_wire_bytes = 0;            // sum of wire_bytes * count over comms
};

inline constexpr int kMaxOps = 24;
inline constexpr int kMaxComms = 24;

// A fixed-capacity op list (no heap allocation), with its running totals.
class LayerOps {
 public:
  void add(const OpCost& op);
  void add(const CommOp& comm);
  void set_input_bytes(double bytes) { totals_.input_bytes = bytes; }

  [[nodiscard]] std::span<const OpCost> ops() const { return {ops_.data(), static_cast<std::size_t>(num_ops_)}; }
  [[nodiscard]] std::span<const CommOp> comms() const { return {comms_.data(), static_cast<std::size_t>(num_comms_)}; }
  [[nodiscard]] const LayerTotals& totals() const { return totals_; }

 private:
  std::array<OpCost, kMaxOps> ops_{};
  std::array<CommOp, kMaxComms> comms_{};
  int num_ops_ = 0;
  int num_comms_ = 0;
  LayerTotals totals_;
};

// Appends one collective: payload S = bytes (nccl-tests convention), `wire` bytes this rank sends
// per call, `count` calls, pipelined with comm `pipelined_with` over `pipeline_chunks` chunks
// (CommOp). Nothing for a group of one, no calls or an empty payload. Returns the comm's index in
// ops.comms(), or -1 when nothing was appended.
int add_comm_op(LayerOps& ops, CollectiveKind kind, LayerGroup group, int n, Phase phase, OpKind op, bool before,
                double bytes, double wire, int count = 1, int pipelined_with = -1, double pipeline_chunks = 0);

// Which window share a layer's fused attention scores (model/attention_window.h): the model's
// mean over its layers (one table per block type, exact for any set of layers holding the model's
// mix), or the layer's own (full causal, or windowed).
enum class AttentionSpan : std::uint8_t { kModelMean, kLayer };

// Transformer layer `layer` (dense or MoE by ModelSpec::is_moe_layer). MTP modules use the layer
// type of the last layer: ops_for_layer(model, parallel, model.num_layers - 1).
// Throws std::invalid_argument on an invalid spec or layer index.
LayerOps ops_for_layer(const ModelSpec& model, const ParallelSpec& parallel, int layer,
                       AttentionSpan span = AttentionSpan::kModelMean);

// Embedding lookup (+ learned positions) on the first pipeline stage; keeps the int64 token ids.
LayerOps ops_for_embedding(const ModelSpec& model, const ParallelSpec& parallel);

// Final norm, output head (vocab-parallel GEMM) and cross-entropy loss on the last stage.
// An MTP module has its own head: count this once more per MTP module.
LayerOps ops_for_head(const ModelSpec& model, const ParallelSpec& parallel);

// An MTP module's own part: the norms of hidden state and embedding and the eh projection (2h -> h).
// The module's transformer layer and head are ops_for_layer(last layer) and ops_for_head().
LayerOps ops_for_mtp_projection(const ModelSpec& model, const ParallelSpec& parallel);

// Pipeline p2p per stage boundary and micro-batch: forward activation and backward gradient,
// 2*T*h bytes each (divided by t with sequence parallelism). Empty when pp == 1.
LayerOps pp_boundary_comm(const ModelSpec& model, const ParallelSpec& parallel);

}  // namespace mofasim::model
