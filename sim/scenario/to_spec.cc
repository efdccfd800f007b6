// Proto -> model/spec.h conversion (see to_spec.h).
#include "sim/scenario/to_spec.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "model/interference.h"
#include "model/recompute_modules.h"
#include "sim/units/check.h"

namespace mofasim::scenario {
namespace {

model::AttentionKind attention_kind(proto::Attention a) {
  switch (a) {
    case proto::MHA: return model::AttentionKind::kMha;
    case proto::GQA: return model::AttentionKind::kGqa;
    case proto::MQA: return model::AttentionKind::kMqa;
    case proto::MLA: return model::AttentionKind::kMla;
    case proto::ATTENTION_UNSPECIFIED: break;
  }
  MOFASIM_UNREACHABLE("attention left unspecified after normalisation");
}

model::DType dtype(proto::DType t) {
  switch (t) {
    case proto::BF16: return model::DType::kBf16;
    case proto::FP16: return model::DType::kFp16;
    case proto::FP8: return model::DType::kFp8;
    case proto::FP32: return model::DType::kFp32;
    case proto::DTYPE_UNSPECIFIED: break;
  }
  MOFASIM_UNREACHABLE("dtype unspecified");
}

model::ScheduleKind schedule_kind(proto::Schedule s) {
  switch (s) {
    case proto::GPIPE: return model::ScheduleKind::kGpipe;
    case proto::ONE_F_ONE_B: return model::ScheduleKind::k1F1B;
    case proto::INTERLEAVED_1F1B: return model::ScheduleKind::kInterleaved1F1B;
    case proto::ZB_H1: return model::ScheduleKind::kZbH1;
    case proto::DUALPIPE: return model::ScheduleKind::kDualPipe;
    case proto::SCHEDULE_UNSPECIFIED: break;
  }
  MOFASIM_UNREACHABLE("schedule unspecified");
}

model::ComputeModelKind compute_model_kind(proto::ComputeModel c) {
  switch (c) {
    case proto::FIXED_EFFICIENCY: return model::ComputeModelKind::kFixedEfficiency;
    case proto::ROOFLINE: return model::ComputeModelKind::kRoofline;
    case proto::MODIFIED_ROOFLINE: return model::ComputeModelKind::kModifiedRoofline;
    case proto::KERNEL: return model::ComputeModelKind::kKernel;
    case proto::COMPUTE_MODEL_UNSPECIFIED: break;
  }
  MOFASIM_UNREACHABLE("compute model unspecified");
}

model::KernelStack kernel_stack(proto::KernelStack k) {
  switch (k) {
    case proto::TRANSFORMER_ENGINE: return model::KernelStack::kTransformerEngine;
    case proto::UNFUSED_STACK: return model::KernelStack::kUnfused;
    case proto::INTERNLM: return model::KernelStack::kInternLm;
    case proto::MOFA_TABLE2:
    case proto::KERNEL_STACK_UNSPECIFIED: break;
  }
  return model::KernelStack::kMofaTable2;
}

model::AttentionImpl attention_impl(proto::AttentionImpl a) {
  switch (a) {
    case proto::UNFUSED: return model::AttentionImpl::kUnfused;
    case proto::FLASH1: return model::AttentionImpl::kFlash1;
    case proto::FUSED:
    case proto::ATTENTION_IMPL_UNSPECIFIED: break;
  }
  return model::AttentionImpl::kFused;
}

model::AllocatorKind allocator_kind(proto::Allocator a) {
  switch (a) {
    case proto::CACHING: return model::AllocatorKind::kCaching;
    case proto::EXPANDABLE_SEGMENTS:
    case proto::ALLOCATOR_UNSPECIFIED: break;
  }
  return model::AllocatorKind::kExpandableSegments;
}

model::GpuFamily gpu_family(proto::GpuFamily f) {
  switch (f) {
    case proto::AMPERE: return model::GpuFamily::kAmpere;
    case proto::HOPPER: return model::GpuFamily::kHopper;
    case proto::BLACKWELL: return model::GpuFamily::kBlackwell;
    case proto::GPU_FAMILY_UNSPECIFIED: break;
  }
  return model::GpuFamily::kUnspecified;
}

model::RecomputeKind recompute_kind(proto::Recompute r) {
  switch (r) {
    case proto::NONE: return model::RecomputeKind::kNone;
    case proto::SELECTIVE: return model::RecomputeKind::kSelective;
    case proto::FULL: return model::RecomputeKind::kFull;
    case proto::RECOMPUTE_UNSPECIFIED: break;
  }
  MOFASIM_UNREACHABLE("recompute unspecified");
}

constexpr int kEveryLayer = 1 << 30;  // more layers than any chunk has

model::DpSharding dp_sharding(proto::DataParallelSharding z) {
  switch (z) {
    case proto::NO_SHARD: return model::DpSharding::kNone;
    case proto::OPTIM: return model::DpSharding::kOptim;
    case proto::OPTIM_GRADS: return model::DpSharding::kOptimGrads;
    case proto::OPTIM_GRADS_PARAMS: return model::DpSharding::kOptimGradsParams;
    case proto::DATA_PARALLEL_SHARDING_UNSPECIFIED: break;
  }
  MOFASIM_UNREACHABLE("data-parallel sharding unspecified");
}

model::RecomputeModules recompute_module_bit(proto::RecomputeModule m) {
  switch (m) {
    case proto::RECOMPUTE_CORE_ATTN: return model::recompute_bit(model::RecomputeModule::kCoreAttn);
    case proto::RECOMPUTE_MLP: return model::recompute_bit(model::RecomputeModule::kMlp);
    case proto::RECOMPUTE_MOE: return model::recompute_bit(model::RecomputeModule::kMoe);
    case proto::RECOMPUTE_MOE_ACT: return model::recompute_bit(model::RecomputeModule::kMoeAct);
    case proto::RECOMPUTE_LAYERNORM: return model::recompute_bit(model::RecomputeModule::kLayernorm);
    case proto::RECOMPUTE_MLA_UP_PROJ: return model::recompute_bit(model::RecomputeModule::kMlaUpProj);
    case proto::RECOMPUTE_SHARED_EXPERTS: return model::recompute_bit(model::RecomputeModule::kSharedExperts);
    case proto::RECOMPUTE_MODULE_UNSPECIFIED: break;
  }
  MOFASIM_UNREACHABLE("recompute module unspecified");
}

model::OverlapSpec overlap(const proto::Overlap& o) {
  return {.enabled = o.enabled(), .alpha = o.alpha(), .beta = o.beta(), .chunks = o.chunks()};
}

}  // namespace

model::ModelSpec to_model_spec(const proto::Model& m) {
  model::ModelSpec spec{
      .name = m.has_name() ? m.name() : m.preset(),
      .num_layers = m.num_layers(),
      .hidden_size = m.hidden_size(),
      .num_attention_heads = m.num_attention_heads(),
      .num_kv_heads = m.num_kv_heads(),
      .head_dim = m.head_dim(),
      .ffn_hidden_size = m.ffn_hidden_size(),
      .vocab_size = m.vocab_size(),
      .seq_length = m.seq_length(),
      .attention = attention_kind(m.attention()),
      .mla = {},
      .mlp = m.mlp() == proto::GELU ? model::MlpKind::kGelu : model::MlpKind::kSwiglu,
      .norm = m.norm() == proto::LAYERNORM ? model::NormKind::kLayerNorm : model::NormKind::kRmsNorm,
      .position = m.position() == proto::LEARNED ? model::PositionKind::kLearned : model::PositionKind::kRope,
      .untie_embeddings = m.untie_embeddings(),
      .linear_bias = m.linear_bias(),
      .moe = {},
      .mtp_depth = m.mtp_depth(),
      .attention_impl = attention_impl(m.attention_impl()),
      .attention_dropout = m.attention_dropout(),
      .kernel_stack = kernel_stack(m.kernel_stack()),
      .window_size = m.window_size(),
      .window_attn_skip_freq = m.window_attn_skip_freq(),
      .qk_layernorm = m.qk_layernorm(),
  };
  if (m.has_mla()) {
    const proto::MlaConfig& a = m.mla();
    spec.mla = {.q_lora_rank = a.q_lora_rank(),
                .kv_lora_rank = a.kv_lora_rank(),
                .qk_nope_head_dim = a.qk_nope_head_dim(),
                .qk_rope_head_dim = a.qk_rope_head_dim(),
                .v_head_dim = a.v_head_dim()};
  }
  if (m.has_moe()) {
    const proto::MoeConfig& e = m.moe();
    spec.moe = {.num_experts = e.num_experts(),
                .top_k = e.top_k(),
                .expert_ffn_hidden_size = e.expert_ffn_hidden_size(),
                .num_shared_experts = e.num_shared_experts(),
                .shared_expert_ffn_hidden_size = e.shared_expert_ffn_hidden_size(),
                .first_k_dense_layers = e.first_k_dense_layers(),
                .load_imbalance = e.load_imbalance(),
                .dispatch_bytes_per_element = e.dispatch_bytes_per_element(),
                .combine_bytes_per_element = e.combine_bytes_per_element(),
                .token_dispatcher = e.token_dispatcher_type() == proto::DISPATCHER_FLEX        ? model::MoeDispatcher::kFlex
                                    : e.token_dispatcher_type() == proto::DISPATCHER_ALLGATHER ? model::MoeDispatcher::kAllGather
                                                                                                : model::MoeDispatcher::kAllToAll,
                .router_num_groups = e.router_num_groups(),
                .router_group_topk = e.router_group_topk(),
                .expert_capacity_factor = e.has_expert_capacity_factor() ? e.expert_capacity_factor() : 0.0,
                .pad_expert_input_to_capacity = e.pad_expert_input_to_capacity()};
    const int period = e.layer_pattern_size();
    spec.moe.layer_period = period;
    for (int l = 0; l < period; ++l) {
      if (e.layer_pattern(l) == 1) spec.moe.layer_mask |= std::uint64_t{1} << l;
    }
  }
  return spec;
}

model::HardwareSpec to_hardware_spec(const proto::Hardware& h) {
  return {
      .name = h.has_name() ? h.name() : h.preset(),
      .peak_flops_bf16 = h.peak_bf16(),
      .peak_flops_fp8 = h.peak_fp8(),
      .peak_flops_fp32 = h.peak_fp32(),
      .gpu_memory_bytes = h.gpu_memory(),
      .memory_reserved_bytes = h.memory_reserved(),
      .cuda_context_bytes = h.cuda_context(),
      .allocator = allocator_kind(h.allocator()),
      .allocator_fragmentation =
          h.has_allocator_fragmentation() ? std::optional<double>(h.allocator_fragmentation()) : std::nullopt,
      .hbm_bandwidth = h.hbm_bandwidth(),
      .h2d_bandwidth = h.h2d_bandwidth(),
      .d2h_bandwidth = h.d2h_bandwidth(),
      .host_memory_bytes = h.host_memory(),
      .cpu_optimizer_params_per_second = h.cpu_optimizer_params_per_second(),
      .disk_read_bandwidth = h.disk_read_bandwidth(),
      .disk_write_bandwidth = h.disk_write_bandwidth(),
      .kernel_launch_seconds = h.kernel_launch(),
      .op_dispatch_seconds = h.op_dispatch(),
      .compute_model = compute_model_kind(h.compute_model()),
      .efficiency = {.gemm = h.efficiency().gemm(),
                     .attention = h.efficiency().attention(),
                     .memory = h.efficiency().memory(),
                     .small_gemm = h.efficiency().small_gemm()},
      .roofline_slope = h.roofline_slope(),
      .roofline_intercept = h.roofline_intercept(),
      .kernels = {.family = gpu_family(h.kernels().family()),
                  .sm_count = h.kernels().sm_count(),
                  .gemm_tile_m = h.kernels().gemm_tile_m(),
                  .gemm_tile_n = h.kernels().gemm_tile_n(),
                  .gemm_ceiling_bf16 = h.kernels().gemm_ceiling_bf16(),
                  .gemm_ceiling_fp8 = h.kernels().gemm_ceiling_fp8(),
                  .hbm_fraction = h.kernels().hbm_fraction(),
                  .host_launch_seconds = h.kernels().host_launch(),
                  .grouped_gemm_fraction = h.kernels().grouped_gemm_fraction(),
                  .gemm_stream_k = h.kernels().gemm_schedule() == proto::GEMM_STREAM_K,
                  .in_step_rate = h.kernels().in_step_rate()},
      .collective_sms = h.collective_sms(),
      .nvlink_sharp = h.nvlink_sharp(),
      .nvls_efficiency = h.nvls_efficiency(),
      .nvls_channels = h.nvls_channels(),
      .nccl_ll_bandwidth = h.nccl_ll_bandwidth(),
  };
}

topology::CollectiveTuning to_collective_tuning(const model::HardwareSpec& h, topology::CollectiveModel model) {
  return {.model = model,
          .ll_max_bandwidth = h.nccl_ll_bandwidth,
          .nvlink_sharp = h.nvlink_sharp,
          .nvls_efficiency = h.nvls_efficiency,
          .nvls_channels = h.nvls_channels};
}

topology::CollectiveModel to_collective_model(proto::CollectiveModel m) {
  return m == proto::ALPHA_BETA ? topology::CollectiveModel::kAlphaBeta : topology::CollectiveModel::kNccl;
}

void apply_overlap_interference(const proto::Optimizations& o, const model::HardwareSpec& hardware,
                                model::FeatureSpec& features) {
  const double alpha = model::overlap_interference_alpha(hardware, features.overlap_interference);
  const std::pair<const proto::Overlap*, model::OverlapSpec*> overlaps[] = {
      {&o.tp_overlap(), &features.tp_overlap}, {&o.cp_overlap(), &features.cp_overlap},
      {&o.ep_overlap(), &features.ep_overlap}, {&o.pp_overlap(), &features.pp_overlap},
      {&o.dp_overlap(), &features.dp_overlap}};
  // A floor, not a default: the replay slows compute by at least this factor beside any
  // communication kernel, so an overlap's alpha below it would make the closed form disagree.
  for (const auto& [given, spec] : overlaps) spec->alpha = std::max(given->alpha(), alpha);
}

model::ParallelSpec to_parallel_spec(const proto::Parallelism& p) {
  return {
      .tp = p.tp(),
      .cp = p.cp(),
      .pp = p.pp(),
      .vpp = p.vpp(),
      .dp = p.dp(),
      .ep = p.ep(),
      .etp = p.etp(),
      .micro_batch = p.micro_batch(),
      .global_batch = p.global_batch(),
      .sequence_parallel = p.sequence_parallel(),
      .schedule = schedule_kind(p.schedule()),
      .stage_layers = {p.stage_layers().begin(), p.stage_layers().end()},
      .account_for_embedding = p.account_for_embedding_in_pipeline_split(),
      .account_for_loss = p.account_for_loss_in_pipeline_split(),
      .cp_comm_type = p.cp_comm_type() == proto::CP_ALL_GATHER ? model::CpCommType::kAllGather
                      : p.cp_comm_type() == proto::CP_A2A      ? model::CpCommType::kA2a
                                                               : model::CpCommType::kP2p,
  };
}

model::FeatureSpec to_feature_spec(const proto::Optimizations& o) {
  const proto::ActivationOffload& a = o.activation_offload();
  model::FeatureSpec spec;
  spec.compute_scale = o.compute_scale();
  spec.bandwidth_scale = o.bandwidth_scale();
  spec.tp_overlap = overlap(o.tp_overlap());
  spec.cp_overlap = overlap(o.cp_overlap());
  spec.ep_overlap = overlap(o.ep_overlap());
  spec.pp_overlap = overlap(o.pp_overlap());
  spec.dp_overlap = overlap(o.dp_overlap());
  spec.optimizer_placement =
      o.optimizer().placement() == proto::CPU ? model::OptimizerPlacement::kCpu : model::OptimizerPlacement::kGpu;
  const proto::Optimizer& opt = o.optimizer();
  spec.dp_sharding = opt.has_data_parallel_sharding_strategy() ? dp_sharding(opt.data_parallel_sharding_strategy())
                     : opt.distributed()                       ? model::DpSharding::kOptim
                                                               : model::DpSharding::kNone;
  spec.distributed_optimizer = spec.dp_sharding >= model::DpSharding::kOptim;
  spec.dist_opt_instances = opt.num_distributed_optimizer_instances();
  spec.param_sync = opt.param_sync() == proto::BROADCAST ? model::DpParamSync::kBroadcast : model::DpParamSync::kAllGather;
  spec.param_dtype = dtype(opt.params_dtype());
  spec.grad_dtype = dtype(opt.main_grads_dtype());
  spec.master_dtype = dtype(opt.main_params_dtype());
  // state_dtype names both Adam moments; exp_avg_dtype / exp_avg_sq_dtype override one each.
  spec.optimizer_state_dtype = dtype(opt.has_exp_avg_dtype() ? opt.exp_avg_dtype() : opt.state_dtype());
  spec.exp_avg_sq_dtype = dtype(opt.has_exp_avg_sq_dtype() ? opt.exp_avg_sq_dtype() : opt.state_dtype());
  spec.master_weights = opt.master_weights();
  spec.compute_dtype = dtype(o.compute_dtype());
  if (o.precision() == proto::FP8) {
    spec.fp8.enabled = true;
    switch (o.fp8_recipe()) {
      case proto::FP8_CURRENT: spec.fp8.recipe = model::Fp8Recipe::kCurrent; break;
      case proto::FP8_BLOCKWISE: spec.fp8.recipe = model::Fp8Recipe::kBlockwise; break;
      case proto::FP8_MXFP8: spec.fp8.recipe = model::Fp8Recipe::kMxfp8; break;
      default: spec.fp8.recipe = model::Fp8Recipe::kDelayed; break;
    }
    spec.fp8.fprop = o.fp8_fprop();
    spec.fp8.dgrad = o.fp8_dgrad();
    spec.fp8.wgrad = o.fp8_wgrad();
    spec.fp8.output_layer = o.fp8_output_layer();
  }
  // recompute: selective / full is recompute_granularity with Megatron's defaults (modules
  // [core_attn]; uniform, 1 layer per group).
  if (o.has_recompute_granularity()) {
    spec.recompute = o.recompute_granularity() == proto::GRANULARITY_FULL ? model::RecomputeKind::kFull
                                                                          : model::RecomputeKind::kSelective;
  } else {
    spec.recompute = recompute_kind(o.recompute());
  }
  if (o.recompute_modules_size() > 0) {
    spec.recompute_modules = 0;
    for (int i = 0; i < o.recompute_modules_size(); ++i) spec.recompute_modules |= recompute_module_bit(o.recompute_modules(i));
  }
  spec.recompute_method = o.recompute_method() == proto::RECOMPUTE_BLOCK ? model::RecomputeMethod::kBlock
                                                               : model::RecomputeMethod::kUniform;
  // Block without a count recomputes every layer of a chunk; uniform groups one layer by default.
  spec.recompute_num_layers = o.has_recompute_num_layers()                        ? o.recompute_num_layers()
                              : spec.recompute_method == model::RecomputeMethod::kBlock ? kEveryLayer
                                                                                      : 1;
  // torchtitan's selective_ac_option (validated in validate_memory_fields.cc): 'op' is its per-op
  // policy, in the _scaled_mm form under FP8 linears; k is full recompute of every k-th layer.
  if (o.has_selective_ac_option()) {
    if (o.selective_ac_option() == "op") {
      spec.recompute_modules = model::torchtitan_op_modules(spec.fp8.enabled);
    } else {
      spec.recompute = model::RecomputeKind::kFull;
      spec.recompute_method = model::RecomputeMethod::kEveryNth;
      spec.recompute_num_layers = std::stoi(o.selective_ac_option());
    }
  }
  spec.memfine = o.memfine().enabled();
  spec.memfine_chunks = o.memfine().chunks();
  spec.activation_offload = {.enabled = a.enabled(), .alpha = a.alpha(), .beta = a.beta(), .chunks = 1};
  spec.offload_alpha_backward = a.alpha_backward();
  spec.offload_beta_backward = a.beta_backward();
  spec.dp_bucket_bytes = o.dp_bucket_size();
  spec.cuda_graphs = o.cuda_graphs();
  spec.overlap_interference = o.overlap_interference();
  return spec;
}

}  // namespace mofasim::scenario
