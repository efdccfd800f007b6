// The sealed, validated description of a training run that model/, schedules/ and the executor
// consume: plain structs in SI units (bytes, seconds, FLOP/s, bytes/s), no strings to parse and no
// proto types. sim/scenario/ builds them from the Scenario proto after validation (style.md S7);
// tests build them directly with designated initializers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/kernels/attention_cost.h"
#include "schedules/schedule_kind.h"

namespace mofasim::model {

enum class AttentionKind { kMha, kGqa, kMqa, kMla };
enum class MlpKind { kSwiglu, kGelu };
enum class NormKind { kRmsNorm, kLayerNorm };
enum class PositionKind { kRope, kLearned };
enum class DType { kBf16, kFp16, kFp8, kFp32 };
// How the attention core (QK^T, softmax, PV) runs. kFused: one flash-attention kernel, no s x s
// tensor in HBM. kUnfused: the non-flash path of Megatron-LM (CoreAttention): QK^T and PV as
// batched GEMMs over the full s x s score matrix (the causal mask is applied after the product),
// the fused scale-mask-softmax and the attention dropout as memory-bound passes over that matrix.
// kFlash1: fused as kFused, timed at FlashAttention-1's measured rate (flash-attn < 2.0, the
// stacks of 2022 to mid-2023) instead of FlashAttention-2's / cuDNN's (model/kernels/attention_cost.h).
enum class AttentionImpl { kFused, kUnfused, kFlash1 };
// Which kernels a layer runs besides the GEMMs, attention, norms and activations of MoFa Table 2.
// kMofaTable2: exactly MoFa Table 2's ops (the default; what the calibrated vTrain fit assumes).
// kTransformerEngine: Megatron-Core with Transformer Engine adds its fused memory-bound kernels:
//   RoPE, the two bias-dropout-residual adds, MoE token permutation (op_table.cc gives the bytes).
// kUnfused: the same kernels as an older eager stack runs them, one PyTorch op per step (RoPE as
//   rotate/multiply/add passes, separate bias and residual adds, an unfused vocab-parallel
//   cross-entropy), so they move more HBM bytes.
// kInternLm: InternLM's 2023 training stack (InternLM/InternLM, the 7B configs of July 2023): the
//   Transformer Engine set's RoPE and residual adds (flash-attn's rotary kernel, eager adds), each
//   RMSNorm on an fp32 copy of the residual and recomputed in the backward, and an eager SwiGLU
//   (stack_kernels.h: fp32_norm_kernel, eager_swiglu_kernel).
enum class KernelStack { kMofaTable2, kTransformerEngine, kUnfused, kInternLm };
using GpuFamily = kernels::GpuFamily;
// Transformer Engine's FP8 scaling recipes (Megatron --fp8-recipe); see FeatureSpec::fp8.
enum class Fp8Recipe { kDelayed, kCurrent, kBlockwise, kMxfp8 };
// FP8 training as Transformer Engine runs it: the linear layers' GEMMs (QKV, output projection,
// MLP / expert fc1 and fc2, MTP projection) in FP8 in the phases named here; attention, norms,
// softmax, router and (unless output_layer) the output head stay BF16. Each FP8 GEMM operand is
// quantised by a memory-bound cast (stack_kernels.h: fp8_quantise_bytes), and each FP8 weight is
// kept as an FP8 copy plus its transpose (memory.h).
struct Fp8Spec {
  bool enabled = false;
  Fp8Recipe recipe = Fp8Recipe::kDelayed;
  bool fprop = true;
  bool dgrad = true;
  bool wgrad = true;
  bool output_layer = false;
};

inline double dtype_bytes(DType t) {
  switch (t) {
    case DType::kFp8: return 1;
    case DType::kBf16:
    case DType::kFp16: return 2;
    case DType::kFp32: return 4;
  }
  return 0;
}

// Multi-head latent attention (DeepSeek-V2/V3). q_lora_rank == 0 means no query compression.
struct MlaSpec {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

// Megatron's --moe-token-dispatcher-type (model/moe_dispatch.h gives the bytes of each).
// kAllToAll: one pairwise all-to-all over EP per dispatch and per combine, a copy per routed expert.
// kAllGather: every EP rank gathers all tokens of the EP group, the combine reduce-scatters them.
// kFlex: DeepEP: one copy per destination node over the NIC, forwarded over NVLink in the node.
enum class MoeDispatcher { kAllToAll, kAllGather, kFlex };

struct MoeSpec {
  int num_experts = 0;                 // routed experts per MoE layer; 0 = dense model
  int top_k = 0;                       // routed experts per token
  int expert_ffn_hidden_size = 0;      // f_e
  int num_shared_experts = 0;
  int shared_expert_ffn_hidden_size = 0;  // f_sh of ONE shared expert; total f_sh = n_shared * this
  int first_k_dense_layers = 0;        // layers [0, k) are dense FFN, the rest MoE
  double load_imbalance = 1.0;         // busiest EP rank's tokens / mean tokens (>= 1)
  double dispatch_bytes_per_element = 2;  // 1 for FP8 dispatch (DeepSeek-V3), 2 for bf16
  double combine_bytes_per_element = 2;
  MoeDispatcher token_dispatcher = MoeDispatcher::kAllToAll;  // --moe-token-dispatcher-type
  // Node-limited (group-limited) routing, --moe-router-num-groups / --moe-router-group-topk: the
  // experts form router_num_groups groups and a token reaches at most router_group_topk of them
  // (DeepSeek-V3: 8 groups = the 8 nodes of an EP group, 4). 0 = unlimited.
  int router_num_groups = 0;
  int router_group_topk = 0;
  // --moe-expert-capacity-factor: an expert takes at most this times its mean share of tokens and
  // drops the rest; 0 = dropless. --moe-pad-expert-input-to-capacity pads every expert to it.
  double expert_capacity_factor = 0;
  bool pad_expert_input_to_capacity = false;
  // Which layers past first_k_dense_layers are MoE, as a pattern repeated over the layers
  // (Megatron --moe-layer-freq as a list, HF interleave_moe_layer_step): layer l is MoE when bit
  // l % layer_period of layer_mask is set; layer_period 0 = every layer (the default). Llama 4
  // Maverick (a dense layer, then a MoE one): period 2, mask 0b10.
  int layer_period = 0;
  std::uint64_t layer_mask = 0;
  static constexpr int kMaxLayerPeriod = 64;
};

struct ModelSpec {
  std::string name{};
  int num_layers = 0;          // L, transformer layers (MTP layers not included)
  int hidden_size = 0;         // h
  int num_attention_heads = 0; // a
  int num_kv_heads = 0;        // g (== a for MHA, 1 for MQA)
  int head_dim = 0;            // d_h (h / a unless given)
  int ffn_hidden_size = 0;     // f (dense FFN)
  int vocab_size = 0;          // V (padded)
  int seq_length = 0;          // s
  AttentionKind attention = AttentionKind::kGqa;
  MlaSpec mla{};
  MlpKind mlp = MlpKind::kSwiglu;
  NormKind norm = NormKind::kRmsNorm;
  PositionKind position = PositionKind::kRope;
  bool untie_embeddings = true;  // separate output head weights
  bool linear_bias = false;      // biases on linear layers (GPT-style)
  MoeSpec moe{};
  int mtp_depth = 0;             // multi-token-prediction modules (DeepSeek-V3: 1)
  AttentionImpl attention_impl = AttentionImpl::kFused;
  double attention_dropout = 0;  // dropout probability on the attention probabilities; only the
                                 // unfused path pays for it (a pass writing the output and a 1-byte mask)
  KernelStack kernel_stack = KernelStack::kMofaTable2;
  // Sliding-window attention (Megatron --window-size, --window-attn-skip-freq; HF layer_types):
  // causal, each query attends to its last window_size keys (itself included); 0 = full attention.
  // With window_attn_skip_freq n > 0 every n-th layer (1-based) keeps full attention.
  int window_size = 0;
  int window_attn_skip_freq = 0;
  // Megatron --qk-layernorm: a norm on each query and key head after the QKV projection (Qwen3,
  // OLMo 2); not for MLA (its latent norms are inside the QKV op).
  bool qk_layernorm = false;

  [[nodiscard]] bool is_moe() const { return moe.num_experts > 0; }
  // Transformer layers with experts, and the first layer of each type (-1 when there is none).
  [[nodiscard]] int num_moe_layers() const {
    if (!is_moe()) return 0;
    if (moe.layer_period <= 0) return std::max(0, num_layers - moe.first_k_dense_layers);
    int n = 0;
    for (int l = 0; l < num_layers; ++l) n += is_moe_layer(l) ? 1 : 0;
    return n;
  }
  [[nodiscard]] int first_layer_of_type(bool moe_layer) const {
    if (!is_moe() || moe.layer_period <= 0) {  // dense layers [0, k), MoE layers [k, L)
      const int k = is_moe() ? moe.first_k_dense_layers : num_layers;
      if (moe_layer) return k < num_layers ? k : -1;
      return k > 0 && num_layers > 0 ? 0 : -1;
    }
    for (int l = 0; l < num_layers; ++l) {
      if (is_moe_layer(l) == moe_layer) return l;
    }
    return -1;
  }
  [[nodiscard]] bool is_moe_layer(int layer) const {
    return is_moe() && layer >= moe.first_k_dense_layers &&
           (moe.layer_period <= 0 || ((moe.layer_mask >> (layer % moe.layer_period)) & 1U) != 0);
  }
};

// Per-device compute and memory capability, plus the efficiencies that turn peak into attained.
enum class ComputeModelKind {
  kFixedEfficiency,   // t = FLOPs / (eta_class * peak)                         MoFa(1)
  kRoofline,          // t = max(FLOPs/(eta*peak), bytes/(eta_m*BW_HBM))         MoFa(19)
  kModifiedRoofline,  // attained = min(peak*eta, slope*AI + intercept)          MoFa §5.7
  kKernel,            // per kernel from its shape: GEMM tiles and waves under the measured
                      // best-shape ceiling, flash-attention curves, memory-bound kernels at the
                      // achieved HBM bandwidth, a per-kernel host launch floor (compute_time.h)
};

// The per-GPU parameters of ComputeModelKind::kKernel (each preset names their sources).
struct KernelSpec {
  GpuFamily family = GpuFamily::kUnspecified;  // picks the flash-attention curves
  int sm_count = 0;
  int gemm_tile_m = 128;          // output tile of one SM's GEMM work
  int gemm_tile_n = 256;
  double gemm_ceiling_bf16 = 0;   // FLOP/s: best-shape BF16 GEMM (MAMF)
  double gemm_ceiling_fp8 = 0;    // FLOP/s: best-shape FP8 GEMM (MAMF); 0 = no FP8
  double hbm_fraction = 0;        // achieved fraction of hbm_bandwidth for memory-bound kernels
  double host_launch_seconds = 0; // host cost of one eager kernel launch: a kernel takes at least
                                  // this long unless FeatureSpec::cuda_graphs
  double grouped_gemm_fraction = 1;  // grouped (MoE expert) GEMMs run at this fraction of the ceiling
  bool gemm_stream_k = false;        // the last partial wave of a GEMM as stream-K (kernels/gemm_cost.h)
  double in_step_rate = 1;           // GEMM ceilings and attention curves inside a step: x this (compute_time.h)
};

struct EfficiencySpec {
  double gemm = 0.75;          // fraction of dense peak attained by large GEMMs
  double attention = 0.6;      // fraction of peak attained by fused attention kernels
  double memory = 0.8;         // fraction of HBM bandwidth attained by memory-bound ops
  double small_gemm = 0.5;     // thin GEMMs (e.g. MoE experts with few tokens)
  // Fraction of HBM bandwidth the optimizer step's streaming passes attain (multi-tensor Adam, the
  // norm, zeroing: long contiguous sweeps, unlike a layer's short elementwise ops). 0 = `memory`.
  // Fixed-efficiency and roofline models only: the kernel model prices the optimizer's kernels at
  // its own achieved HBM fraction (kernels.hbm_fraction) and ignores this field.
  double optimizer_memory = 0;
};

// PyTorch's CUDA caching allocator mode (PYTORCH_CUDA_ALLOC_CONF): expandable_segments:True grows a
// segment by mapping pages; the default caching allocator splits fixed cudaMalloc segments.
enum class AllocatorKind : std::uint8_t { kExpandableSegments, kCaching };

struct HardwareSpec {
  std::string name{};
  double peak_flops_bf16 = 0;   // FLOP/s, dense
  double peak_flops_fp8 = 0;    // FLOP/s, dense (0 = unsupported)
  double peak_flops_fp32 = 0;   // FLOP/s (optional; 0 = bf16/16)
  double gpu_memory_bytes = 0;
  // What the process holds beyond the tensors it allocates (model/memory_reserve.h): other buffers
  // the framework holds (NCCL, cuBLAS workspaces), the CUDA context, and the allocator's
  // fragmentation. The defaults here are a bare device for unit tests; the scenario schema's
  // defaults (proto/scenario.proto Hardware) are the sourced ones.
  double memory_reserved_bytes = 0;
  double cuda_context_bytes = 0;
  AllocatorKind allocator = AllocatorKind::kExpandableSegments;
  std::optional<double> allocator_fragmentation{};  // 1 - allocated/reserved at the peak; unset: the allocator's
  double hbm_bandwidth = 0;     // bytes/s
  double h2d_bandwidth = 0;     // bytes/s
  double d2h_bandwidth = 0;     // bytes/s
  double host_memory_bytes = 0; // per node
  double cpu_optimizer_params_per_second = 0;  // CPU Adam throughput (parameters/s per GPU's share)
  double disk_read_bandwidth = 0;   // bytes/s
  double disk_write_bandwidth = 0;  // bytes/s
  double kernel_launch_seconds = 0; // fixed cost added per op phase, under FeatureSpec::cuda_graphs too
  // Host time to issue one op phase (framework + launches of its kernels). Eager frameworks launch
  // asynchronously, so this is hidden behind longer device work but bounds short ops from below:
  // an op phase takes max(device time, op_dispatch_seconds). 0 = the device is never host-bound.
  // FeatureSpec::cuda_graphs removes it (a graph replay issues nothing from the host).
  double op_dispatch_seconds = 0;
  ComputeModelKind compute_model = ComputeModelKind::kFixedEfficiency;
  EfficiencySpec efficiency{};
  double roofline_slope = 0;      // modified roofline: FLOP/s per (FLOP/byte)
  double roofline_intercept = 0;  // modified roofline: FLOP/s
  KernelSpec kernels{};
  // Communication. The SMs one communication kernel holds while it overlaps compute, of kernels.sm_count
  // (model/interference.h; 0 = unknown, overlap is free). NCCL protocol constants of this GPU
  // generation for the collective model (topology/nccl_protocols.h).
  int collective_sms = 0;
  bool nvlink_sharp = false;
  double nvls_efficiency = 0.85;
  int nvls_channels = 16;
  double nccl_ll_bandwidth = 87.7e9;  // bytes/s
};

using ScheduleKind = schedules::ScheduleKind;  // owned by the schedules (schedules/schedule_kind.h)

// How context parallelism exchanges keys and values (Megatron / Transformer Engine --cp-comm-type):
// p2p: ring attention, c-1 KV send/recv steps overlapped with the attention steps (MoFa(21));
// all_gather: the Llama 3 way, K and V all-gathered before the attention (again in the backward)
// and dK, dV reduce-scattered after it, not overlapped; a2a: DeepSpeed-Ulysses, all-to-alls turning
// sequence shards into head shards before the attention and back after it.
enum class CpCommType : std::uint8_t { kP2p, kAllGather, kA2a };

struct ParallelSpec {
  int tp = 1;
  int cp = 1;
  int pp = 1;
  int vpp = 1;        // virtual stages (model chunks) per pipeline rank
  int dp = 1;         // data parallel (attention); gpus = tp*cp*pp*dp
  int ep = 1;         // expert parallel, carved out of dp*cp (Megatron convention)
  int etp = 1;        // expert tensor parallel; ep*etp divides tp*cp*dp (MoE parallel folding:
                      // the expert data-parallel size is tp*cp*dp / (ep*etp))
  // Nodes one ETP x EP group (the flex dispatcher's group; the EP group when etp = 1) spans.
  // Derived, not a scenario field: build_rank_plan sets it from the placement and the topology;
  // 0 = unknown (each EP rank counted as a node of its own).
  int ep_nodes = 0;
  int micro_batch = 1;    // b
  int global_batch = 1;   // B
  bool sequence_parallel = false;
  ScheduleKind schedule = ScheduleKind::k1F1B;
  std::vector<int> stage_layers{};  // optional explicit layers per (pp*vpp) chunk; empty = uniform
  // Megatron's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split:
  // the embedding (loss) counts as one layer of the first (last) chunk in the uniform split.
  bool account_for_embedding = false;
  bool account_for_loss = false;
  CpCommType cp_comm_type = CpCommType::kP2p;

  [[nodiscard]] int gpus() const { return tp * cp * pp * dp; }
  [[nodiscard]] int expert_dp() const { return tp * cp * dp / (ep * etp); }
  [[nodiscard]] int microbatches() const { return global_batch / (micro_batch * dp); }  // m
};

// The batch rule every layout obeys, defined once: the global batch splits into m >= 1 steps of
// micro_batch sequences on each of dp replicas (global_batch a positive multiple of
// micro_batch * dp). The scenario seal, the measured-data reader, the tuner and both step models
// check it with this function, each reporting it in its own terms.
constexpr bool batch_divides(std::int64_t global_batch, std::int64_t micro_batch, std::int64_t dp) {
  return micro_batch >= 1 && dp >= 1 && global_batch >= micro_batch * dp && global_batch % (micro_batch * dp) == 0;
}

enum class RecomputeKind { kNone, kSelective, kFull };
enum class OptimizerPlacement { kGpu, kCpu };

// Megatron's --recompute-modules (selective recompute): each drops what its part of a layer keeps
// for the backward and re-runs that part's forward before the layer's backward (op_table.h says
// which op each one drops and re-runs).
// The last two are torchtitan's per-op selective checkpointing policy (selective_ac_option: op) on
// dense layers, as it acts when the linears run as aten.mm (bf16: every other matmul output kept)
// or as torch._scaled_mm (float8 linears: every matmul output kept); recompute_modules.h.
enum class RecomputeModule : std::uint8_t {
  kCoreAttn, kMlp, kMoe, kMoeAct, kLayernorm, kMlaUpProj, kSharedExperts, kTorchtitanOp, kTorchtitanOpScaledMm
};
inline constexpr int kNumRecomputeModules = 9;
using RecomputeModules = std::uint16_t;  // a set of RecomputeModule, bit i = module i
inline constexpr RecomputeModules recompute_bit(RecomputeModule m) {
  return static_cast<RecomputeModules>(1U << static_cast<unsigned>(m));
}
// Megatron's --recompute-method (full recompute): uniform checkpoints every layer in groups of
// recompute_num_layers; block checkpoints the first recompute_num_layers layers of each chunk.
// every_nth is torchtitan's per-layer selective checkpointing (selective_ac_option: k): the k-th,
// 2k-th, ... layer of a chunk is fully checkpointed, the others keep everything.
enum class RecomputeMethod { kUniform, kBlock, kEveryNth };
// What data parallelism shards (Megatron-FSDP's --data-parallel-sharding-strategy).
enum class DpSharding { kNone, kOptim, kOptimGrads, kOptimGradsParams };
// How a ZeRO-1 optimizer brings every DP rank's parameters up to date (model/zero_broadcast.h):
// Megatron reduce-scatters the gradients and all-gathers the parameters; InternEvo's hybrid ZeRO
// all-reduces the gradients and each owner rank broadcasts the parameters it updated.
enum class DpParamSync { kAllGather, kBroadcast };

// Overlap of one kind of communication with compute (MoFa §3.3). While both run on one GPU,
// compute takes alpha times longer and communication beta times longer (time-increase coefficients).
struct OverlapSpec {
  bool enabled = false;
  double alpha = 1.0;
  double beta = 1.0;
  int chunks = 1;  // TP overlap: pieces the GEMM is split into (MoFa(20))
};

struct FeatureSpec {
  double compute_scale = 1.0;    // mu_c, MoFa(17)
  double bandwidth_scale = 1.0;  // mu_b, MoFa(18)
  OverlapSpec tp_overlap{};        // MoFa(20)
  OverlapSpec cp_overlap{};        // MoFa(21)
  OverlapSpec ep_overlap{};        // MoFa(22)
  OverlapSpec pp_overlap{};        // MoFa(23)
  OverlapSpec dp_overlap{};        // MoFa(24)
  OptimizerPlacement optimizer_placement = OptimizerPlacement::kGpu;  // cpu: MoFa(27) MoFa(28)
  bool distributed_optimizer = false;  // MoFa(25) MoFa(26)
  DpSharding dp_sharding = DpSharding::kNone;  // ZeRO stage; distributed_optimizer means at least kOptim
  // HSDP (Megatron's num_distributed_optimizer_instances, FSDP's hybrid shard): the dp*cp and
  // expert-DP groups cut into this many shard groups; dp_sharding applies within one, the shard
  // groups keep replicas and all-reduce the gradient shard across them. Divides dp*cp and edp.
  int dist_opt_instances = 1;
  DpParamSync param_sync = DpParamSync::kAllGather;  // with dp_sharding kOptim
  DType param_dtype = DType::kBf16;             // Megatron params_dtype
  DType grad_dtype = DType::kFp32;              // Megatron --main-grads-dtype (fp16: legacy fp16 training)
  DType optimizer_state_dtype = DType::kFp32;   // Adam first moment, --exp-avg-dtype (DeepSeek-V3: bf16)
  DType exp_avg_sq_dtype = DType::kFp32;        // Adam second moment, --exp-avg-sq-dtype
  bool master_weights = true;                   // master copy of 16-bit params
  DType master_dtype = DType::kFp32;            // its dtype, --main-params-dtype
  DType compute_dtype = DType::kBf16;
  Fp8Spec fp8{};  // precision fp8 (compute_dtype stays bf16: only the named GEMMs run in FP8)
  RecomputeKind recompute = RecomputeKind::kNone;  // MoFa(29) MoFa(30) MoFa(31) MoFa(32)
  RecomputeModules recompute_modules = recompute_bit(RecomputeModule::kCoreAttn);  // selective: Megatron's default
  RecomputeMethod recompute_method = RecomputeMethod::kUniform;  // full
  int recompute_num_layers = 1;  // full: uniform group size (>= 1) / block layers per chunk (0 = none, as Megatron)
                                 // / every_nth: k
  bool memfine = false;         // MemFine chunked MoE recompute
  int memfine_chunks = 0;       // 0 = smallest chunk count that fits memory
  OverlapSpec activation_offload{};   // MoFa(33) MoFa(34) MoFa(35): alpha/beta forward
  double offload_alpha_backward = 1.0;
  double offload_beta_backward = 1.0;
  double dp_bucket_bytes = 40e6;    // DP gradient bucket size
  bool cuda_graphs = false;         // kernels replayed from CUDA graphs: no host floors (kernels.host_launch,
                                    // op_dispatch); HardwareSpec::kernel_launch_seconds stays
  // Overlapped communication slows compute by model::overlap_interference_alpha (the replay applies
  // it wherever compute and communication run at once on a rank; every overlap's alpha is at least it).
  bool overlap_interference = true;
};

}  // namespace mofasim::model
