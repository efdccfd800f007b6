// Memory model: bytes per parameter (reference-formulas.md §1.3), static memory (MoFa(4) MoFa(25) MoFa(26)
// MoFa(27) MoFa(28)), activation per stage (MoFa(5) MoFa(29) MoFa(30) MoFa(31) MoFa(32) MoFa(33) MoFa(34)
// MoFa(35)), peak and out-of-memory (MoFa(6)), MemFine.
#include "model/memory.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "model/op_table.h"
#include "model/params.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using testing::deepseek_v3;
using testing::llama2_70b;
using testing::parallel_spec;

TEST(BytesPerParam, MixedPrecisionAdamIs18AndShardsTwelve) {
  const FeatureSpec plain;
  EXPECT_EQ(bytes_per_param(plain).total(), 18.0);  // 2 + 4 + 4 + 4 + 4
  EXPECT_EQ(gpu_bytes_per_param(plain, 16), 18.0);   // not distributed: nothing sharded
  FeatureSpec dist;
  dist.distributed_optimizer = true;
  EXPECT_EQ(gpu_bytes_per_param(dist, 16), 6 + 12.0 / 16);
  EXPECT_EQ(gpu_bytes_per_param(dist, 1), 18.0);
  EXPECT_THROW(gpu_bytes_per_param(dist, 0), std::invalid_argument);
}

TEST(BytesPerParam, DeepSeekBf16MomentsAndCpuOptimizer) {
  FeatureSpec ds;
  ds.optimizer_state_dtype = DType::kBf16;  // exp_avg
  ds.exp_avg_sq_dtype = DType::kBf16;
  EXPECT_EQ(bytes_per_param(ds).total(), 14.0);  // 2 + 4 + 4 + 2 + 2
  ds.distributed_optimizer = true;
  EXPECT_EQ(gpu_bytes_per_param(ds, 8), 2 + 4 + 8.0 / 8);
  FeatureSpec cpu;
  cpu.optimizer_placement = OptimizerPlacement::kCpu;
  EXPECT_EQ(gpu_bytes_per_param(cpu, 16), 6.0);  // weights + grads stay on the GPU
  FeatureSpec fp32;
  fp32.param_dtype = DType::kFp32;
  EXPECT_EQ(bytes_per_param(fp32).total(), 16.0);  // no separate master copy
}

TEST(BytesPerParam, MegatronDistributedOptimizerTableRows) {
  // Megatron docs/user-guide/features/dist_optimizer.md (reference-formulas.md §1.3), d = 8.
  FeatureSpec fp16;  // fp16 params / fp16 grads: the optimizer keeps an fp32 copy of its grad shard
  fp16.param_dtype = DType::kFp16;
  fp16.grad_dtype = DType::kFp16;
  EXPECT_EQ(bytes_per_param(fp16).total(), 20.0);
  fp16.distributed_optimizer = true;
  EXPECT_EQ(gpu_bytes_per_param(fp16, 8), 4 + 16.0 / 8);
  FeatureSpec fp32;  // fp32 params / fp32 grads: no master copy
  fp32.param_dtype = DType::kFp32;
  fp32.distributed_optimizer = true;
  EXPECT_EQ(gpu_bytes_per_param(fp32, 8), 8 + 8.0 / 8);
  FeatureSpec bf16;  // bf16 params / fp32 main grads
  bf16.distributed_optimizer = true;
  EXPECT_EQ(gpu_bytes_per_param(bf16, 8), 6 + 12.0 / 8);
  // --main-grads-dtype bf16 (precision-aware optimizer): no fp32 copy, 2 + 2 + 4 + 8.
  FeatureSpec bf16_grads;
  bf16_grads.grad_dtype = DType::kBf16;
  EXPECT_EQ(bytes_per_param(bf16_grads).total(), 16.0);
  // --main-params-dtype fp16 and fp8 moments (--exp-avg-dtype / --exp-avg-sq-dtype fp8): 2 + 4 + 2 + 1 + 1.
  FeatureSpec small;
  small.master_dtype = DType::kFp16;
  small.optimizer_state_dtype = DType::kFp8;
  small.exp_avg_sq_dtype = DType::kFp8;
  EXPECT_EQ(bytes_per_param(small).total(), 10.0);
}

TEST(BytesPerParam, Zero2ShardsGradientsAndZero3Parameters) {
  FeatureSpec z2;
  z2.dp_sharding = DpSharding::kOptimGrads;
  EXPECT_EQ(dp_sharding(z2), DpSharding::kOptimGrads);
  EXPECT_EQ(gpu_bytes_per_param(z2, 8), 2 + 16.0 / 8);  // bf16 weights whole, fp32 grads + optimizer sharded
  FeatureSpec z3;
  z3.dp_sharding = DpSharding::kOptimGradsParams;
  EXPECT_EQ(gpu_bytes_per_param(z3, 8), 18.0 / 8);
  FeatureSpec legacy;  // distributed: true is ZeRO-1
  legacy.distributed_optimizer = true;
  EXPECT_EQ(dp_sharding(legacy), DpSharding::kOptim);
}

TEST(StaticMemory, Zero2And3KeepTheirShardsAndTransientFullBuffers) {
  const ModelSpec m = llama2_70b();
  HardwareSpec hw;
  hw.gpu_memory_bytes = 80e9;
  const ParallelSpec p = parallel_spec({.tp = 8, .pp = 1, .dp = 16, .global_batch = 16, .sequence_parallel = true});
  const std::vector<double> one{1};
  FeatureSpec z2;
  z2.dp_sharding = DpSharding::kOptimGrads;
  const StageMemory s2 = memory_report(m, hw, p, z2, one).stages[0];
  const double n = s2.params.total();
  EXPECT_DOUBLE_EQ(s2.static_bytes.weights, 2 * n);
  EXPECT_DOUBLE_EQ(s2.static_bytes.grads, 4 * n / 16);
  EXPECT_DOUBLE_EQ(s2.static_bytes.optimizer_states, 12 * n / 16);
  EXPECT_EQ(s2.static_bytes.unsharded, 40e6);  // one DP gradient bucket before its reduce-scatter
  FeatureSpec z3;
  z3.dp_sharding = DpSharding::kOptimGradsParams;
  const StageMemory s3 = memory_report(m, hw, p, z3, one).stages[0];
  EXPECT_DOUBLE_EQ(s3.static_bytes.weights, 2 * n / 16);
  // Two layers of gathered bf16 weights and one layer of fp32 gradients: a LLaMA2-70B layer on one
  // GPU of TP 8 is (150,994,944 + 704,643,072) / 8 + 16,384 norm weights = 106,971,136 parameters.
  EXPECT_DOUBLE_EQ(s3.static_bytes.unsharded, 106971136.0 * (2 * 2 + 4));
}

TEST(StaticMemory, ExpertsShardOverExpertDpAndCpuOptimizerMovesStateToHost) {
  const GpuParams g{.dense_sharded = 1000, .replicated = 24, .expert = 4096};
  FeatureSpec dist;
  dist.distributed_optimizer = true;
  const ShardGroups shards{.dense_dp = 16, .expert_dp = 2};
  const StaticMemory m = static_memory(g, dist, shards);
  EXPECT_EQ(m.weights, 2 * 5120.0);
  EXPECT_EQ(m.grads, 4 * 5120.0);
  EXPECT_EQ(m.optimizer_states, 12 * (1024.0 / 16 + 4096.0 / 2));
  FeatureSpec cpu = dist;
  cpu.optimizer_placement = OptimizerPlacement::kCpu;
  const StaticMemory c = static_memory(g, cpu, shards);
  EXPECT_EQ(c.optimizer_states, 0.0);
  EXPECT_EQ(c.host_bytes, m.optimizer_states);
  EXPECT_EQ(c.total(), 6 * 5120.0);
}

TEST(ShardGroups, ExpertDpIsWorldOverEpEtpPp) {
  // DeepSeek-V3 layout of §8.3 per pipeline stage: t 1, d 128, ep 64 -> expert DP 2.
  const ShardGroups s = optimizer_shard_groups(testing::parallel_spec({.tp = 1, .cp = 1, .pp = 16, .vpp = 1, .dp = 128, .ep = 64}));
  EXPECT_EQ(s.dense_dp, 128);
  EXPECT_EQ(s.expert_dp, 2);
  EXPECT_THROW(optimizer_shard_groups(testing::parallel_spec({.tp = 1, .cp = 1, .pp = 1, .vpp = 1, .dp = 6, .ep = 4})),
               std::invalid_argument);
}

// LLaMA2-70B, t 8 + SP, p 8, d 16, m 64, 1F1B: rank k holds 8 - k micro-batches.
ParallelSpec llama2_layout() {
  return testing::parallel_spec({.tp = 8, .cp = 1, .pp = 8, .vpp = 1, .dp = 16, .ep = 1, .etp = 1, .micro_batch = 1,
                      .global_batch = 1024, .sequence_parallel = true});
}

// One layer, one micro-batch, t 8 + SP: (12h + 4hg/a + 6f) * 4096 / 8 plus softmax statistics
// 4 * 8 heads * 4096 (dropped by selective recompute).
constexpr double kLlamaLayer = 274'432.0 * 4096 / 8;
constexpr double kStats = 4.0 * 8 * 4096;

TEST(StageMemory, OneFOneBInflightIsPipelineDepthMinusRank) {
  EXPECT_EQ(one_f_one_b_inflight(llama2_layout()), (std::vector<double>{8, 7, 6, 5, 4, 3, 2, 1}));
  ParallelSpec few = llama2_layout();
  few.global_batch = 16 * 3;  // m = 3
  // min(p - k, m).
  EXPECT_EQ(one_f_one_b_inflight(few), (std::vector<double>{3, 3, 3, 3, 3, 3, 2, 1}));
}

TEST(StageMemory, Llama2SelectiveRecomputeFirstStage) {
  const ModelSpec m = llama2_70b();
  const ParallelSpec par = llama2_layout();
  FeatureSpec f;
  f.distributed_optimizer = true;
  f.recompute = RecomputeKind::kSelective;
  const HardwareSpec hw = testing::round_gpu();
  const std::vector<double> inflight = one_f_one_b_inflight(par);
  const MemoryReport r = memory_report(m, hw, par, f, inflight);
  ASSERT_EQ(r.stages.size(), 8u);
  const StageMemory& s0 = r.stages[0];
  // 8 micro-batches x (10 layers without statistics + token ids 8 B * 4096), plus one layer's
  // statistics rebuilt during its backward.
  EXPECT_EQ(s0.activation_bytes, 8 * (10 * (kLlamaLayer) + 8 * 4096.0) + kStats);
  // Static: 1,102,479,360 parameters (stage 0) at 6 + 12/16 bytes.
  EXPECT_EQ(s0.static_bytes.total(), 1'102'479'360.0 * 6.75);
  EXPECT_EQ(s0.peak_bytes, s0.static_bytes.total() + s0.activation_bytes);
  EXPECT_TRUE(r.fits());
  EXPECT_EQ(r.worst_rank, 0);
  // The last stage: 1 micro-batch, head activations (norm and head inputs 2*T*h/8 each, fp32
  // logits 4 * 4096 * 32000/8). The head's backward frees them before the first layer rebuilds
  // its statistics, so the larger of the two counts, not both.
  const StageMemory& s7 = r.stages[7];
  EXPECT_EQ(s7.activation_bytes, 10 * kLlamaLayer + 2 * (2 * 512.0 * 8192) + 4 * 4096.0 * 4000);
}

TEST(StageMemory, FullRecomputeKeepsLayerInputsPlusOneWorkingLayer) {
  const ParallelSpec par = llama2_layout();
  FeatureSpec f;
  f.recompute = RecomputeKind::kFull;
  const MemoryReport r = memory_report(llama2_70b(), testing::round_gpu(), par, f, one_f_one_b_inflight(par));
  // Stage 1 (7 in flight): 7 x 10 layer inputs of 2*T*h/8 = 8 MiB, plus one layer rebuilt whole
  // beside its stored input (the replay allocates the rebuilt part, activation - input).
  const double rebuilt = kLlamaLayer + kStats - 8'388'608.0;
  EXPECT_EQ(r.stages[1].activation_bytes, 7 * 10 * 8'388'608.0 + rebuilt);
  EXPECT_EQ(r.stages[1].working_bytes, rebuilt);
}

TEST(StageMemory, OutOfMemoryIsAResultWithTheExcess) {
  const ParallelSpec par = llama2_layout();
  HardwareSpec small = testing::round_gpu();
  small.gpu_memory_bytes = 16e9;
  small.memory_reserved_bytes = 1e9;
  small.cuda_context_bytes = 287'047'680;
  small.allocator = AllocatorKind::kCaching;
  const MemoryReport r = memory_report(llama2_70b(), small, par, FeatureSpec{}, one_f_one_b_inflight(par));
  // 18 B/param alone is ~19.8 GB on rank 0.
  EXPECT_FALSE(r.fits());
  const StageMemory& s0 = r.stages[0];
  EXPECT_EQ(s0.allocated_bytes, s0.static_bytes.total() + s0.activation_bytes);
  EXPECT_DOUBLE_EQ(s0.peak_bytes, s0.allocated_bytes / 0.85 + 287'047'680 + 1e9);  // the caching allocator's 15 %
  EXPECT_EQ(s0.excess_bytes, s0.peak_bytes - 16e9);
  EXPECT_FALSE(s0.fits());
}

TEST(StageMemory, CpuOptimizerAndActivationOffload) {
  const ParallelSpec par = llama2_layout();
  FeatureSpec f;
  f.optimizer_placement = OptimizerPlacement::kCpu;
  f.activation_offload.enabled = true;
  const MemoryReport r = memory_report(llama2_70b(), testing::round_gpu(), par, f, one_f_one_b_inflight(par));
  const StageMemory& s0 = r.stages[0];
  // GPU keeps 6 B/param; the 12 B/param optimizer state lives in host memory.
  EXPECT_EQ(s0.static_bytes.total(), 1'102'479'360.0 * 6);
  EXPECT_EQ(s0.static_bytes.host_bytes, 1'102'479'360.0 * 12);
  // Offload keeps two layers in flight; token ids stay; the rest of 8 x 10 layers goes to the host.
  const double layer = kLlamaLayer + kStats;
  EXPECT_EQ(s0.activation_bytes, 8 * 8 * 4096.0 + 2 * layer);
  EXPECT_EQ(s0.offloaded_bytes, 80 * layer - 2 * layer);
}

TEST(StageMemory, InterleavedStagesCountTheirChunks) {
  ParallelSpec par = llama2_layout();
  par.vpp = 5;  // 40 chunks of 2 layers; each rank holds 5 chunks = 10 layers
  // Interleaved 1F1B peak on rank 0: p + (p-1)/v = 9.4 stage micro-batches (§8.4).
  std::vector<double> inflight(8, 0.0);
  inflight[0] = 9.4;
  FeatureSpec f;
  f.recompute = RecomputeKind::kSelective;
  const MemoryReport r = memory_report(llama2_70b(), testing::round_gpu(), par, f, inflight);
  EXPECT_DOUBLE_EQ(r.stages[0].activation_bytes, 9.4 * (10 * kLlamaLayer + 8 * 4096.0) + kStats);
  EXPECT_EQ(r.stages[3].activation_bytes, 0.0);
  EXPECT_THROW(memory_report(llama2_70b(), testing::round_gpu(), par, f, std::vector<double>(7, 1.0)),
               std::invalid_argument);
}

// DeepSeek-V3, 4 stages of {16, 15, 15, 15} layers, t 1, ep 8, d 64.
ParallelSpec dsv3_layout() {
  return testing::parallel_spec({.tp = 1, .cp = 1, .pp = 4, .vpp = 1, .dp = 64, .ep = 8, .etp = 1, .micro_batch = 1,
                      .global_batch = 256, .sequence_parallel = false}, std::vector<int>{16, 15, 15, 15});
}

TEST(MemFine, KeepsDispatchedTokensAndChunksTheExpertWorkingSet) {
  const ModelSpec m = deepseek_v3();
  const ParallelSpec par = dsv3_layout();
  const std::vector<double> inflight = one_f_one_b_inflight(par);
  HardwareSpec hw = testing::round_gpu();
  hw.gpu_memory_bytes = 1e15;  // everything fits
  FeatureSpec f;
  f.distributed_optimizer = true;
  const MemoryReport off = memory_report(m, hw, par, f, inflight);
  f.memfine = true;
  f.memfine_chunks = 4;
  const MemoryReport on = memory_report(m, hw, par, f, inflight);
  // Routed intermediates per MoE layer and micro-batch: SwiGLU inputs (2 x f_e) and fc2 inputs
  // (f_e) in bf16 for k * T = 8 * 4096 token copies: 6 f_e bytes per copy.
  const double chunked = 8 * 4096.0 * 6 * 2048;
  // Rank 1: 3 micro-batches x 15 MoE layers no longer keep them; one chunk of one layer is live.
  EXPECT_EQ(off.stages[1].activation_bytes - on.stages[1].activation_bytes, 3 * 15 * chunked - chunked / 4);
  EXPECT_EQ(on.memfine_chunks, 4);
}

TEST(MemFine, PicksTheSmallestChunkCountThatFits) {
  const ModelSpec m = deepseek_v3();
  const ParallelSpec par = dsv3_layout();
  const std::vector<double> inflight = one_f_one_b_inflight(par);
  HardwareSpec hw = testing::round_gpu();
  hw.gpu_memory_bytes = 1e15;
  FeatureSpec f;
  f.distributed_optimizer = true;
  f.memfine = true;
  f.memfine_chunks = 1;
  const double peak1 = memory_report(m, hw, par, f, inflight).peak_bytes();
  // The working set is W / n: peak(n) = peak(1) - W * (1 - 1/n) with W one layer's intermediates.
  const double w = 8 * 4096.0 * 6 * 2048;
  // A capacity between peak(4) and peak(3) needs 4 chunks.
  hw.gpu_memory_bytes = peak1 - 0.7 * w;
  EXPECT_EQ(memfine_min_chunks(m, hw, par, f, inflight), 4);
  f.memfine_chunks = 0;  // automatic
  EXPECT_EQ(memory_report(m, hw, par, f, inflight).memfine_chunks, 4);
  // Below peak(infinity) nothing fits.
  hw.gpu_memory_bytes = peak1 - 1.01 * w;
  EXPECT_EQ(memfine_min_chunks(m, hw, par, f, inflight), std::nullopt);
}

// A small MoE model with one MTP module: 2 layers, h 64, 4 heads, SwiGLU, 4 routed experts of
// f_e 32, top 2; seq 32, micro-batch 1, no parallelism.
ModelSpec small_moe() {
  ModelSpec m = testing::tiny_gpt();
  m.hidden_size = 64;
  m.num_attention_heads = 4;
  m.num_kv_heads = 4;
  m.ffn_hidden_size = 256;
  m.vocab_size = 100;
  m.seq_length = 32;
  m.mlp = MlpKind::kSwiglu;
  m.norm = NormKind::kRmsNorm;
  m.position = PositionKind::kRope;
  m.linear_bias = false;
  m.moe.num_experts = 4;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden_size = 32;
  m.mtp_depth = 1;
  return m;
}

// What MemFine's input-gradient pass leaves for the weight gradient, by hand on small_moe's MoE
// layer. T = 32 tokens, each to k = 2 of 4 experts: 16 tokens per expert, 64 routed copies.
//   fc1 input (the dispatched tokens, kept):   2 B x 64 copies x h 64      = 8,192 B
//   SwiGLU input (no weight gradient reads it): 2 B x 64 copies x 2 x f_e 32 = 8,192 B
//   fc2 input (rebuilt chunk by chunk):         2 B x 64 copies x f_e 32    = 4,096 B
// So MemFine keeps all the weight-gradient inputs but fc2's: 4,096 B fewer. The formula used before
// took all routed intermediates (12,288 B) off the weight-gradient inputs, 8,192 B too many.
TEST(MemFine, InputGradientPassKeepsTheWeightGradientInputsItDoesNotRebuild) {
  const ModelSpec m = small_moe();
  const ParallelSpec par = parallel_spec({.micro_batch = 1, .global_batch = 1});
  const LayerOps ops = ops_for_layer(m, par, 1);
  EXPECT_EQ(ops.totals().routed_input_bytes, 8192.0);
  EXPECT_EQ(ops.totals().routed_activation_bytes - ops.totals().routed_input_bytes, 8192.0 + 4096.0);
  const WeightGradInputs w = weight_grad_inputs(ops);
  EXPECT_EQ(w.memfine_rebuilt, 4096.0);
  EXPECT_EQ(w.kept(false) - w.kept(true), 4096.0);
  // The memory model counts it so: the MTP module's MoE layer sits in the head unit, whose kept
  // bytes drop by exactly fc2's input under MemFine.
  HardwareSpec hw = testing::round_gpu();
  FeatureSpec f;
  const std::vector<double> inflight = one_f_one_b_inflight(par);
  const double off = memory_report(m, hw, par, f, inflight).head_unit.kept_for_weight_grad;
  f.memfine = true;
  f.memfine_chunks = 2;
  const double on = memory_report(m, hw, par, f, inflight).head_unit.kept_for_weight_grad;
  EXPECT_EQ(off - on, 4096.0);
}

// FP8 keeps a copy of each GEMM weight (2 B per parameter with delayed scaling) but the embedding
// and, unless fp8_output_layer, the head, where the one placement (stage_gpu_params) puts them. On
// small_moe made dense, V*h = 100 x 64 = 6,400 parameters per vocab matrix; pp 2 with tied
// embeddings keeps a head copy on the last stage. DualPipe's rank 0 holds chunk 0 and, mirrored,
// chunk 1: the embedding and the head, 12,800 parameters with no FP8 copy.
TEST(Fp8Weights, EmbeddingAndHeadAreLeftOutWhereThePlacementPutsThem) {
  ModelSpec m = small_moe();
  m.moe = {};
  m.mtp_depth = 0;
  ParallelSpec par = parallel_spec({.pp = 2, .micro_batch = 1, .global_batch = 2});
  par.schedule = ScheduleKind::kDualPipe;
  const GpuParams held = stage_gpu_params(m, par, 0);
  EXPECT_EQ(held.embedding_sharded, 6400.0);
  EXPECT_EQ(held.head_sharded, 6400.0);
  FeatureSpec f;
  f.fp8.enabled = true;
  HardwareSpec hw = testing::round_gpu();
  const std::vector<double> inflight = one_f_one_b_inflight(par);
  const MemoryReport r = memory_report(m, hw, par, f, inflight);
  EXPECT_EQ(r.stages[0].static_bytes.fp8_weights, 2 * (held.dense_sharded - 12800));
  f.fp8.output_layer = true;  // the head runs in FP8 too: only the embedding has no copy
  EXPECT_EQ(memory_report(m, hw, par, f, inflight).stages[0].static_bytes.fp8_weights,
            2 * (held.dense_sharded - 6400));
  // 1F1B: rank 0 holds the embedding only, rank 1 the head only.
  par.schedule = ScheduleKind::k1F1B;
  f.fp8.output_layer = false;
  const MemoryReport one = memory_report(m, hw, par, f, inflight);
  EXPECT_EQ(one.stages[0].static_bytes.fp8_weights, 2 * (stage_gpu_params(m, par, 0).dense_sharded - 6400));
  EXPECT_EQ(one.stages[1].static_bytes.fp8_weights, 2 * (stage_gpu_params(m, par, 1).dense_sharded - 6400));
  EXPECT_EQ(stage_gpu_params(m, par, 1).embedding_sharded, 0.0);
}

}  // namespace
}  // namespace mofasim::model
