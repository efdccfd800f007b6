// The rules validate_scenario checks, one line each, for the generated scenario reference
// (validate.h, validation_rules()).
#include <array>
#include <span>
#include <string_view>

#include "sim/scenario/validate.h"

namespace mofasim::scenario {
namespace {

constexpr std::array<std::string_view, 66> kRules = {
    "model: num_layers, hidden_size, num_attention_heads, vocab_size and seq_length are required and >= 1; "
    "ffn_hidden_size is required unless every layer is MoE (moe given, first_k_dense_layers = 0, layer_pattern all 1)",
    "model: num_kv_heads (if given) divides num_attention_heads",
    "model: without head_dim, hidden_size is a multiple of num_attention_heads",
    "model: attention mha needs num_kv_heads = num_attention_heads; mqa needs num_kv_heads = 1",
    "model: mla is given if and only if attention is mla (attention absent counts as mla when mla is given)",
    "model.mla: kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim are required and >= 1",
    "model.moe: num_experts, top_k and expert_ffn_hidden_size are required and >= 1; top_k <= num_experts",
    "model.qk_layernorm: not with attention mla",
    "model.moe: first_k_dense_layers < num_layers; load_imbalance >= 1; bytes per element > 0; layer_pattern entries "
    "are 0 or 1 and leave at least one MoE layer",
    "model.moe: router_num_groups divides num_experts; 1 <= router_group_topk <= router_num_groups, top_k and the "
    "nodes one EP group spans; expert_capacity_factor > 0; pad_expert_input_to_capacity needs it and not flex",
    "model: attention_dropout in [0, 1)",
    "hardware: peak_bf16, gpu_memory and hbm_bandwidth are required; every peak, size and bandwidth given is > 0",
    "hardware: memory_reserved < gpu_memory; cuda_context + memory_reserved < gpu_memory",
    "hardware: allocator_fragmentation (if given) in [0, 0.9)",
    "hardware.efficiency: every fraction is in (0, 1]",
    "hardware: compute_model modified-roofline needs roofline_slope > 0",
    "hardware: compute_model kernel needs kernels.family, kernels.sm_count >= 1, kernels.gemm_ceiling_bf16 and "
    "kernels.hbm_fraction in (0, 1] (and kernels.gemm_ceiling_fp8 for compute_dtype fp8); tiles >= 1",
    "model: attention_impl flash1 needs hardware.kernels.family ampere or hopper under compute_model kernel",
    "hardware: collective_sms < kernels.sm_count when kernels.sm_count > 0; nvls_efficiency in (0, 1]; nvls_channels >= 2",
    "topology: nodes_per_supernode (if > 0) divides the node count gpus / gpus_per_node",
    "topology: gpus, intra_node.bandwidth and inter_node.bandwidth are required; bandwidths > 0",
    "topology: gpus_per_node >= 1 and, when gpus > gpus_per_node, divides gpus; nics_per_node >= 1",
    "topology: inter_supernode (if given) has a bandwidth > 0",
    "topology: oversubscription >= 1; bandwidth_decay in (0, 1]",
    "parallelism: global_batch is required; tp, cp, pp, vpp, dp, ep, etp, micro_batch, global_batch >= 1",
    "parallelism: tp*cp*pp*dp = topology.gpus",
    "parallelism: tp divides model.num_attention_heads and model.num_kv_heads",
    "parallelism: without stage_layers, pp*vpp divides model.num_layers (plus one for each of "
    "account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split, which exclude stage_layers)",
    "parallelism: stage_layers has pp*vpp entries, each >= 1, summing to model.num_layers",
    "parallelism: ep > 1 needs model.moe; ep divides moe.num_experts; ep*etp divides tp*cp*dp (MoE parallel folding); "
    "etp divides moe.expert_ffn_hidden_size (etp may exceed tp, as Megatron allows); a rank_order not ending in pp needs tp*cp*dp/(ep*etp) = dp and equal dense and expert pipeline groups",
    "parallelism: model.moe.token_dispatcher_type flex (DeepEP) needs ep*etp <= 8 (one node) or a multiple of 8 "
    "(whole nodes of 8 NVLink peers)",
    "parallelism: with model.moe.token_dispatcher_type flex, every ep*etp dispatcher group, as rank_order and "
    "topology.gpus_per_node place it, lies inside one node (at most 8 ranks) or on whole nodes, 8 ranks on each node "
    "at the same local GPUs (DeepEP's NVLink peers and RDMA pairs)",
    "parallelism: global_batch is a multiple of micro_batch*dp (m = global_batch / (micro_batch*dp))",
    "parallelism: interleaved-1f1b needs pp > 1, vpp > 1 and m a multiple of pp; vpp > 1 needs interleaved-1f1b",
    "parallelism: dualpipe needs an even pp and an even m",
    "parallelism: cp > 1 needs model.seq_length divisible by 2*cp (causal load balancing splits every "
    "sequence into 2*cp chunks, two per CP rank)",
    "parallelism: sequence_parallel needs model.seq_length divisible by tp*cp",
    "parallelism: cp_comm_type a2a (Ulysses) needs the attention and KV heads per TP rank divisible by cp",
    "parallelism: rank_order names tp, cp, ep, dp and pp at most once each, joined by '-'; a dimension it leaves out must have size 1 (Megatron appends it)",
    "parallelism: a rank_order not ending in pp, with pp > 1, needs the expert-DP size dp*cp/ep equal to dp, and "
    "the attention and MoE layers' pipeline groups must be the same (Megatron's checks)",
    "parallelism: estimated simulator tasks per step (m x (num_layers + mtp_depth) x 2 x ops per layer) at most "
    "2e7, about 2.4 GiB of replay tables",
    "optimizations: compute_scale > 0; bandwidth_scale > 0; dp_bucket_size > 0",
    "optimizations: every overlap has alpha >= 1, beta >= 1 and chunks >= 1",
    "optimizations.activation_offload: alpha, beta, alpha_backward, beta_backward >= 1; enabled needs "
    "hardware.h2d_bandwidth and hardware.d2h_bandwidth",
    "optimizations.optimizer: placement cpu needs hardware.cpu_optimizer_params_per_second, h2d_bandwidth "
    "and d2h_bandwidth",
    "optimizations.optimizer: param_sync broadcast needs data_parallel_sharding_strategy optim (or distributed), "
    "num_distributed_optimizer_instances 1 and placement gpu",
    "optimizations: compute_dtype fp8 needs hardware.peak_fp8",
    "optimizations.memfine: enabled needs model.moe",
    "fault_tolerance: node_failure_rate_per_day is required; gpus_per_failure_unit >= 1",
    "fault_tolerance.failure_classes: name (unique) and weight > 0 are required",
    "fault_tolerance.failure_classes: recovery is required unless distribution is empirical, which needs "
    "samples (and samples need empirical)",
    "fault_tolerance.failure_classes: lognormal needs sigma > 0",
    "fault_tolerance.checkpoint: interval_steps >= 1 is required; save_time is required unless storage is given, "
    "and given with storage neither save_time nor snapshot_time is allowed (storage.write_bandwidth is required)",
    "hardware: disk_write_bandwidth and disk_read_bandwidth only with fault_tolerance.checkpoint.storage",
    "fault_tolerance.checkpoint: async needs snapshot_time <= save_time",
    "fault_tolerance.checkpoint.storage: drain_streams >= 1; drain_streams and drain_start only with mode async",
    "fault_tolerance: process empirical needs failure_records; weibull_shape > 0",
    "fault_tolerance: step_time (if given) > 0",
    "training: exactly one of tokens (> 0) and steps (>= 1)",
    "training: the step count from tokens is at most 1e9, like training.steps",
    "fault_tolerance: estimated events per Monte Carlo trial (steps / interval_steps, plus expected failures when "
    "step_time is given) at most 1e8",
    "every number: finite and not negative (checked while reading the YAML)",
    "every unit field: a number with a unit (see Units)",
    "perturbations.slow: one of ranks, fraction, nodes or supernodes, each inside the cluster; slowdown >= 1 is required",
    "perturbations.degraded_links: level and bandwidth_fraction in (0, 1] are required; nvlink takes gpu, nic and spine "
    "take node (and nic); spine needs more than one supernode",
    "topology.node_hardware: nodes inside the cluster, each in one entry; hardware as the hardware section; "
    "gpus_per_node (if given) = topology.gpus_per_node; intra_node: bandwidth only",
};

}  // namespace

std::span<const std::string_view> validation_rules() { return kRules; }

}  // namespace mofasim::scenario
