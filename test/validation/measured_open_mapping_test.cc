// Row -> scenario mapping of the open set on small CSV rows: the preset, link and feature each
// text column becomes, and the reasons a row the schema cannot express is listed with.
#include "sim/analysis/measured_open_mapping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "model/stage_layout.h"
#include "sim/analysis/measured_open_split.h"
#include "test/validation/open_rows_for_test.h"

namespace mofasim::analysis {
namespace {

using test::open_row;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const MeasuredCase& spec_of(const OpenCase& c) {
  if (!c.spec) ADD_FAILURE() << "not expressible: " << (c.reasons.empty() ? "" : c.reasons.front());
  return *c.spec;
}

// The features and the reasons of the base row with one text column replaced.
model::FeatureSpec features_with(const std::string& column, const std::string& text) {
  return spec_of(map_open_run(open_row({{column, text}}))).features;
}
std::vector<std::string> reasons_with(const std::string& column, const std::string& text) {
  return map_open_run(open_row({{column, text}})).reasons;
}

TEST(OpenMapping, AnInternLmRowBecomesTheA100PresetOnItsRoceCluster) {
  const OpenCase c = map_open_run(open_row());
  const MeasuredCase& s = spec_of(c);
  EXPECT_EQ(c.gpu_family, "A100-SXM4-80GB");
  EXPECT_EQ(c.split, "fit");
  EXPECT_EQ(s.hardware.name, "A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(s.hardware.peak_flops_bf16, 312e12);  // the shipped preset as it is
  EXPECT_EQ(s.topology.gpus, 16);
  EXPECT_EQ(s.topology.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(s.topology.intra_node.bandwidth, 200e9);           // NVLink3 busBW
  EXPECT_DOUBLE_EQ(s.topology.intra_node.latency, 2e-6);              // assumption, as the shipped scenarios
  EXPECT_DOUBLE_EQ(s.topology.inter_node.bandwidth, 4 * 100e9 / 8 / 8);  // 4x 100 Gb per node, 8 GPUs: 6.25 GB/s
  EXPECT_EQ(s.model.attention, model::AttentionKind::kMha);
  EXPECT_EQ(s.model.head_dim, 128);
  EXPECT_EQ(s.model.ffn_hidden_size, 11008);
  EXPECT_EQ(s.model.mlp, model::MlpKind::kSwiglu);
  EXPECT_EQ(s.model.norm, model::NormKind::kRmsNorm);
  EXPECT_EQ(s.model.position, model::PositionKind::kRope);
  EXPECT_TRUE(s.model.untie_embeddings);
  EXPECT_EQ(s.model.attention_impl, model::AttentionImpl::kFlash1);  // flash-attn 1.0.5 (InternLM install.md)
  EXPECT_EQ(s.parallel.dp, 16);
  EXPECT_EQ(s.parallel.microbatches(), 4);
  EXPECT_EQ(s.parallel.schedule, model::ScheduleKind::k1F1B);
  EXPECT_TRUE(s.features.distributed_optimizer);  // ZeRO-1 over all DP ranks
  EXPECT_TRUE(s.features.dp_overlap.enabled);     // InternEvo overlaps the gradient reduce
  EXPECT_EQ(s.features.recompute, model::RecomputeKind::kNone);
  EXPECT_TRUE(c.reasons.empty());
}

TEST(OpenMapping, InterconnectTextsGiveTheLineRatePerNode) {
  EXPECT_EQ(open_inter_node_bytes_per_node("inter-node 4x 200 Gbps RDMA per node (README)", 8), 100e9);
  EXPECT_EQ(open_inter_node_bytes_per_node("compute fabric 8x ConnectX-7 IB NDR 400 Gb/s per node", 8), 400e9);
  EXPECT_EQ(open_inter_node_bytes_per_node("8 GPUs per host fully connected with NVLink; RDMA backend 400 Gb/s per GPU", 8),
            400e9);
  EXPECT_EQ(open_inter_node_bytes_per_node("4x ConnectX-7 IB NDR 400 Gb/s per 4-GPU node", 4), 200e9);
  // "8x A100-SXM4-80GB" counts GPUs, not NICs (GB, not Gb); the NICs come after.
  EXPECT_EQ(open_inter_node_bytes_per_node("8x A100-SXM4-80GB per node (NVLink/NVSwitch); inter-node 4x 100 Gb RoCE", 8),
            50e9);
  // A node's total: Tb/s or Gb/s "per node" / "per host".
  EXPECT_EQ(open_inter_node_bytes_per_node("3.2 Tbps per node (8x CX7)", 8), 400e9);
  EXPECT_EQ(open_inter_node_bytes_per_node("RoCE, 1600 Gb/s per host", 8), 200e9);
  EXPECT_FALSE(open_inter_node_bytes_per_node("OCI BM.GPU.H100.8: NVLink4/NVSwitch 900 GB/s; RoCEv2 cluster network", 8));
  EXPECT_FALSE(open_inter_node_bytes_per_node("not stated (Meta A100 cluster); 8 GPUs/node assumed", 8));
}

TEST(OpenMapping, TextColumnsBecomeFeatures) {
  EXPECT_EQ(spec_of(map_open_run(open_row({{"recompute", "full activation checkpointing (all layers)"}}))).features.recompute,
            model::RecomputeKind::kFull);
  EXPECT_EQ(spec_of(map_open_run(open_row({{"recompute", "selective (--recompute-granularity selective)"}})))
                .features.recompute,
            model::RecomputeKind::kSelective);
  EXPECT_EQ(spec_of(map_open_run(open_row({{"recompute", "none (launcher passes --recompute-granularity full "
                                                         "--recompute-num-layers 0)"}})))
                .features.recompute,
            model::RecomputeKind::kNone);
  EXPECT_FALSE(spec_of(map_open_run(open_row({{"optimizer_sharding", "none (plain DDP, apex fused AdamW)"}})))
                   .features.distributed_optimizer);
  // ZeRO-1 within groups at least as large as DP is ZeRO-1 over the whole DP group.
  EXPECT_TRUE(spec_of(map_open_run(open_row({{"gpus", "8"}, {"dp", "8"}, {"global_batch", "64"},
                                             {"optimizer_sharding", "ZeRO-1 within groups of 8 ranks (zero1=8)"}})))
                  .features.distributed_optimizer);
  const MeasuredCase overlapped = spec_of(map_open_run(
      open_row({{"id", "O-MLL-02"}, {"optimizer_sharding", "OverlappedDistributedOptimizer"}})));
  EXPECT_TRUE(overlapped.features.distributed_optimizer);
  EXPECT_TRUE(overlapped.features.dp_overlap.enabled);
  EXPECT_FALSE(spec_of(map_open_run(open_row({{"id", "O-MLL-04"}, {"optimizer_sharding", "Megatron DistributedOptimizer"}})))
                   .features.dp_overlap.enabled);
}

TEST(OpenMapping, TheSourcesStackSetsSequenceParallelismAndVppTheSchedule) {
  const auto row = [](const std::string& id) {
    return open_row({{"id", id}, {"tp", "2"}, {"pp", "2"}, {"vpp", "2"}, {"dp", "4"}, {"global_batch", "64"}});
  };
  const MeasuredCase megatron = spec_of(map_open_run(row("O-SMXB-01")));
  EXPECT_TRUE(megatron.parallel.sequence_parallel);
  EXPECT_EQ(megatron.parallel.schedule, model::ScheduleKind::kInterleaved1F1B);
  EXPECT_EQ(megatron.parallel.vpp, 2);
  EXPECT_FALSE(megatron.features.dp_overlap.enabled);  // SimuMax's runs overlap nothing
  EXPECT_EQ(megatron.model.attention_impl, model::AttentionImpl::kFused);  // TE 2.11's fused attention
  EXPECT_FALSE(spec_of(map_open_run(row("O-ILM-17"))).parallel.sequence_parallel);
  // Megatron-Core on Transformer Engine (SimuMax, MLPerf, Megatron-Bridge) runs TE's fused memory-
  // bound kernels; InternEvo's layers run InternLM's own set (flash-attn's fused rotary kernel, two
  // eager residual adds, fp32-input norms recomputed in the backward, eager SwiGLU).
  EXPECT_EQ(megatron.model.kernel_stack, model::KernelStack::kTransformerEngine);
  EXPECT_EQ(spec_of(map_open_run(row("O-MLP-01"))).model.kernel_stack, model::KernelStack::kTransformerEngine);
  EXPECT_EQ(spec_of(map_open_run(row("O-ILM-17"))).model.kernel_stack, model::KernelStack::kInternLm);
  // Megatron-LLaMA (mid-2023 Megatron-LM, no TE): flash-attn 1, eager SwiGLU / RoPE / cross-entropy,
  // sequence parallelism as its example scripts run it.
  const MeasuredCase megatron_llama = spec_of(map_open_run(row("O-MLL-02")));
  EXPECT_EQ(megatron_llama.model.kernel_stack, model::KernelStack::kUnfused);
  EXPECT_EQ(megatron_llama.model.attention_impl, model::AttentionImpl::kFlash1);
  EXPECT_TRUE(megatron_llama.parallel.sequence_parallel);
  // A source with no stack in the table keeps the defaults: MoFa Table 2's kernels, FlashAttention-2.
  const MeasuredCase unknown = spec_of(map_open_run(row("O-XYZ-01")));
  EXPECT_EQ(unknown.model.kernel_stack, model::KernelStack::kMofaTable2);
  EXPECT_EQ(unknown.model.attention_impl, model::AttentionImpl::kFused);
  EXPECT_FALSE(unknown.parallel.sequence_parallel);
}

// MLPerf's *_cg configurations say "layer CUDA graphs" / "CUDA graphs" in their notes: their
// kernels replay from graphs (no host launch floors); every other row launches eagerly.
TEST(OpenMapping, RowsWhoseNotesSayCudaGraphsRunWithoutEagerLaunches) {
  const auto row = [](const std::string& notes) {
    return open_row({{"id", "O-MLP-05"}, {"tp", "2"}, {"pp", "2"}, {"dp", "4"}, {"global_batch", "64"},
                     {"notes", notes}});
  };
  EXPECT_TRUE(spec_of(map_open_run(row("MLPerf 'preview'; layer CUDA graphs; cuDNN fused attention")))
                  .features.cuda_graphs);
  EXPECT_TRUE(spec_of(map_open_run(row("NeMo 25.04; cuda graphs"))).features.cuda_graphs);
  EXPECT_FALSE(spec_of(map_open_run(row("NeMo 25.04; TP-comm overlap"))).features.cuda_graphs);
}

// MLPerf's rows say "TP-comm overlap" (TE userbuffers): MoFa(20) with tp pieces, TE's ring
// exchange. O-SMXB's "TP-comm overlap and P2P overlap disabled" and rows without TP are not.
TEST(OpenMapping, RowsWhoseNotesSayTpCommOverlapOverlapTheTpCollectivesInTpPieces) {
  const auto row = [](const std::string& tp, const std::string& notes) {
    return open_row({{"id", "O-MLP-08"}, {"gpus", "8"}, {"tp", tp}, {"pp", "1"}, {"dp", std::to_string(8 / std::stoi(tp))},
                     {"global_batch", "64"}, {"notes", notes}});
  };
  const model::OverlapSpec eight = spec_of(map_open_run(row("8", "sequence parallel; TP-comm overlap; CP=2"))).features.tp_overlap;
  EXPECT_TRUE(eight.enabled);
  EXPECT_EQ(eight.chunks, 8);
  const model::OverlapSpec four = spec_of(map_open_run(row("4", "TP-comm overlap (userbuffers); layer CUDA graphs"))).features.tp_overlap;
  EXPECT_TRUE(four.enabled);
  EXPECT_EQ(four.chunks, 4);
  EXPECT_FALSE(spec_of(map_open_run(row("4", "TP-comm overlap and P2P overlap disabled (non-overlap contract)")))
                   .features.tp_overlap.enabled);
  EXPECT_FALSE(spec_of(map_open_run(row("1", "TP-comm overlap"))).features.tp_overlap.enabled);
  EXPECT_FALSE(spec_of(map_open_run(row("4", "sequence parallel"))).features.tp_overlap.enabled);
}

// torchtitan's async TP (symmetric-memory all-gather + matmul and matmul + reduce-scatter, one shard
// per step) is the same overlap: tp pieces. Its "vanilla TP" rows overlap nothing.
TEST(OpenMapping, TorchtitanAsyncTpOverlapsTheTpCollectivesInTpPieces) {
  const auto row = [](const std::string& notes) {
    return open_row({{"id", "O-TT-15"}, {"gpus", "8"}, {"tp", "8"}, {"pp", "1"}, {"dp", "1"}, {"global_batch", "12"},
                     {"micro_batch", "12"}, {"notes", notes}});
  };
  const model::OverlapSpec async = spec_of(map_open_run(row("async TP; torch.compile on"))).features.tp_overlap;
  EXPECT_TRUE(async.enabled);
  EXPECT_EQ(async.chunks, 8);
  EXPECT_FALSE(spec_of(map_open_run(row("vanilla TP; torch.compile on"))).features.tp_overlap.enabled);
}

// NVLink 5 (B200, GB200): 733.8 GB/s and 6.48 us per ring step, fitted on collectives.csv's 8 x B200
// all-reduce sweep from 8 MiB to 4 GiB. The alpha-beta ring all-reduce of 8 ranks,
// 14 alpha + 14/8 bytes / busBW, against two of those rows: 128 MiB measured 413.2 us (model 410.8),
// 1 GiB measured 2597.7 us (model 2651.3).
TEST(OpenMapping, NvlinkFiveTakesTheLatencyAndBandwidthOfTheB200Sweep) {
  const OpenCase c = map_open_run(open_row({{"id", "O-SMXB-04"}, {"gpu", "B200"}, {"gpus", "8"},
                                            {"interconnect", "single node 8x B200, NVLink5/NVSwitch"},
                                            {"dp", "1"}, {"tp", "8"}, {"global_batch", "4"}, {"micro_batch", "1"}}));
  const MeasuredCase& s = spec_of(c);
  EXPECT_DOUBLE_EQ(s.topology.intra_node.bandwidth, 733.8e9);
  EXPECT_DOUBLE_EQ(s.topology.intra_node.latency, 6.48e-6);
  const auto ring_all_reduce_us = [&](double bytes) {
    return 1e6 * (14 * s.topology.intra_node.latency + 14.0 / 8 * bytes / s.topology.intra_node.bandwidth);
  };
  EXPECT_NEAR(ring_all_reduce_us(134217728), 413.2, 0.01 * 413.2);
  EXPECT_NEAR(ring_all_reduce_us(1073741824), 2597.7, 0.025 * 2597.7);
}

TEST(OpenMapping, GptAndDeepSeekRowsGetTheirArchitecture) {
  const MeasuredCase gpt = spec_of(map_open_run(open_row({{"id", "O-FA-01"}, {"model", "GPT3-125M (flash)"},
                                                          {"hidden", "768"}, {"heads", "12"}, {"kv_heads", "12"},
                                                          {"ffn_hidden", "3072"}})));
  EXPECT_EQ(gpt.model.mlp, model::MlpKind::kGelu);
  EXPECT_EQ(gpt.model.norm, model::NormKind::kLayerNorm);
  EXPECT_EQ(gpt.model.position, model::PositionKind::kLearned);
  EXPECT_TRUE(gpt.model.linear_bias);
  EXPECT_FALSE(gpt.model.untie_embeddings);
  EXPECT_EQ(gpt.model.head_dim, 64);
  EXPECT_EQ(gpt.model.attention_impl, model::AttentionImpl::kFlash1);  // the FA table of 2022-11: FA v1
  const MeasuredCase ds = spec_of(map_open_run(open_row(
      {{"model", "DeepSeek-V2 (236B) shape trimmed to 4 layers (1 dense + 3 MoE), MLA"}, {"layers", "4"},
       {"hidden", "5120"}, {"heads", "128"}, {"kv_heads", ""}, {"ffn_hidden", "12288"}, {"moe_experts", "160"},
       {"moe_topk", "6"}, {"moe_ffn_hidden", "1536"}, {"shared_experts", "2"}, {"ep", "8"}})));
  EXPECT_EQ(ds.model.attention, model::AttentionKind::kMla);
  EXPECT_EQ(ds.model.mla.kv_lora_rank, 512);
  EXPECT_EQ(ds.model.mla.q_lora_rank, 1536);
  EXPECT_EQ(ds.model.moe.num_experts, 160);
  EXPECT_EQ(ds.model.moe.top_k, 6);
  EXPECT_EQ(ds.model.moe.num_shared_experts, 2);
  EXPECT_EQ(ds.model.moe.shared_expert_ffn_hidden_size, 1536);
  EXPECT_EQ(ds.model.moe.first_k_dense_layers, 1);
  EXPECT_EQ(ds.parallel.ep, 8);
  EXPECT_EQ(ds.model.moe.token_dispatcher, model::MoeDispatcher::kAllToAll);  // Megatron's alltoall (O-ILM id here)
  // AutoModel's rows run "kernels: TE + DeepEP": DeepEP's dispatch (flex) and TE's kernels.
  const MeasuredCase am = spec_of(map_open_run(open_row(
      {{"id", "O-AM-03"}, {"model", "DeepSeek-V2 (236B) shape trimmed to 4 layers (1 dense + 3 MoE), MLA"},
       {"layers", "4"}, {"hidden", "5120"}, {"heads", "128"}, {"kv_heads", ""}, {"ffn_hidden", "12288"},
       {"moe_experts", "160"}, {"moe_topk", "6"}, {"moe_ffn_hidden", "1536"}, {"shared_experts", "2"}, {"ep", "8"}})));
  EXPECT_EQ(am.model.moe.token_dispatcher, model::MoeDispatcher::kFlex);
  EXPECT_EQ(am.model.kernel_stack, model::KernelStack::kTransformerEngine);
  const auto k3 = map_open_run(open_row({{"model", "DeepSeek-V3 (671B, MLA; first 3 layers dense FFN 18432)"},
                                         {"kv_heads", ""}, {"moe_experts", "256"}, {"moe_topk", "8"},
                                         {"moe_ffn_hidden", "2048"}, {"shared_experts", "1"}}));
  EXPECT_EQ(spec_of(k3).model.moe.first_k_dense_layers, 3);
  // Llama 4 Maverick (HF interleave_moe_layer_step 2): a dense layer, then a MoE one.
  const MeasuredCase maverick = spec_of(map_open_run(open_row(
      {{"model", "Llama4-Maverick"}, {"layers", "48"}, {"hidden", "5120"}, {"heads", "40"}, {"kv_heads", "8"},
       {"ffn_hidden", "16384"}, {"moe_experts", "128"}, {"moe_topk", "1"}, {"moe_ffn_hidden", "8192"},
       {"shared_experts", "1"}, {"ep", "8"}})));
  EXPECT_FALSE(maverick.model.is_moe_layer(0));
  EXPECT_TRUE(maverick.model.is_moe_layer(1));
  EXPECT_EQ(maverick.model.num_moe_layers(), 24);
  const MeasuredCase every_fourth = spec_of(map_open_run(open_row(
      {{"model", "Llama4 variant (interleave_moe_layer_step 4)"}, {"layers", "48"}, {"hidden", "5120"}, {"heads", "40"},
       {"kv_heads", "8"}, {"ffn_hidden", "16384"}, {"moe_experts", "128"}, {"moe_topk", "1"},
       {"moe_ffn_hidden", "8192"}, {"ep", "8"}})));
  EXPECT_TRUE(every_fourth.model.is_moe_layer(3));  // transformers: (i + 1) % 4 == 0
  EXPECT_FALSE(every_fourth.model.is_moe_layer(4));
  EXPECT_EQ(every_fourth.model.num_moe_layers(), 12);
}

TEST(OpenMapping, AutoModelPipelineRowsRunOneFlushPerLocalBatch) {
  // Kimi K2's row (O-AM-02): gb 512 over dp 32 with local batch 8 is GA = 512 / (32 * 8) = 2
  // schedule.step() calls; DeepSeek-V3's (dp 64) is 512 / (64 * 8) = 1.
  EXPECT_EQ(automodel_pipeline_flushes("NeMo AutoModel; local batch 8, GA 2 (GBS = LBS x FSDP x GA)", 512, 32), 2);
  EXPECT_EQ(automodel_pipeline_flushes("local batch 8, GA 1", 512, 64), 1);
  EXPECT_FALSE(automodel_pipeline_flushes("GA 2", 512, 32));              // no local batch in the notes
  EXPECT_FALSE(automodel_pipeline_flushes("local batch 3, GA 2", 512, 32));  // 32 * 3 = 96 does not divide 512
  EXPECT_FALSE(automodel_pipeline_flushes("local batch 8", 128, 32));      // 256 sequences per flush > 128
  // A 2-stage AutoModel row: 32 sequences over dp 8 with local batch 2 are 2 flushes of 16 (2
  // micro-batches of 1 per rank each).
  const OpenCase am = map_open_run(open_row({{"id", "O-AM-05"}, {"pp", "2"}, {"dp", "8"}, {"micro_batch", "1"},
                                             {"global_batch", "32"}, {"notes", "local batch 2, GA 2"}}));
  EXPECT_EQ(am.pipeline_flushes, 2);
  EXPECT_EQ(spec_of(am).parallel.global_batch, 16);
  EXPECT_EQ(spec_of(am).parallel.microbatches(), 2);
  // Without pipeline parallelism AutoModel accumulates micro-batches in one backward pass each: no flushes.
  const OpenCase flat = map_open_run(open_row({{"id", "O-AM-05"}, {"notes", "local batch 2, GA 4"}}));
  EXPECT_EQ(flat.pipeline_flushes, 1);
  EXPECT_EQ(spec_of(flat).parallel.global_batch, 128);
  const OpenCase unknown = map_open_run(open_row({{"id", "O-AM-05"}, {"pp", "2"}, {"dp", "8"}, {"micro_batch", "1"},
                                                  {"global_batch", "32"}, {"notes", "GA 2"}}));
  EXPECT_FALSE(unknown.spec.has_value());
  EXPECT_THAT(unknown.reasons,
              ElementsAre("an AutoModel pipeline row whose notes give no local batch dividing global_batch / dp"));
}

TEST(OpenMapping, RepeatedFlushesPayTheOptimizerOnce) {
  // One flush: 3 s compute, 1 s EP, 0.5 s bubble, 0.5 s optimizer = 5 s. Two flushes:
  // 2 * (5 - 0.5) + 0.5 = 9.5 s, every category but the optimizer doubled.
  StepPrediction one{.step_s = 5.0, .breakdown = PredictedBreakdown{}};
  one.breakdown->compute = 3.0;
  one.breakdown->ep = 1.0;
  one.breakdown->pp_bubble = 0.5;
  one.breakdown->optimizer = 0.5;
  const StepPrediction two = repeat_pipeline_flushes(one, 2);
  EXPECT_DOUBLE_EQ(two.step_s, 9.5);
  EXPECT_DOUBLE_EQ(two.breakdown->compute, 6.0);
  EXPECT_DOUBLE_EQ(two.breakdown->ep, 2.0);
  EXPECT_DOUBLE_EQ(two.breakdown->pp_bubble, 1.0);
  EXPECT_DOUBLE_EQ(two.breakdown->optimizer, 0.5);
  EXPECT_DOUBLE_EQ(two.breakdown->total(), two.step_s);
  EXPECT_DOUBLE_EQ(repeat_pipeline_flushes(one, 1).step_s, 5.0);
  EXPECT_DOUBLE_EQ(repeat_pipeline_flushes({.step_s = 5.0}, 3).step_s, 15.0);  // no breakdown: all of it repeats
}

TEST(OpenMapping, FsdpFullShardIsZeroThree) {
  // FSDP2's full shard: parameters, gradients and optimizer state sharded over DP (ZeRO-3).
  const OpenCase fsdp = map_open_run(open_row({{"optimizer_sharding", "FSDP2 full shard over 16 DP ranks"}}));
  EXPECT_EQ(spec_of(fsdp).features.dp_sharding, model::DpSharding::kOptimGradsParams);
  EXPECT_TRUE(spec_of(fsdp).features.distributed_optimizer);
  const OpenCase zero1 = map_open_run(open_row({{"optimizer_sharding", "Distributed optimizer"}}));
  EXPECT_EQ(spec_of(zero1).features.dp_sharding, model::DpSharding::kOptim);
  // The other stacks' words for the same levels: FSDP1's sharding strategies and DeepSpeed's stages.
  const auto level_of = [](const std::string& text) { return features_with("optimizer_sharding", text).dp_sharding; };
  EXPECT_EQ(level_of("FSDP (FULL_SHARD)"), model::DpSharding::kOptimGradsParams);
  EXPECT_EQ(level_of("DeepSpeed ZeRO stage 3"), model::DpSharding::kOptimGradsParams);
  EXPECT_EQ(level_of("DeepSpeed ZeRO-2"), model::DpSharding::kOptimGrads);
  EXPECT_EQ(level_of("FSDP SHARD_GRAD_OP"), model::DpSharding::kOptimGrads);
  // FSDP named without a strategy is PyTorch's default, full shard; "FSDP=0" is Megatron-Bridge's "not FSDP".
  EXPECT_EQ(level_of("FSDP2"), model::DpSharding::kOptimGradsParams);
  EXPECT_EQ(level_of("fully_shard over 128 ranks"), model::DpSharding::kOptimGradsParams);
  EXPECT_THAT(reasons_with("optimizer_sharding", "FSDP=0"), ::testing::Contains(HasSubstr("not recognised")));
  EXPECT_EQ(level_of("DeepSpeed ZeRO stage 1"), model::DpSharding::kOptim);
  EXPECT_EQ(level_of("DDP"), model::DpSharding::kNone);
  EXPECT_EQ(level_of("FSDP NO_SHARD"), model::DpSharding::kNone);
  EXPECT_THAT(reasons_with("optimizer_sharding", "FSDP HYBRID_SHARD"),
              ElementsAre("hybrid sharding without its shard group size ('within groups of N')"));
  // A split the layers do not divide evenly needs the run's stage_layers, which the row lacks.
  const OpenCase uneven = map_open_run(open_row({{"gpus", "64"}, {"layers", "61"}, {"pp", "4"}, {"vpp", "8"}}));
  EXPECT_FALSE(uneven.spec.has_value());
  EXPECT_THAT(uneven.reasons, ElementsAre("the schema rejects the layout: parallel: pp*vpp = 32 chunks do not divide 61 "
                                          "layers evenly; list parallel.stage_layers"));
}

TEST(OpenMapping, InternLmZeroOneWithinGroupsIsHsdp) {
  // zero1 = 8 on 16 DP ranks: the optimizer state sharded within 2 groups of 8 and replicated
  // across them, Megatron's num_distributed_optimizer_instances = 16 / 8 = 2.
  const OpenCase c = map_open_run(open_row({{"optimizer_sharding", "ZeRO-1 within groups of 8 ranks (zero1=8; within one node)"}}));
  ASSERT_TRUE(c.spec.has_value()) << (c.reasons.empty() ? "" : c.reasons.front());
  EXPECT_TRUE(spec_of(c).features.distributed_optimizer);
  EXPECT_EQ(spec_of(c).features.dist_opt_instances, 2);
}

TEST(OpenMapping, RowsTheSchemaCannotExpressAreListedWithEveryReason) {
  const OpenCase fsdp_fp8 = map_open_run(open_row({{"id", "O-TT-10"}, {"precision", "fp8 (torchao float8 linears) + bf16"},
                                                    {"optimizer_sharding", "FSDP2 full shard over 16 DP ranks"}}));
  EXPECT_FALSE(fsdp_fp8.spec.has_value());
  EXPECT_EQ(fsdp_fp8.split, "test");
  EXPECT_THAT(fsdp_fp8.reasons,
              ElementsAre("FP8 training on a GPU preset without an FP8 peak"));
  const auto one_reason = [](const std::map<std::string, std::string>& change) {
    const OpenCase c = map_open_run(open_row(change));
    EXPECT_FALSE(c.spec.has_value());
    return c.reasons.size() == 1 ? c.reasons.front() : "reasons: " + std::to_string(c.reasons.size());
  };
  EXPECT_EQ(one_reason({{"gpu", "MI300X"}}), "GPU 'MI300X' not recognised");
  EXPECT_EQ(one_reason({{"optimizer_sharding", "ZeRO-1 within groups of 3 ranks (zero1=3)"}}),
            "ZeRO-1 within groups of 3 ranks that do not divide dp = 16");
  EXPECT_EQ(one_reason({{"recompute", "not stated (Megatron-Bridge performance-recipe defaults)"}}),
            "recompute not stated by the source");
  EXPECT_EQ(one_reason({{"recompute", "selective per-layer AC (frequency not given)"}}),
            "per-layer selective activation checkpointing without its layer frequency");
  EXPECT_EQ(one_reason({{"recompute", "sometimes"}}), "recompute text not recognised: 'sometimes'");
  EXPECT_EQ(one_reason({{"precision", "int8"}}), "precision not recognised: 'int8'");
  EXPECT_EQ(one_reason({{"interconnect", "not stated"}}), "inter-node bandwidth not stated in the interconnect text");
  EXPECT_EQ(one_reason({{"model", "Mamba-2.8B"}}),
            "model family of 'Mamba-2.8B' not recognised (GPT-2/3, OPT, GPT-NeoX, Nemotron-4, Llama, Mistral, Qwen, DeepSeek, ...)");
  EXPECT_EQ(one_reason({{"model", "BLOOM-176B"}}), "ALiBi position biases (BLOOM-176B) are not in the schema");
  EXPECT_EQ(one_reason({{"model", "Llama4-Maverick-400B"}, {"moe_experts", "128"}, {"moe_topk", "1"},
                        {"moe_ffn_hidden", "8192"}, {"ffn_hidden", ""}}),
            "dense layers without ffn_hidden");
  EXPECT_EQ(one_reason({{"model", "Llama4 variant (interleave_moe_layer_step 99)"}, {"moe_experts", "8"}, {"moe_topk", "1"},
                        {"moe_ffn_hidden", "8192"}}),
            "interleave_moe_layer_step 99 outside 1-64");
  EXPECT_EQ(one_reason({{"model", "gpt-oss-20b (sliding-window attention, size unstated)"}}),
            "gpt-oss row without its window size");
  EXPECT_EQ(one_reason({{"measured_quantity", "mfu"}}),
            "mfu under a FLOP convention whose formula the row does not state (none given)");
  EXPECT_EQ(one_reason({{"measured_quantity", "tflops_per_gpu"}, {"flops_convention", "our own count (not published)"}}),
            "tflops_per_gpu under a FLOP convention whose formula the row does not state (our own count)");
  // 16,777,216 sequences on 16 GPUs of micro-batch 2: 524,288 micro-batches x 32 layers x 2 x 32.
  EXPECT_EQ(one_reason({{"global_batch", "16777216"}}),
            "an estimated 1073741824 simulator tasks per step exceed the scenario budget of 2e7");
  EXPECT_THAT(one_reason({{"tp", "3"}, {"dp", "16"}, {"gpus", "48"}, {"global_batch", "96"}}),
              HasSubstr("the schema rejects the layout: parallel.tp (3) must divide num_attention_heads (32)"));
}

TEST(OpenMapping, Fp8PrecisionTextBecomesTheRecipe) {
  const auto fp8_of = [](const std::string& gpu, const std::string& precision) {
    // A Megatron-Core + TE source (the base row's InternLM runs flash-attn 1, which has no Blackwell curves).
    return spec_of(map_open_run(open_row({{"id", "O-SMXB-01"}, {"gpu", gpu}, {"precision", precision}}))).features.fp8;
  };
  const model::Fp8Spec te = fp8_of("H100-SXM5-80GB", "fp8 (TE hybrid E4M3/E5M2, FP8 weights) with bf16 master/optimizer path");
  EXPECT_TRUE(te.enabled);
  EXPECT_EQ(te.recipe, model::Fp8Recipe::kDelayed);  // TE's and Megatron's default
  EXPECT_TRUE(te.fprop && te.dgrad && te.wgrad);
  EXPECT_FALSE(te.output_layer);
  EXPECT_EQ(fp8_of("B200 (DGX B200)", "FP8 current scaling (FP8-CS)").recipe, model::Fp8Recipe::kCurrent);
  EXPECT_EQ(fp8_of("B200 (DGX B200)", "MXFP8").recipe, model::Fp8Recipe::kMxfp8);
  EXPECT_EQ(fp8_of("B200 (DGX B200)", "FP8 (implied)").recipe, model::Fp8Recipe::kDelayed);
  // The recipe the first clause names; a side value in a later clause does not count.
  EXPECT_EQ(fp8_of("B200 (DGX B200)", "FP8-MX (MXFP8)").recipe, model::Fp8Recipe::kMxfp8);
  EXPECT_EQ(fp8_of("B200 (DGX B200)", "FP8 (footnote implies FP8, value in parentheses = MXFP8 32x32)").recipe,
            model::Fp8Recipe::kDelayed);
  EXPECT_EQ(fp8_of("B200 (DGX B200)", "FP8-CS").recipe, model::Fp8Recipe::kCurrent);
  EXPECT_EQ(fp8_of("H100-SXM5-80GB", "FP8 blockwise (1x128 activations, 128x128 weights)").recipe,
            model::Fp8Recipe::kBlockwise);
  EXPECT_EQ(fp8_of("H100-SXM5-80GB", "fp8 (torchao float8 linears) + bf16").recipe, model::Fp8Recipe::kCurrent);
  EXPECT_THAT(reasons_with("precision", "NVFP4"), ::testing::Contains("FP4 training (NVFP4) is not in the schema"));
  EXPECT_FALSE(fp8_of("H100-SXM5-80GB", "bf16").enabled);
  const OpenCase mx_on_hopper = map_open_run(open_row({{"gpu", "H100-SXM5-80GB"}, {"precision", "MXFP8"}}));
  EXPECT_FALSE(mx_on_hopper.spec.has_value());
  EXPECT_THAT(mx_on_hopper.reasons, ElementsAre("MXFP8 on a GPU that is not Blackwell"));
}

// The interleaved schedule needs the micro-batches of one pipeline flush to be a multiple of pp
// (the scenario schema's rule): a row that breaks it is listed, not priced.
TEST(OpenMapping, InterleavedFlushesThatAreNotAMultipleOfPpAreAReason) {
  const OpenCase c = map_open_run(open_row({{"id", "O-SMXB-01"}, {"tp", "1"}, {"pp", "4"}, {"vpp", "2"}, {"dp", "4"},
                                            {"micro_batch", "1"}, {"global_batch", "24"}}));
  EXPECT_FALSE(c.spec.has_value());
  EXPECT_THAT(c.reasons, ElementsAre("interleaved 1F1B with 6 micro-batches per pipeline flush, not a multiple of pp = 4"));
  EXPECT_TRUE(map_open_run(open_row({{"id", "O-SMXB-01"}, {"tp", "1"}, {"pp", "4"}, {"vpp", "2"}, {"dp", "4"},
                                     {"micro_batch", "1"}, {"global_batch", "32"}})).spec.has_value());
}

// Other stacks' words for recompute and precision: Megatron's flag as written, "no ...", PyTorch /
// Hugging Face activation (gradient) checkpointing, and FP16 mixed precision (BF16's rates, FP16
// parameters); what no rule reads stays a reason.
TEST(OpenMapping, OtherStacksRecomputeAndPrecisionWords) {
  const auto recompute_of = [](const std::string& text) { return features_with("recompute", text).recompute; };
  EXPECT_EQ(recompute_of("--recompute-granularity full --recompute-method uniform"), model::RecomputeKind::kFull);
  EXPECT_EQ(recompute_of("recompute_granularity=selective"), model::RecomputeKind::kSelective);
  EXPECT_EQ(recompute_of("no activation checkpointing"), model::RecomputeKind::kNone);
  EXPECT_EQ(recompute_of("off"), model::RecomputeKind::kNone);
  EXPECT_EQ(recompute_of("HF gradient checkpointing"), model::RecomputeKind::kFull);
  EXPECT_THAT(reasons_with("recompute", "sometimes"), ElementsAre("recompute text not recognised: 'sometimes'"));
  const model::FeatureSpec fp16 = features_with("precision", "fp16 mixed precision (loss scaling)");
  EXPECT_EQ(fp16.compute_dtype, model::DType::kFp16);
  EXPECT_EQ(fp16.param_dtype, model::DType::kFp16);
  EXPECT_EQ(fp16.grad_dtype, model::DType::kFp32);
  EXPECT_FALSE(fp16.fp8.enabled);
  EXPECT_EQ(features_with("precision", "bf16").compute_dtype, model::DType::kBf16);
  EXPECT_THAT(reasons_with("precision", "tf32"), ElementsAre("precision not recognised: 'tf32'"));
}

// Model families by how they are built: GPT-style (learned positions, non-gated MLP, LayerNorm,
// biases, tied: GPT-3, OPT), non-gated with RoPE (GPT-NeoX with biases, Nemotron-4 without),
// Llama-style (Mistral, Qwen, DeepSeek LLM), MLA only for DeepSeek-V2/V3 and Kimi.
TEST(OpenMapping, ModelFamiliesTakeTheirArchitecture) {
  const auto model_of = [](const std::string& text) { return spec_of(map_open_run(open_row({{"model", text}}))).model; };
  const model::ModelSpec opt = model_of("OPT-175B");
  EXPECT_EQ(opt.mlp, model::MlpKind::kGelu);
  EXPECT_EQ(opt.position, model::PositionKind::kLearned);
  EXPECT_TRUE(opt.linear_bias);
  EXPECT_FALSE(opt.untie_embeddings);
  const model::ModelSpec neox = model_of("GPT-NeoX-20B");
  EXPECT_EQ(neox.mlp, model::MlpKind::kGelu);
  EXPECT_EQ(neox.position, model::PositionKind::kRope);
  EXPECT_TRUE(neox.linear_bias);
  EXPECT_TRUE(neox.untie_embeddings);
  const model::ModelSpec nemotron = model_of("Nemotron-4 340B");
  EXPECT_EQ(nemotron.mlp, model::MlpKind::kGelu);
  EXPECT_EQ(nemotron.norm, model::NormKind::kLayerNorm);
  EXPECT_FALSE(nemotron.linear_bias);
  for (const char* llama_style : {"Mistral-7B", "Qwen2.5-72B", "DeepSeek LLM 67B", "Yi-34B"}) {
    const model::ModelSpec m = model_of(llama_style);
    EXPECT_EQ(m.mlp, model::MlpKind::kSwiglu) << llama_style;
    EXPECT_EQ(m.attention, model::AttentionKind::kMha) << llama_style;  // the base row's kv_heads = heads
  }
  const OpenCase v3_without_dense = map_open_run(open_row({{"model", "DeepSeek-V3"}, {"moe_experts", "256"},
                                                           {"moe_topk", "8"}, {"moe_ffn_hidden", "2048"}}));
  EXPECT_THAT(v3_without_dense.reasons,
              ElementsAre("the number of dense layers before the MoE layers is not in the model text"));
}

TEST(OpenMapping, LayersThatDoNotSplitOverTheChunksAreAReason) {
  // 30 layers over pp 2 x vpp 2 = 4 chunks: refused here, not by the simulator later.
  const OpenCase uneven = map_open_run(open_row({{"layers", "30"}, {"pp", "2"}, {"vpp", "2"}, {"dp", "8"}}));
  EXPECT_FALSE(uneven.spec.has_value());
  EXPECT_THAT(uneven.reasons, ElementsAre("the schema rejects the layout: parallel: pp*vpp = 4 chunks do not divide 30 "
                                          "layers evenly; list parallel.stage_layers"));
}

TEST(OpenMapping, TorchtitanCheckpointingTextsBecomeItsOptions) {
  // selective_ac_option: 2 -> full recompute of every 2nd layer.
  const model::FeatureSpec every2 =
      spec_of(map_open_run(open_row({{"id", "O-TT-02"}, {"recompute", "selective per-layer AC (torchtitan "
                                                                        "selective_ac_option=int; every 2nd layer assumed)"}})))
          .features;
  EXPECT_EQ(every2.recompute, model::RecomputeKind::kFull);
  EXPECT_EQ(every2.recompute_method, model::RecomputeMethod::kEveryNth);
  EXPECT_EQ(every2.recompute_num_layers, 2);
  // selective_ac_option: op -> the per-op policy, in its _scaled_mm form with float8 linears.
  const model::FeatureSpec op = spec_of(map_open_run(open_row({{"id", "O-TT-14"}, {"recompute", "per-op selective AC"}}))).features;
  EXPECT_EQ(op.recompute, model::RecomputeKind::kSelective);
  EXPECT_EQ(op.recompute_modules, model::recompute_bit(model::RecomputeModule::kTorchtitanOp));
  const model::FeatureSpec op_fp8 =
      spec_of(map_open_run(open_row({{"id", "O-TT-16"}, {"gpu", "H100-SXM5-80GB"}, {"recompute", "per-op selective AC"},
                                     {"precision", "fp8 tensorwise (torchao float8 linears) + bf16"}})))
          .features;
  EXPECT_EQ(op_fp8.recompute_modules, model::recompute_bit(model::RecomputeModule::kTorchtitanOpScaledMm));
}

TEST(OpenMapping, GptOssAlternatesA128TokenWindowWithFullAttention) {
  const MeasuredCase s = spec_of(map_open_run(open_row(
      {{"id", "O-AM-04"}, {"model", "gpt-oss-20b (alternating 128-token sliding-window / full attention, head dim 64)"},
       {"layers", "24"}, {"hidden", "2880"}, {"heads", "64"}, {"kv_heads", "8"}})));
  EXPECT_EQ(s.model.window_size, 128);
  EXPECT_EQ(s.model.window_attn_skip_freq, 2);
  EXPECT_EQ(s.model.head_dim, 64);  // from the text: 2880 / 64 heads would be 45
  EXPECT_TRUE(s.model.linear_bias);
  EXPECT_EQ(s.model.attention, model::AttentionKind::kGqa);
}

TEST(OpenMapping, UnevenLayoutsTakeTheSplitTheirFrameworkUses) {
  // AutoModel: 61 layers over 32 stages, 1 each and the first 61 % 32 = 29 one more.
  const auto automodel = automodel_split(61, 32);
  ASSERT_TRUE(automodel.has_value());
  EXPECT_EQ((*automodel)[0], 2);
  EXPECT_EQ((*automodel)[28], 2);
  EXPECT_EQ((*automodel)[29], 1);
  EXPECT_EQ((*automodel)[31], 1);
  EXPECT_FALSE(automodel_split(3, 4));
  model::ParallelSpec untouched;
  untouched.pp = 8;
  untouched.vpp = 8;
  EXPECT_FALSE(apply_open_source_split(SourceFramework::kSimuMaxMegatron, 126, untouched));  // no known rule: the row stays listed
  EXPECT_TRUE(untouched.stage_layers.empty());
  EXPECT_FALSE(untouched.account_for_embedding || untouched.account_for_loss);

  // The MLPerf 405B layout on 64 H100s of 8, pp 8 x vpp 8: Megatron with the embedding and the loss
  // counted as layers (llama31_405b, ASYM_PP_*) sets the schema's two flags, and the model's split
  // gives 126 + 2 = 128 over 64 chunks, 2 each, the first and the last chunk one fewer.
  const MeasuredCase mlperf = spec_of(map_open_run(open_row(
      {{"id", "O-MLP-08"}, {"gpu", "H100-SXM5-80GB"}, {"gpus", "64"}, {"layers", "126"}, {"hidden", "4096"},
       {"heads", "32"}, {"kv_heads", "8"}, {"ffn_hidden", "14336"}, {"pp", "8"}, {"vpp", "8"}, {"dp", "8"},
       {"micro_batch", "1"}, {"global_batch", "64"}})));
  EXPECT_TRUE(mlperf.parallel.account_for_embedding);
  EXPECT_TRUE(mlperf.parallel.account_for_loss);
  EXPECT_TRUE(mlperf.parallel.stage_layers.empty());
  const std::vector<model::ChunkLayers> chunks = model::chunk_layers(mlperf.model, mlperf.parallel);
  ASSERT_EQ(chunks.size(), 64U);
  EXPECT_EQ(chunks.front().num_layers, 1);
  EXPECT_EQ(chunks[1].num_layers, 2);
  EXPECT_EQ(chunks[62].num_layers, 2);
  EXPECT_EQ(chunks.back().num_layers, 1);
  // 125 + 2 = 127 is not a multiple of 64: Megatron refuses it, and so does the mapping.
  const OpenCase odd = map_open_run(open_row(
      {{"id", "O-MLP-90"}, {"gpu", "H100-SXM5-80GB"}, {"gpus", "64"}, {"layers", "125"}, {"pp", "8"}, {"vpp", "8"},
       {"dp", "8"}, {"micro_batch", "1"}, {"global_batch", "64"}}));
  EXPECT_THAT(odd.reasons, ElementsAre(HasSubstr("125 layers + 2 (embedding / loss) = 127")));
  // The same row under a source without a known rule is listed with the schema's reason.
  const OpenCase other = map_open_run(open_row(
      {{"id", "O-SMXB-90"}, {"gpus", "64"}, {"layers", "126"}, {"pp", "8"}, {"vpp", "8"}, {"dp", "8"},
       {"micro_batch", "1"}, {"global_batch", "64"}}));
  EXPECT_THAT(other.reasons, ElementsAre(HasSubstr("do not divide 126 layers evenly")));
}

// A system named by its product carries its data sheet's fabric where the text gives no rate: the
// OCI MLPerf rows ("OCI BM.GPU.H100.8 ... RoCEv2 cluster network") run on 3.2 Tb/s per node.
TEST(OpenMapping, ANamedSystemBringsItsFabricRate) {
  EXPECT_DOUBLE_EQ(*named_system_bytes_per_node("H100-SXM5-80GB (OCI BM.GPU.H100.8)", 8), 400e9);
  EXPECT_DOUBLE_EQ(*named_system_bytes_per_node("Azure ND H100 v5", 8), 400e9);
  EXPECT_DOUBLE_EQ(*named_system_bytes_per_node("AWS p4d.24xlarge", 8), 50e9);
  EXPECT_DOUBLE_EQ(*named_system_bytes_per_node("DGX A100 SuperPOD", 8), 200e9);
  EXPECT_EQ(named_system_bytes_per_node("Meta A100 cluster", 8), std::nullopt);
  // Rack-scale trays of 4: DGX GB200's 4 x 400 Gb/s ConnectX-7, GB300 NVL72's 4 x 800 Gb/s ConnectX-8.
  EXPECT_DOUBLE_EQ(*named_system_bytes_per_node("DGX GB200 (NVL72)", 4), 200e9);
  EXPECT_DOUBLE_EQ(*named_system_bytes_per_node("GB300 NVL72 rack", 4), 400e9);
  // A node of another size is not the product: no rate.
  EXPECT_EQ(named_system_bytes_per_node("DGX H100", 4), std::nullopt);
  EXPECT_EQ(named_system_bytes_per_node("DGX GB200", 8), std::nullopt);
  const OpenCase oci = map_open_run(open_row(
      {{"id", "O-MLP-06"}, {"gpu", "H100-SXM5-80GB (OCI BM.GPU.H100.8)"}, {"gpus", "16"}, {"dp", "16"},
       {"interconnect", "OCI BM.GPU.H100.8: NVLink4/NVSwitch 900 GB/s; RoCEv2 cluster network"}}));
  EXPECT_DOUBLE_EQ(spec_of(oci).topology.inter_node.bandwidth, 400e9 / 8);  // per GPU
  // A Megatron-Bridge GB300 row over two racks (128 GPUs) names its system only: 800 Gb/s per GPU
  // between racks, NVLink within each.
  const OpenCase gb300 = map_open_run(open_row(
      {{"id", "H-1"}, {"gpu", "GB300"}, {"gpus", "128"}, {"gpus_per_node", "4"}, {"dp", "128"}, {"micro_batch", "1"},
       {"global_batch", "256"}, {"interconnect", "DGX GB300 NVL72 (GB300 NVL72 rack spec, not stated in the doc)"}}));
  ASSERT_TRUE(spec_of(gb300).topology.inter_supernode.has_value());
  EXPECT_DOUBLE_EQ(spec_of(gb300).topology.inter_supernode->bandwidth, 800e9 / 8);
  // A rate the text states wins over the named system's.
  const OpenCase stated = map_open_run(open_row(
      {{"gpu", "H100 (DGX H100)"}, {"gpus", "16"}, {"dp", "16"}, {"interconnect", "DGX H100; 4x 100 Gb RoCE per node"}}));
  EXPECT_DOUBLE_EQ(spec_of(stated).topology.inter_node.bandwidth, 50e9 / 8);
}

TEST(OpenMapping, TheGrandTetonH100HasItsOwnPreset) {
  const OpenCase c = map_open_run(open_row({{"id", "O-TT-12"}, {"gpu", "H100-SXM-96GB-HBM2e (Grand Teton, 500 W power limit)"},
                                            {"interconnect", "RDMA backend 400 Gb/s per GPU"}}));
  const MeasuredCase& s = spec_of(c);
  EXPECT_EQ(c.gpu_family, "H100-96GB");
  EXPECT_EQ(s.hardware.name, "H100-SXM-96GB-HBM2e");
  EXPECT_DOUBLE_EQ(s.hardware.hbm_bandwidth, 2400e9);  // torchtitan's benchmark doc: 2.4 TB/s
  EXPECT_DOUBLE_EQ(s.hardware.gpu_memory_bytes, 96e9);       // 96 GB HBM2e
  EXPECT_DOUBLE_EQ(s.hardware.peak_flops_bf16, 835.5e12);  // the die's rating on its 350-600 W boards
  EXPECT_DOUBLE_EQ(s.topology.inter_node.bandwidth, 400e9 / 8);  // 400 Gb/s per GPU
}

// H800 (DeepSeek's GPU) runs its own preset over its cut NVLink (~160 GB/s achieved, DeepSeek-V3
// report); the A100 40GB its own (HBM2 at 1,555 GB/s).
TEST(OpenMapping, H800AndA100FortyGbHaveTheirPresets) {
  const OpenCase h800 = map_open_run(open_row({{"id", "X-NEW-01"}, {"gpu", "H800-SXM5-80GB"}}));
  EXPECT_EQ(h800.gpu_family, "H800");
  EXPECT_EQ(spec_of(h800).hardware.name, "H800-SXM5-80GB");
  EXPECT_DOUBLE_EQ(spec_of(h800).topology.intra_node.bandwidth, 160e9);
  const OpenCase a100 = map_open_run(open_row({{"gpu", "A100-SXM4-40GB"}}));
  EXPECT_EQ(a100.gpu_family, "A100-SXM4-40GB");
  EXPECT_DOUBLE_EQ(spec_of(a100).hardware.hbm_bandwidth, 1555e9);
  EXPECT_DOUBLE_EQ(spec_of(a100).topology.intra_node.bandwidth, 200e9);
}

// Other files name the same parts differently ("A100 80GB", "NVIDIA H100 SXM", "H800"); the H100
// PCIe and NVL boards have no preset and say so.
TEST(OpenMapping, GpuNamesAreReadByTheirWords) {
  const auto family_of = [](const std::string& gpu) { return map_open_run(open_row({{"gpu", gpu}})).gpu_family; };
  EXPECT_EQ(family_of("A100 80GB SXM"), "A100-SXM4-80GB");
  EXPECT_EQ(family_of("NVIDIA A100-SXM4-40GB"), "A100-SXM4-40GB");
  EXPECT_EQ(family_of("NVIDIA H100 SXM (NVLink)"), "H100-SXM5-80GB");
  EXPECT_EQ(family_of("nvidia h800"), "H800");
  // A800: the A100 preset over its 400 GB/s NVLink (2/3 of the A100's measured 200 GB/s bus rate).
  const OpenCase a800 = map_open_run(open_row({{"gpu", "NVIDIA A800-SXM4-80GB"}}));
  EXPECT_EQ(a800.gpu_family, "A800-SXM4-80GB");
  EXPECT_EQ(spec_of(a800).hardware.name, spec_of(map_open_run(open_row())).hardware.name);
  EXPECT_NEAR(spec_of(a800).topology.intra_node.bandwidth, 133.33e9, 0.01e9);
  EXPECT_EQ(family_of("GB200 (NVL72)"), "GB200");
  EXPECT_EQ(family_of("GB300 NVL72"), "GB300");  // Blackwell Ultra, before B300 / B200
  EXPECT_EQ(family_of("NVIDIA B300 (DGX B300)"), "B300");
  EXPECT_EQ(family_of("B200 (DGX B200)"), "B200");
  const OpenCase pcie = map_open_run(open_row({{"gpu", "H100 PCIe 80GB"}}));
  EXPECT_EQ(pcie.gpu_family, "H100-PCIe/NVL");
  EXPECT_THAT(pcie.reasons, ::testing::Contains("no hardware preset for the H100 PCIe / NVL boards"));
  EXPECT_THAT(map_open_run(open_row({{"gpu", "MI300X"}})).reasons, ::testing::Contains("GPU 'MI300X' not recognised"));
}

// A GB300 NVL72 row (as MLPerf v5.x and Megatron-Bridge write them) runs on the gb300 preset with its
// 72-GPU NVLink domain as a supernode and the 800 Gb/s ConnectX-8 NIC per GPU beyond it.
TEST(OpenMapping, AGb300RowRunsOnItsRackAsASupernode) {
  const OpenCase c = map_open_run(open_row(
      {{"id", "H-GB300-1"}, {"gpu", "GB300"}, {"gpus", "144"}, {"gpus_per_node", "4"}, {"dp", "144"},
       {"global_batch", "288"}, {"micro_batch", "1"},
       {"interconnect", "GB300 NVL72: 72-GPU NVLink domain; 800 Gb/s per GPU ConnectX-8"}}));
  const MeasuredCase& s = spec_of(c);
  EXPECT_EQ(c.gpu_family, "GB300");
  EXPECT_EQ(s.hardware.name, "GB300-NVL72");
  EXPECT_EQ(s.topology.nodes_per_supernode, 18);  // two full racks of 72 / 4 trays
  EXPECT_DOUBLE_EQ(s.topology.inter_node.bandwidth, 733.8e9);  // NVLink 5 inside the rack
  ASSERT_TRUE(s.topology.inter_supernode.has_value());
  EXPECT_DOUBLE_EQ(s.topology.inter_supernode->bandwidth, 100e9);  // 800 Gb/s per GPU
}

// A GB200 row whose interconnect text does not spell out the rack ("DGX GB200", as a performance
// summary's system name) still runs on its 72-GPU NVLink domain: every GB200 / GB300 ships as one.
TEST(OpenMapping, GraceBlackwellRowsRunOnTheirNvlinkDomainWhateverTheText) {
  const OpenCase c = map_open_run(open_row(
      {{"id", "H-GB200-1"}, {"gpu", "GB200 (DGX GB200)"}, {"gpus", "144"}, {"gpus_per_node", "4"}, {"dp", "144"},
       {"global_batch", "288"}, {"micro_batch", "1"}, {"interconnect", "DGX GB200; 400 Gb/s per GPU InfiniBand"}}));
  const MeasuredCase& s = spec_of(c);
  EXPECT_EQ(s.topology.nodes_per_supernode, 18);
  EXPECT_DOUBLE_EQ(s.topology.inter_node.bandwidth, 733.8e9);
  // An H100 text naming no NVLink domain keeps nodes of 8 on InfiniBand.
  EXPECT_EQ(spec_of(map_open_run(open_row({{"gpu", "H100-SXM5-80GB"}, {"gpus", "16"}, {"dp", "16"},
                                          {"interconnect", "8x 400 Gb/s IB per node"}})))
                .topology.nodes_per_supernode,
            0);  // 0: no supernode level
}

// A GB200 / GB300 run of a few trays stays inside one NVLink domain: no NIC rate is needed.
TEST(OpenMapping, AGraceBlackwellRunInsideOneRackNeedsNoNicRate) {
  const OpenCase c = map_open_run(open_row({{"id", "H-1"}, {"gpu", "GB300 (DGX GB300)"}, {"gpus", "16"},
                                            {"gpus_per_node", "4"}, {"dp", "16"}, {"interconnect", "DGX GB300"}}));
  const MeasuredCase& s = spec_of(c);
  EXPECT_DOUBLE_EQ(s.topology.inter_node.bandwidth, 733.8e9);
  EXPECT_EQ(s.topology.nodes_per_supernode, 0);  // one domain holds the run
  EXPECT_FALSE(s.topology.inter_supernode.has_value());
  // Beyond one rack the NIC rate is needed again: a named system's (DGX GB300: 800 Gb/s per GPU), or
  // the row is listed.
  const auto two_racks = [](const char* interconnect) {
    return map_open_run(open_row({{"id", "H-1"}, {"gpu", "GB300"}, {"gpus", "144"}, {"gpus_per_node", "4"}, {"dp", "144"},
                                  {"global_batch", "288"}, {"micro_batch", "1"}, {"interconnect", interconnect}}));
  };
  EXPECT_DOUBLE_EQ(spec_of(two_racks("DGX GB300")).topology.inter_supernode->bandwidth, 800e9 / 8);
  EXPECT_THAT(two_racks("GB300 racks").reasons, ::testing::Contains(HasSubstr("inter-node bandwidth not stated")));
}

TEST(OpenMapping, Nvl72RunsSpreadTheirGpusOverTheRacksTheNotesName) {
  EXPECT_EQ(open_nvl72_nodes_per_domain("MLPerf Training v5.0 Tyche 4x NVL72; FP8", 256, 4), 16);  // 64 GPUs a rack
  EXPECT_EQ(open_nvl72_nodes_per_domain("Carina 39x NVL72 (2496 GPUs)", 2496, 4), 16);
  // No count: the fewest racks holding the run evenly in whole trays.
  EXPECT_EQ(open_nvl72_nodes_per_domain("no rack count", 256, 4), 16);    // 4 racks of 64
  EXPECT_EQ(open_nvl72_nodes_per_domain("2x NVL72", 256, 4), 16);         // 128 a rack is more than 72
  EXPECT_EQ(open_nvl72_nodes_per_domain("", 144, 4), 18);                 // 2 full racks
  EXPECT_EQ(open_nvl72_nodes_per_domain("", 128, 4), 16);                 // 2 racks of 64
  EXPECT_EQ(open_nvl72_nodes_per_domain("", 1024, 4), 16);                // 15 racks do not divide it; 16 of 64
  EXPECT_EQ(open_nvl72_nodes_per_domain("", 100, 4), 0);                  // 25 trays: no even split on 2 to 4 racks
  EXPECT_EQ(open_nvl72_nodes_per_domain("", 148, 4), 0);                  // 37 trays
  // Such a row is listed with the reason, not placed on racks of one tray.
  EXPECT_THAT(map_open_run(open_row({{"id", "H-1"}, {"gpu", "GB200"}, {"gpus", "148"}, {"gpus_per_node", "4"},
                                     {"dp", "148"}, {"micro_batch", "1"}, {"global_batch", "296"},
                                     {"interconnect", "DGX GB200"}}))
                  .reasons,
              ElementsAre(HasSubstr("37 trays do not split evenly over the NVL72 racks")));
}

TEST(OpenMapping, TheSplitIsDeclaredBySource) {
  EXPECT_EQ(open_split("O-SMXB"), "fit");
  EXPECT_EQ(open_split("O-ILM"), "fit");
  EXPECT_EQ(open_split("O-AM"), "fit");
  EXPECT_EQ(open_split("O-MLP"), "fit");
  for (const char* held_out : {"O-SMXA", "O-TT", "O-MBR", "O-FA", "O-MLL", "O-NEW"}) EXPECT_EQ(open_split(held_out), "test");
}

}  // namespace
}  // namespace mofasim::analysis
