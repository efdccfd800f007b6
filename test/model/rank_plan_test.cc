// The priced per-rank plan both step models read (model/rank_plan.h): which chunks each rank runs
// (Megatron's virtual stages, DualPipe's two lanes), the DP traffic and optimizer work per rank,
// and the pipeline hop, priced on a topology or left to the replay. Hand-worked values on
// tiny_gpt (h 4, ffn 16, vocab 10, seq 8, GeLU, LayerNorm, learned positions, tied, biases):
// a layer holds 4h² + 4h = 80 attention, 2hf + f + h = 148 MLP and 2 LayerNorms × 2h = 16 norm
// parameters (244); the embedding 10·4 = 40, the positions 8·4 = 32, the final norm 2·4 = 8.
#include <gtest/gtest.h>

#include "model/rank_plan.h"
#include "test/support/op_lookup.h"
#include "model/attention_window.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

ModelSpec tiny(int layers) {
  ModelSpec m = testing::tiny_gpt();
  m.num_layers = layers;
  return m;
}

RankPlan plan_of(const ModelSpec& model, const ParallelSpec& par, const FeatureSpec& features = {},
                 const topology::TopologySpec* topology = nullptr) {
  static const HardwareSpec hw = testing::round_gpu();
  return build_rank_plan({.model = &model, .hardware = &hw, .parallel = par, .features = features,
                          .topology = topology, .simulation_detail = true});
}

TEST(RankPlan, InterleavedRanksRunTheirVirtualStagesInOrder) {
  // 8 layers over pp 2 × vpp 2 = 4 chunks of 2: rank 1 runs chunk 1 (layers 2-3), then chunk 3
  // (layers 6-7, the head).
  ParallelSpec par = testing::parallel_spec({.pp = 2, .vpp = 2, .global_batch = 4});
  par.schedule = ScheduleKind::kInterleaved1F1B;
  const RankPlan plan = plan_of(tiny(8), par);
  ASSERT_EQ(plan.v, 2);
  EXPECT_EQ(plan.chunk(1, 0).chunk, 1);
  EXPECT_EQ(plan.chunk(1, 0).first_layer, 2);
  EXPECT_EQ(plan.chunk(1, 1).chunk, 3);
  EXPECT_EQ(plan.chunk(1, 1).first_layer, 6);
  EXPECT_EQ(plan.chunk(1, 1).dense_layers, 2);
  EXPECT_TRUE(plan.chunk(1, 1).head);
  EXPECT_TRUE(plan.chunk(0, 0).embedding);
  EXPECT_FALSE(plan.chunk(0, 1).embedding);
}

TEST(RankPlan, DualPipeStagesHoldTheirChunkAndTheMirrorOne) {
  // pp 4, 8 layers: stage r runs chunk r on lane 0 and chunk 3-r on lane 1, each a parameter copy.
  ParallelSpec par = testing::parallel_spec({.pp = 4, .global_batch = 8});
  par.schedule = ScheduleKind::kDualPipe;
  const RankPlan plan = plan_of(tiny(8), par);
  ASSERT_EQ(plan.v, 2);
  EXPECT_EQ(plan.chunk(1, 0).chunk, 1);
  EXPECT_EQ(plan.chunk(1, 1).chunk, 2);
  EXPECT_EQ(plan.chunk(1, 1).first_layer, 4);
  EXPECT_TRUE(plan.chunk(0, 1).head);       // stage 0's reverse lane is the last chunk
  EXPECT_TRUE(plan.chunk(3, 1).embedding);  // stage 3's is the first
  // Two copies: stage 1 holds layers 2-3 and 4-5, 4 × 244 parameters, all dense.
  EXPECT_DOUBLE_EQ(plan.dp[1].dense_grad_bytes, 4 * 244 * 4.0);  // fp32 gradients
}

TEST(RankPlan, DistributedOptimizerTrafficAndUpdatePerRank) {
  // One stage holds 2 × 244 + 40 + 32 + 8 = 568 parameters. dp 4, bf16 weights, fp32 gradients,
  // fp32 master and Adam moments: reduce-scatter 568 × 4 B, all-gather 568 × 2 B, and each GPU
  // updates 568 / 4 = 142 of them: Adam reads and writes 4 + 2 × (4 + 8) = 28 B each, the copy to
  // the bf16 parameters reads 4 and writes 2 B (34 B in all), the clipping norm reads the 4 B
  // gradient; zeroing the gradient buffer writes all 568 × 4 B.
  const ParallelSpec par = testing::parallel_spec({.dp = 4, .global_batch = 4});
  FeatureSpec f;
  f.distributed_optimizer = true;
  const RankPlan plan = plan_of(tiny(2), par, f);
  const RankDp& d = plan.dp[0];
  EXPECT_DOUBLE_EQ(d.dense_grad_bytes, 2272);
  EXPECT_DOUBLE_EQ(d.dense_param_bytes, 1136);
  EXPECT_DOUBLE_EQ(d.expert_param_bytes, 0);
  EXPECT_DOUBLE_EQ(d.updated_params, 142);
  EXPECT_DOUBLE_EQ(d.adam_bytes, 142 * 34.0);
  EXPECT_DOUBLE_EQ(d.clip_norm_bytes, 142 * 4.0);
  EXPECT_DOUBLE_EQ(d.zero_grad_bytes, 568 * 4.0);
  EXPECT_DOUBLE_EQ(d.update_bytes, 4828 + 568 + 2272);
  EXPECT_DOUBLE_EQ(d.d2h_bytes, 568);  // 142 × 4 B (CPU optimizer: gradients to host)
  EXPECT_DOUBLE_EQ(d.h2d_bytes, 284);
  EXPECT_DOUBLE_EQ(plan.embedding.dense_params, 72);
  EXPECT_DOUBLE_EQ(plan.dense.dense_params, 244);
  // Without the distributed optimizer nothing is all-gathered and every GPU updates all 568.
  const RankPlan plain = plan_of(tiny(2), par);
  EXPECT_DOUBLE_EQ(plain.dp[0].dense_param_bytes, 0);
  EXPECT_DOUBLE_EQ(plain.dp[0].updated_params, 568);
}

TEST(RankPlan, PipelineHopIsPricedOnTheTopologyOrLeftToTheReplay) {
  // pp 2 on two one-GPU nodes: a boundary carries 2·s·h = 2 × 8 × 4 = 64 B (bf16) per
  // micro-batch; one send over the 100 GB/s, 10 µs inter-node link costs 10 µs + 0.64 ns.
  const ParallelSpec par = testing::parallel_spec({.pp = 2, .global_batch = 2});
  const topology::TopologySpec two_nodes{.gpus = 2, .gpus_per_node = 1,
                                         .inter_node = {.bandwidth = 100e9, .latency = 10e-6}};
  const RankPlan priced = plan_of(tiny(2), par, {}, &two_nodes);
  EXPECT_TRUE(priced.priced);
  EXPECT_DOUBLE_EQ(priced.pp_bytes, 64);
  EXPECT_DOUBLE_EQ(priced.pp_hop.latency, 10e-6);
  EXPECT_DOUBLE_EQ(priced.pp_hop.bandwidth, 64 / 100e9);
  EXPECT_DOUBLE_EQ(comm_seconds(priced.pp_hop, 0.5), 10e-6 + 64 / 100e9 / 2);  // μ_b = 2 divides the β term
  const RankPlan unpriced = plan_of(tiny(2), par);
  EXPECT_FALSE(unpriced.priced);
  EXPECT_DOUBLE_EQ(unpriced.pp_bytes, 64);
  EXPECT_DOUBLE_EQ(unpriced.pp_hop.latency + unpriced.pp_hop.bandwidth, 0);
}

TEST(RankPlan, ChunksOfAnotherWindowMixPriceEachLayersSpan) {
  // LLaMA2-70B with gpt-oss's alternation on {41, 39} layers: the plan prices a full and a
  // windowed dense layer, and each chunk counts its windowed layers.
  ModelSpec m = testing::llama2_70b();
  m.window_size = 128;
  m.window_attn_skip_freq = 2;
  ParallelSpec par = testing::parallel_spec({.pp = 2, .global_batch = 2});
  par.stage_layers = {41, 39};
  const RankPlan plan = plan_of(m, par);
  ASSERT_TRUE(plan.window_mixed());
  EXPECT_EQ(plan.chunk(0, 0).windowed.dense, 21);
  EXPECT_EQ(plan.chunk(1, 0).windowed.dense, 19);
  const double ratio = window_pair_ratio(4096, 128);
  const OpCost& full = test::find_op(plan.spans->dense[RankPlan::kFullSpan].ops, OpKind::kAttentionMap);
  const OpCost& windowed = test::find_op(plan.spans->dense[RankPlan::kWindowSpan].ops, OpKind::kAttentionMap);
  const OpCost& mean = test::find_op(plan.dense.ops, OpKind::kAttentionMap);
  // Causal QK^T over 4096 keys, 64 heads of 128: 4096 x 4096 x 128 x 64 forward, x the span's share.
  EXPECT_DOUBLE_EQ(full.forward.flops, 4096.0 * 4096 * 128 * 64);
  EXPECT_DOUBLE_EQ(windowed.forward.flops, full.forward.flops * ratio);
  EXPECT_DOUBLE_EQ(mean.forward.flops, full.forward.flops * (1 + ratio) / 2);
  // Same parameters as the mean block (the span changes attention work only).
  EXPECT_EQ(plan.spans->dense[RankPlan::kWindowSpan].dense_params, plan.dense.dense_params);
  // The uniform split holds the model's mix: one table, no spans.
  par.stage_layers.clear();
  EXPECT_FALSE(plan_of(m, par).window_mixed());
}

}  // namespace
}  // namespace mofasim::model

namespace mofasim::model {
namespace {

// The one batch rule (model/spec.h) the scenario seal, the measured-data reader, the tuner and
// both step models check: Llama 3 405B's 2,048 sequences split over dp 64 as 32 micro-batches of 1.
TEST(BatchRule, GlobalBatchIsAPositiveMultipleOfMicroBatchTimesDp) {
  EXPECT_TRUE(batch_divides(2048, 1, 64));    // m = 32
  EXPECT_TRUE(batch_divides(2048, 2, 64));    // m = 16
  EXPECT_FALSE(batch_divides(2048, 3, 64));   // 2048 / 192 leaves 128
  EXPECT_FALSE(batch_divides(32, 1, 64));     // m would be 0
  EXPECT_FALSE(batch_divides(0, 1, 1));
  EXPECT_FALSE(batch_divides(64, 0, 1));      // no micro-batch size
  EXPECT_FALSE(batch_divides(64, 1, 0));
  static_assert(batch_divides(8, 2, 4));      // usable at compile time: one micro-batch step
}

}  // namespace
}  // namespace mofasim::model
