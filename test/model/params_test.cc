// Parameter counts against the Megatron-accounting values of reference-formulas.md §5.2, §6, §8.
#include "model/params.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "model/memory.h"
#include "model/stage_layout.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using testing::deepseek_v3;
using testing::llama2_70b;
using testing::llama3_405b;
using testing::tiny_gpt;

ParallelSpec llama2_layout() {  // §8.1: t=8, p=8, d=16 on 1024 GPUs
  return testing::parallel_spec({.tp = 8, .cp = 1, .pp = 8, .vpp = 1, .dp = 16});
}

TEST(LayerParams, Llama2LayerSplitsIntoAttentionMlpAndNorms) {
  const LayerParams p = layer_params(llama2_70b(), 0);
  // Attention h(a*d_h + 2g*d_h) + a*d_h*h = 8192*(8192 + 2048) + 8192*8192.
  EXPECT_EQ(p.attention, 150'994'944.0);
  // SwiGLU 3hf = 3 * 8192 * 28672.
  EXPECT_EQ(p.mlp, 704'643'072.0);
  // Two RMSNorms: 2h.
  EXPECT_EQ(p.norms, 16'384.0);
  EXPECT_EQ(p.total(), 855'654'400.0);
  EXPECT_EQ(p.active(), p.total());
}

TEST(ModelParams, Llama2TotalIsLayersPlusFinalNormPlusUntiedEmbeddings) {
  // 80 * 855,654,400 + 8192 + 2 * 32000 * 8192 (§6, §8.1).
  EXPECT_EQ(model_params(llama2_70b()).total(), 68'976'648'192.0);
}

TEST(ModelParams, Llama3_405bTotal) {
  EXPECT_EQ(model_params(llama3_405b()).total(), 405'853'388'800.0);
}

TEST(LayerParams, DeepSeekV3MlaDenseAndMoeLayers) {
  const ModelSpec m = deepseek_v3();
  // 1536*(7168+128*192+1) + 512*(7168+128*256+1) + 7168*64 + 128*128*7168 (§5.2).
  EXPECT_EQ(attention_params(m), 187'107'328.0);
  // Dense: A + 3*7168*18432 + 2*7168.
  EXPECT_EQ(layer_params(m, 0).total(), 583'483'392.0);
  const LayerParams moe = layer_params(m, 3);
  // MoE: A + shared 3*7168*2048 + routed 256*3*7168*2048 + router 7168*256 + norms 2*7168.
  EXPECT_EQ(moe.total(), 11'507'286'016.0);
  // Active: routed 8 of 256.
  EXPECT_EQ(moe.active(), 585'318'400.0);
  EXPECT_EQ(moe.router, 7168.0 * 256);
}

TEST(ModelParams, DeepSeekV3TotalActiveAndMtp) {
  ModelSpec m = deepseek_v3();
  m.mtp_depth = 1;
  const ModelParams p = model_params(m);
  // 3 dense + 58 MoE layers + final norm + embedding and head of 129280*7168 each (§5.2).
  EXPECT_EQ(p.total(), 671'026'404'352.0);
  EXPECT_EQ(p.active(), 37'552'282'624.0);
  // Megatron counts the MTP block as one MoE layer (11.5B), without eh-proj and norms.
  EXPECT_EQ(p.mtp, 11'507'286'016.0);
  // Those come on top: eh projection 2h*h and three RMSNorms 3h.
  EXPECT_EQ(p.mtp_extra, 2.0 * 7168 * 7168 + 3 * 7168);
}

TEST(ModelParams, TinyGptCountsBiasesLayerNormLearnedPositionsAndTiedHead) {
  const ModelSpec m = tiny_gpt();  // h 4, a 2, d_h 2, f 16, V 10, s 8
  const LayerParams lp = layer_params(m, 0);
  // QKV 4*(4+8) + O 4*4 + biases (4+8) + 4.
  EXPECT_EQ(lp.attention, 48.0 + 16 + 12 + 4);
  // GeLU 2*4*16 + biases 16 + 4.
  EXPECT_EQ(lp.mlp, 128.0 + 20);
  // Two LayerNorms with scale and bias: 2 * 2 * 4.
  EXPECT_EQ(lp.norms, 16.0);
  const ModelParams p = model_params(m);
  EXPECT_EQ(p.head, 0.0);                // tied
  EXPECT_EQ(p.position_embedding, 32.0);  // s*h
  // 2 layers * 244 + embedding 40 + positions 32 + final LayerNorm 8.
  EXPECT_EQ(p.total(), 2 * 244.0 + 40 + 32 + 8);
}

TEST(MegatronMostLoaded, Llama2MatchesEstimatorAndWeightOptimizerBytes) {
  const GpuParams g = megatron_most_loaded_params(llama2_70b(), llama2_layout());
  // [(A+MLP)*80/8 + V*h]/8 + (2h*80 + h)/8 = 1,102,315,520 + 164,864 (§8.1).
  EXPECT_EQ(g.total(), 1'102'480'384.0);
  const ShardGroups shards = optimizer_shard_groups(llama2_layout());
  // 18 bytes per parameter without the distributed optimizer.
  EXPECT_EQ(static_memory(g, FeatureSpec{}, shards).total(), 19'844'646'912.0);
  // 6 + 12/16 = 6.75 bytes per parameter with it.
  FeatureSpec dist;
  dist.distributed_optimizer = true;
  EXPECT_EQ(static_memory(g, dist, shards).total(), 7'441'742'592.0);
}

TEST(MegatronMostLoaded, Llama3_405bDistributedOptimizerBytes) {
  const ParallelSpec par = testing::parallel_spec({.tp = 8, .cp = 1, .pp = 16, .vpp = 1, .dp = 128});
  const GpuParams g = megatron_most_loaded_params(llama3_405b(), par);
  // [(A+MLP)*126/16 + V*h]/8 + (2h*126 + h)/16 = 3,400,531,968 + 259,072 (§8.2).
  EXPECT_EQ(g.total(), 3'400'791'040.0);
  FeatureSpec dist;
  dist.distributed_optimizer = true;
  // (6 + 12/128) bytes per parameter.
  EXPECT_EQ(static_memory(g, dist, optimizer_shard_groups(par)).total(), 20'723'570'400.0);
}

TEST(MegatronMostLoaded, DeepSeekV3WithMtpOnTheFirstStage) {
  ModelSpec m = deepseek_v3();
  m.mtp_depth = 1;
  // §8.3: PP16, EP64, TP1, DP128, expert DP = 2048 / (1 * 64 * 16) = 2, distributed optimizer.
  const ParallelSpec par = testing::parallel_spec({.tp = 1, .cp = 1, .pp = 16, .vpp = 1, .dp = 128, .ep = 64});
  const GpuParams g = megatron_most_loaded_params(m, par);
  // Expert part: (routed * 58/16 + routed of the MTP layer) / 64 with routed = 256 * 3 * 7168 * 2048.
  EXPECT_EQ(g.expert, (256 * 3 * 7168.0 * 2048) * (58.0 / 16 + 1) / 64);
  FeatureSpec dist;
  dist.distributed_optimizer = true;
  const ShardGroups shards = optimizer_shard_groups(par);
  EXPECT_EQ(shards.expert_dp, 2);
  // (P_tp + P_repl) * (6 + 12/128) + P_exp * (6 + 12/2).
  EXPECT_NEAR(static_memory(g, dist, shards).total(), 22'657'240'074.0, 1.0);
}

TEST(StageGpuParams, Llama2FirstMiddleAndLastStage) {
  const ModelSpec m = llama2_70b();
  const ParallelSpec par = llama2_layout();
  // Rank 0: 10 layers' (A+MLP)/8 + embedding V*h/8 + 10 layers' norms (replicated).
  // (855,638,016*10 + 262,144,000)/8 + 163,840.
  EXPECT_EQ(stage_gpu_params(m, par, 0).total(), 1'102'479'360.0);
  // Middle rank: 855,638,016*10/8 + 163,840.
  EXPECT_EQ(stage_gpu_params(m, par, 3).total(), 1'069'711'360.0);
  // Last rank: middle + head V*h/8 + final norm h.
  EXPECT_EQ(stage_gpu_params(m, par, 7).total(), 1'069'711'360.0 + 32'768'000 + 8192);
}

TEST(StageGpuParams, ShardsSumBackToTheModelTotal) {
  // Untied, pp > 1: every weight lives on exactly one stage; TP shards times t plus replicated
  // parts over all stages recover the total.
  const ModelSpec m = llama2_70b();
  const ParallelSpec par = llama2_layout();
  double sum = 0;
  for (int r = 0; r < par.pp; ++r) {
    const GpuParams g = stage_gpu_params(m, par, r);
    sum += g.dense_sharded * par.tp + g.replicated + g.expert;
  }
  EXPECT_EQ(sum, model_params(m).total());
}

TEST(StageGpuParams, ExpertsShardOverEpTimesEtpAndMtpSitsOnTheLastStage) {
  ModelSpec m = deepseek_v3();
  m.mtp_depth = 1;
  // 61 layers over 4 stages: 16, 15, 15, 15; ep 8 and etp 2 shard the routed experts 16 ways.
  const ParallelSpec par = testing::parallel_spec({.tp = 2, .cp = 1, .pp = 4, .vpp = 1, .dp = 8, .ep = 8, .etp = 2,
                         .micro_batch = 1, .global_batch = 64, .sequence_parallel = true}, std::vector<int>{16, 15, 15, 15});
  const LayerParams moe = layer_params(m, 3);
  // Rank 1 holds layers 16..30, all MoE.
  const GpuParams r1 = stage_gpu_params(m, par, 1);
  EXPECT_EQ(r1.expert, 15 * moe.routed_experts / 16);
  EXPECT_EQ(r1.dense_sharded, 15 * (moe.attention + moe.mlp) / 2);
  EXPECT_EQ(r1.replicated, 15 * (moe.norms + moe.router));
  // The last rank adds the head, final norm and the MTP module (one more MoE layer, eh-proj, norms).
  const GpuParams r3 = stage_gpu_params(m, par, 3);
  const double h = 7168;
  EXPECT_EQ(r3.expert, 16 * moe.routed_experts / 16);
  EXPECT_EQ(r3.dense_sharded, 16 * (moe.attention + moe.mlp) / 2 + 129280.0 * h / 2 + 2 * h * h / 2);
  EXPECT_EQ(r3.replicated, 16 * (moe.norms + moe.router) + h + 3 * h);
}

TEST(StageGpuParams, TiedEmbeddingsOnOneStageAreCountedOnce) {
  const ModelSpec m = tiny_gpt();
  const ParallelSpec one_stage = testing::parallel_spec({.tp = 2});
  // p = 1: embedding V*h/t once, positions s*h replicated, final norm 2h, both layers.
  const LayerParams lp = layer_params(m, 0);
  const GpuParams g = stage_gpu_params(m, one_stage, 0);
  EXPECT_EQ(g.dense_sharded, 2 * (lp.attention + lp.mlp) / 2 + 40.0 / 2);
  EXPECT_EQ(g.replicated, 2 * lp.norms + 32 + 8);
  // p = 2: the last stage keeps a synced copy of the tied embedding for its head.
  const ParallelSpec two_stages = testing::parallel_spec({.tp = 1, .cp = 1, .pp = 2});
  EXPECT_EQ(stage_gpu_params(m, two_stages, 1).dense_sharded, lp.attention + lp.mlp + 40);
}

TEST(StageLayout, InterleavedChunksAlternateRanksAndUnevenSplitsAreHonoured) {
  ModelSpec m = llama2_70b();
  m.num_layers = 8;
  const ParallelSpec par = testing::parallel_spec({.tp = 1, .cp = 1, .pp = 2, .vpp = 2});
  // Chunks of 2 layers; rank 0 runs chunks 0 and 2: layers 0-1 and 4-5.
  const auto r0 = rank_chunks(m, par, 0);
  ASSERT_EQ(r0.size(), 2u);
  EXPECT_EQ(r0[0].first_layer, 0);
  EXPECT_EQ(r0[1].first_layer, 4);
  EXPECT_EQ(r0[1].virtual_stage, 1);
  ParallelSpec uneven = par;
  uneven.stage_layers = {1, 3, 3, 1};
  const auto r1 = rank_chunks(m, uneven, 1);
  EXPECT_EQ(r1[0].first_layer, 1);
  EXPECT_EQ(r1[0].num_layers, 3);
  EXPECT_EQ(r1[1].first_layer, 7);
  EXPECT_EQ(r1[1].num_layers, 1);
}

TEST(StageLayout, CompositionCountsDenseAndMoeLayersPerRank) {
  ModelSpec m = deepseek_v3();
  m.mtp_depth = 1;
  // 61 layers as {16, 15, 15, 15}: rank 0 holds the 3 dense layers 0-2 and MoE layers 3-15.
  const ParallelSpec par = testing::parallel_spec({.tp = 1, .cp = 1, .pp = 4, .vpp = 1, .dp = 8, .ep = 8},
                                                  std::vector<int>{16, 15, 15, 15});
  const StageComposition first = stage_composition(m, par, 0);
  EXPECT_EQ(first.dense_layers, 3);
  EXPECT_EQ(first.moe_layers, 13);
  EXPECT_TRUE(first.embedding);
  EXPECT_FALSE(first.head);
  const StageComposition last = stage_composition(m, par, 3);
  EXPECT_EQ(last.dense_layers, 0);
  EXPECT_EQ(last.moe_layers, 15);
  EXPECT_TRUE(last.head);
  EXPECT_EQ(last.mtp_modules, 1);
}

TEST(StageLayout, RejectsLayoutsThatDoNotCoverTheModel) {
  ModelSpec m = llama2_70b();
  EXPECT_THROW(chunk_layers(m, testing::parallel_spec({.tp = 1, .cp = 1, .pp = 3})), std::invalid_argument);  // 80 % 3
  EXPECT_THROW(chunk_layers(m, testing::parallel_spec({.tp = 1, .cp = 1, .pp = 2, .vpp = 1, .dp = 1, .ep = 1, .etp = 1,
                                            .micro_batch = 1, .global_batch = 1, .sequence_parallel = false}, std::vector<int>{40, 39})),
               std::invalid_argument);
  EXPECT_THROW(rank_chunks(m, testing::parallel_spec({.tp = 1, .cp = 1, .pp = 2}), 2), std::invalid_argument);
}

TEST(LayerParams, RejectsBadInput) {
  EXPECT_THROW(layer_params(llama2_70b(), 80), std::invalid_argument);
  ModelSpec bad = llama2_70b();
  bad.num_kv_heads = 7;  // does not divide 64 heads
  EXPECT_THROW(model_params(bad), std::invalid_argument);
  EXPECT_THROW(stage_gpu_params(llama2_70b(), testing::parallel_spec({.tp = 3}), 0), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::model
