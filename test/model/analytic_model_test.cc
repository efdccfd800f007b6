// Tests of the analytic MoFa step model: the overlap closed forms on small hand-worked numbers, and
// the step model against critical paths assembled from model/'s own per-op times.
#include "model/analytic_model.h"

#include <algorithm>
#include <array>
#include <random>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "model/analytic_overlap.h"
#include "model/compute_time.h"
#include "model/flops.h"
#include "model/memory.h"
#include "model/op_table.h"
#include "model/params.h"
#include "schedules/evaluate.h"
#include "schedules/one_f_one_b.h"
#include "sim/units/time.h"
#include "topology/comm_group.h"
#include "topology/placement.h"
#include "topology/topology.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using testing::Layout;
using testing::parallel_spec;

// ---------------------------------------------------------------- closed forms
TEST(AnalyticOverlap, TpOverlapPipelinesChunks) {
  // X = 8, C = 4, s = 4, α = β = 1: 2 + 1 + 3·max(2, 1) = 9 (vs 12 unoverlapped).
  EXPECT_DOUBLE_EQ(tp_overlap_seconds(8, 4, 4, 1, 1), 9);
  // s = 1 is no overlap: X + C.
  EXPECT_DOUBLE_EQ(tp_overlap_seconds(8, 4, 1, 1, 1), 12);
  // α = 1.5 on compute while the 1 s piece runs: window 2 + 1·(1 − 1/1.5) = 2.3333; 3 + 3·2.3333 = 10
  // (MoFa's max(α·X, β·C) would charge 3 per window, 12).
  EXPECT_NEAR(tp_overlap_seconds(8, 4, 4, 1.5, 1), 10, 1e-12);
  // Communication-bound, β = 2: window 2 + 1·(1 − 1/2) = 2.5; 1 + 2 + 3·2.5 = 10.5.
  EXPECT_NEAR(tp_overlap_seconds(4, 8, 4, 1, 2), 10.5, 1e-12);
}

TEST(AnalyticOverlap, CpRingAttention) {
  // A = 8 over c = 4 steps of 2, p2p 3 per step: overlapped 3·max(2, 3) + 2 = 11; serial 8 + 3·3 = 17.
  EXPECT_DOUBLE_EQ(cp_ring_seconds(8, 3, 4, true, 1, 1), 11);
  EXPECT_DOUBLE_EQ(cp_ring_seconds(8, 3, 4, false, 1, 1), 17);
  // α = 2: the 3 s send ends first (3 <= 2·2), window 2 + 3·(1 − 1/2) = 3.5; 3·3.5 + 2 = 12.5.
  EXPECT_NEAR(cp_ring_seconds(8, 3, 4, true, 2, 1), 12.5, 1e-12);
}

TEST(AnalyticOverlap, EpPairAndPpAndOffload) {
  // F_comp 5, F_a2a 2, B_comp 10, B_a2a 4: max(5, 4) + max(10, 2) = 15 (vs 21 apart).
  EXPECT_DOUBLE_EQ(ep_pair_seconds(5, 2, 10, 4, 1, 1), 15);
  // β = 2: the backward all-to-all (4, slowed to 8) outlasts the forward's 5: 4 + 5·(1 − 1/2) = 6.5;
  // the forward all-to-all (2, slowed to 4) ends inside the backward's 10: 10 + 4·0 = 10. 16.5.
  EXPECT_NEAR(ep_pair_seconds(5, 2, 10, 4, 1, 2), 16.5, 1e-12);
  // MoFa(23) as a window: T = 3, t_pp = 1 slowed to 1.2 ends first: 3 + 1.2·(1 − 1/1.1) = 3.10909.
  EXPECT_NEAR(pp_overlap_seconds(3, 1, 1.1, 1.2), 3 + 1.2 * (1 - 1 / 1.1), 1e-12);
  // T = 1 slowed to 1.1 ends first: 3 + 1.1·(1 − 1/1.2) = 3.18333.
  EXPECT_NEAR(pp_overlap_seconds(1, 3, 1.1, 1.2), 3 + 1.1 * (1 - 1 / 1.2), 1e-12);
  // MoFa(33) MoFa(34) MoFa(35) as a window: max(T, t_copy) at α = β = 1; α = 1.2: 5 + 2·(1 − 1/1.2).
  EXPECT_DOUBLE_EQ(offload_seconds(2, 5, 1, 1), 5);
  EXPECT_NEAR(offload_seconds(5, 2, 1.2, 1), 5 + 2 * (1 - 1 / 1.2), 1e-12);
  // The window equals MoFa's max(α·X, β·C) when both sides end together (α·X = β·C = 6).
  EXPECT_NEAR(overlap_window_seconds(4, 3, 1.5, 2), 6, 1e-12);
}

TEST(AnalyticOverlap, DualPipePairsEachAllToAllWithOneModule) {
  // Forward: pre 1, dispatch 1, mid 10, combine 2, post 0.5; backward: first 0.5, combine
  // gradient 5, mid 3, dispatch gradient 1, last 4. DualPipe's windows (report Figure 4):
  // 0.5 + 0.5 + max(1, 5) + max(3, 1) + max(10, 1) + max(4, 2) = 23. The whole-pass pairing
  // would hide the backward's 6 of all-to-all under the forward's 11.5 of compute: 19.
  const EpPairParts parts{.f_pre = 1, .f_mid = 10, .f_post = 0.5, .f_dispatch = 1, .f_combine = 2,
                          .b_first = 0.5, .b_mid = 3, .b_last = 4, .b_combine = 5, .b_dispatch = 1};
  EXPECT_DOUBLE_EQ(dualpipe_ep_pair_seconds(parts, 1, 1), 23);
  EXPECT_DOUBLE_EQ(ep_pair_seconds(11.5, 3, 7.5, 6, 1, 1), 19);
  // β = 2 slows each all-to-all inside its window: the combine gradient (5 -> 10) outlasts the
  // attention's 1: 5 + 1·(1 − 1/2) = 5.5; the dispatch (1 -> 2) ends inside B mid's 3: 3; the
  // dispatch gradient inside F mid's 10: 10; the combine (2 -> 4) equals the last 4: 4. 23.5.
  EXPECT_NEAR(dualpipe_ep_pair_seconds(parts, 1, 2), 1 + 5.5 + 3 + 10 + 4, 1e-12);
}

TEST(AnalyticOverlap, DpOverlapHidesAllButTheLastChunk) {
  // v = 4 chunks of RS 2 s each under 3 s of backward: 2 + 3·(max(3, 2) − 3) = 2.
  EXPECT_DOUBLE_EQ(dp_overlap_exposed_seconds(2, 3, 4, 1, 1), 2);
  // RS 5 s per chunk, 3 s compute: 5 + 3·(5 − 3) = 11.
  EXPECT_DOUBLE_EQ(dp_overlap_exposed_seconds(5, 3, 4, 1, 1), 11);
  // v = 1 hides nothing.
  EXPECT_DOUBLE_EQ(dp_overlap_exposed_seconds(5, 3, 1, 1, 1), 5);
}

// ---------------------------------------------------------------- the step model
topology::TopologySpec cluster(int gpus) {
  return topology::TopologySpec{.gpus = gpus,
                                .gpus_per_node = gpus < 8 ? gpus : 8,
                                .intra_node = {.bandwidth = 100e9, .latency = 0},
                                .inter_node = {.bandwidth = 25e9, .latency = 0}};
}

// LLaMA2-70B shapes, but `layers` layers, on `round_gpu`.
AnalyticInput input(const Layout& l, ScheduleKind schedule, int layers) {
  ModelSpec m = testing::llama2_70b();
  m.num_layers = layers;
  ParallelSpec p = parallel_spec(l);
  p.schedule = schedule;
  AnalyticInput in{.model = m,
                   .hardware = testing::round_gpu(),
                   .parallel = p,
                   .features = {},
                   .topology = cluster(p.gpus())};
  in.hardware.d2h_bandwidth = 50e9;
  in.hardware.h2d_bandwidth = 50e9;
  in.hardware.cpu_optimizer_params_per_second = 1e9;
  return in;
}

// Compute seconds of one pass of `n` transformer layers (+ embedding / head), from model/ alone.
struct Pass {
  double f = 0;
  double b = 0;
};
Pass chunk_seconds(const AnalyticInput& in, int n, bool embedding, bool head) {
  const LayerSeconds layer = layer_compute_seconds(ops_for_layer(in.model, in.parallel, 0), in.hardware, in.features);
  Pass p{n * layer.forward, n * layer.backward()};
  if (embedding) {
    const LayerSeconds e = layer_compute_seconds(ops_for_embedding(in.model, in.parallel), in.hardware, in.features);
    p.f += e.forward;
    p.b += e.backward();
  }
  if (head) {
    const LayerSeconds h = layer_compute_seconds(ops_for_head(in.model, in.parallel), in.hardware, in.features);
    p.f += h.forward;
    p.b += h.backward();
  }
  return p;
}

// Adam on the GPU as one memory-bound pass: (grad 4 + 2·(master 4 + moments 8) + weight 2) = 30 B
// per parameter at efficiency.memory × HBM bandwidth.
// The optimizer step's memory-bound bytes (model/rank_plan.cc): Adam + the parameter copy 34 B and
// the clip norm 4 B per updated parameter, zero_grad 4 B per parameter the GPU holds.
double optimizer_seconds(const AnalyticInput& in, double updated, double held) {
  return (updated * 38 + held * 4) / (in.hardware.efficiency.memory * in.hardware.hbm_bandwidth);
}
double adam_seconds(const AnalyticInput& in, double params) { return optimizer_seconds(in, params, params); }

TEST(AnalyticModel, OneFOneBCriticalPathWithFreeCommunication) {
  // p = 2, m = 4, one GPU per stage: no TP/CP/EP/DP communication; the PP hop crosses NVLink and
  // is priced separately below. Critical path: F of stage 0 (warm-up), m pairs on the busier
  // stage 1 (it holds the head), B of stage 0 (cool-down). Each rank updates after its own last
  // backward: stage 1's ends T_B,0 before stage 0's, so step = max(end + o_0, end − T_B,0 + o_1).
  AnalyticInput in = input(Layout{.pp = 2, .global_batch = 4}, ScheduleKind::k1F1B, 4);
  in.topology.intra_node.bandwidth = 1e30;  // free PP hops
  const AnalyticResult r = evaluate_mofa(in);
  const Pass s0 = chunk_seconds(in, 2, true, false);
  const Pass s1 = chunk_seconds(in, 2, false, true);
  ASSERT_GT(s1.f + s1.b, s0.f + s0.b);
  const double o0 = adam_seconds(in, stage_gpu_params(in.model, in.parallel, 0).total());
  const double o1 = adam_seconds(in, stage_gpu_params(in.model, in.parallel, 1).total());
  const double pipeline = s0.f + 4 * (s1.f + s1.b) + s0.b;
  const double expected = std::max(pipeline + o0, pipeline - s0.b + o1);
  EXPECT_NEAR(r.timing.pipeline_s, pipeline, 1e-9 * expected);
  EXPECT_NEAR(r.timing.step_time_s, expected, 1e-9 * expected);
  EXPECT_NEAR(r.timing.breakdown.total(), r.timing.step_time_s, 1e-9 * expected);
  EXPECT_NEAR(r.timing.breakdown.pp_bubble, s0.f + s0.b, 1e-12);
  EXPECT_NEAR(r.timing.optimizer_s, expected - pipeline, 1e-12);
  // MoFa(15): TFLOPS = F_step / (T_step · N).
  EXPECT_NEAR(r.timing.tflops_per_gpu, model_flops_per_step(in.model, in.parallel) / (r.timing.step_time_s * 2) / 1e12,
              1e-9);
  EXPECT_NEAR(r.timing.mfu, r.timing.tflops_per_gpu * 1e12 / 1000e12, 1e-12);
}

TEST(AnalyticModel, UnevenOneFOneBStagesMatchTheScheduleReplay) {
  // 1F1B with uneven stages (p = 4, m = 8; 5, 1, 1, 1 layers and then 1, 1, 1, 5): the closed
  // form's pipeline against schedules::evaluate() replaying build_one_f_one_b with each stage's
  // own pass times from model/ (whole nanoseconds there: up to 2·(m + p) rounded passes).
  for (const std::vector<int>& layers : {std::vector<int>{5, 1, 1, 1}, std::vector<int>{1, 1, 1, 5}}) {
    AnalyticInput in = input(Layout{.pp = 4, .global_batch = 8}, ScheduleKind::k1F1B, 8);
    in.parallel.stage_layers = layers;
    in.topology.intra_node.bandwidth = 1e30;
    const double pipeline = evaluate_mofa(in).timing.pipeline_s;
    const schedules::PipelineShape shape{.stages = 4, .microbatches = 8, .chunks = 1};
    schedules::CostTable costs = schedules::CostTable::uniform(4, 1, {});
    for (int r = 0; r < 4; ++r) {
      const Pass s = chunk_seconds(in, layers[static_cast<std::size_t>(r)], r == 0, r == 3);
      costs.set(r, 0, schedules::PassCosts{.forward = from_seconds(s.f), .input_grad = from_seconds(s.b)});
    }
    const double replay = to_seconds(schedules::evaluate(schedules::build_one_f_one_b(shape), costs).makespan);
    EXPECT_NEAR(pipeline, replay, 24e-9) << layers[0] << "," << layers[3];
    // With 5 layers first, the replay is well below the earlier reading m·(busiest pair) +
    // Σ_{j<p−1} (T_F,j + T_B,j), which counted the busiest stage 0's own passes as idle time.
    if (layers[0] == 5) {
      const Pass s0 = chunk_seconds(in, 5, true, false);
      const Pass s1 = chunk_seconds(in, 1, false, false);
      EXPECT_LT(pipeline, 8 * (s0.f + s0.b) + (s0.f + s0.b) + 2 * (s1.f + s1.b) - 0.5 * (s0.f + s0.b));
    }
  }
}

TEST(AnalyticModel, UniformStagesGiveTheClosedForm) {
  // Adding micro-batches adds whole steady pairs: with interleaving (p = 2, v = 2) each extra
  // micro-batch costs v·(T_F,c + T_B,c) of the busiest rank, i.e. step(m=8) − step(m=4) =
  // 4·(pair of chunk 1 + pair of chunk 3) — (m·v + p − 1)(T_F,c + T_B,c) differenced in m.
  AnalyticInput in = input(Layout{.pp = 2, .vpp = 2, .global_batch = 4}, ScheduleKind::kInterleaved1F1B, 8);
  in.topology.intra_node.bandwidth = 1e30;
  const double t4 = evaluate_mofa(in).timing.pipeline_s;
  in.parallel.global_batch = 8;
  const double t8 = evaluate_mofa(in).timing.pipeline_s;
  const Pass c1 = chunk_seconds(in, 2, false, false);
  const Pass c3 = chunk_seconds(in, 2, false, true);
  EXPECT_NEAR(t8 - t4, 4 * (c1.f + c1.b + c3.f + c3.b), 1e-9 * t8);
  // Warm-up + cool-down = (p − 1)·(F + B) of chunk 0 (holding the embedding): the bubble.
  const Pass c0 = chunk_seconds(in, 2, true, false);
  EXPECT_NEAR(evaluate_mofa(in).timing.breakdown.pp_bubble, c0.f + c0.b, 1e-12);
}

TEST(AnalyticModel, PpHopsExposedInWarmupAndCooldownHiddenBySteadyOverlap) {
  AnalyticInput in = input(Layout{.pp = 2, .global_batch = 4}, ScheduleKind::k1F1B, 4);
  in.features.pp_overlap = OverlapSpec{.enabled = true, .alpha = 1, .beta = 1, .chunks = 1};
  const AnalyticResult r = evaluate_mofa(in);
  // Boundary payload 2·s·h bytes = 2·4096·8192 over NVLink 100 GB/s, latency 0.
  const double t_pp = 2.0 * 4096 * 8192 / 100e9;
  // Steady hops hide under compute (MoFa(23), α = β = 1); warm-up and cool-down expose one each.
  EXPECT_NEAR(r.timing.breakdown.pp_exposed, 2 * t_pp, 1e-12);
  in.features.pp_overlap.enabled = false;
  // Without overlap each sending pass adds its hop, one per steady pair on either rank: rank 0's
  // forward sends but its backward (the first virtual stage's) does not, rank 1's backward sends
  // but its forward (the head's) does not: + m · t_pp (m · 2 · t_pp when every pass was charged).
  EXPECT_NEAR(evaluate_mofa(in).timing.breakdown.pp_exposed, 2 * t_pp + 4 * t_pp, 1e-12);
}

TEST(AnalyticModel, InterleavedChunkChangesWaitForTheRingWithPpOverlap) {
  // Interleaved 1F1B, p = 2, v = 2, m = 4, 8 layers, PP overlap at α = β = 1: every pass hides its
  // send (T' = max(T, t_pp) = T), so in the warm-up each rank's p forwards of chunk 0 end p hops
  // before the group's first micro-batch is back from the ring for chunk 1: (v − 1)·p·t_pp, and
  // the backwards again in the cool-down. Exposed PP: the 2(p − 1) fill hops plus 2·(v − 1)·p·t_pp.
  AnalyticInput in = input(Layout{.pp = 2, .vpp = 2, .global_batch = 4}, ScheduleKind::kInterleaved1F1B, 8);
  in.features.pp_overlap = OverlapSpec{.enabled = true, .alpha = 1, .beta = 1, .chunks = 1};
  const double t_pp = 2.0 * 4096 * 8192 / 100e9;  // boundary 2·s·h bytes over 100 GB/s, as above
  const StepTiming t = evaluate_mofa(in).timing;
  EXPECT_NEAR(t.breakdown.pp_exposed, 2 * t_pp + 2 * 1 * 2 * t_pp, 1e-12);
  // Blocking sends charge the hop to every pass instead: the warm-up has no ring wait, its
  // forwards down p − 1 stages and their hops only ((v − 1)·p·t_pp = 2·t_pp less).
  in.features.pp_overlap.enabled = false;
  const StepTiming blocking = evaluate_mofa(in).timing;
  EXPECT_NEAR(t.warmup_s - blocking.warmup_s, 2 * t_pp, 1e-12);
}

TEST(AnalyticModel, DistributedOptimizerDividesTheUpdateByDp) {
  // MoFa(26): T_update → T_update / d for Adam and the clip norm; zero_grad clears every local
  // gradient either way.
  AnalyticInput in = input(Layout{.dp = 4, .global_batch = 4}, ScheduleKind::k1F1B, 2);
  const double full = evaluate_mofa(in).timing.breakdown.optimizer;
  in.features.distributed_optimizer = true;
  const double held = stage_gpu_params(in.model, in.parallel, 0).total();
  EXPECT_NEAR(evaluate_mofa(in).timing.breakdown.optimizer, optimizer_seconds(in, held / 4, held), 1e-12);
  EXPECT_NEAR(full, adam_seconds(in, stage_gpu_params(in.model, in.parallel, 0).total()), 1e-12);
}

TEST(AnalyticModel, DpOverlapWithOneChunkQueuesTheBucketsOnOneStream) {
  // p = 1, v = 1, dp = 8 on one node (no latency), 4 layers, 40 MB buckets: every block (head,
  // layers, embedding) closes its own bucket, n = 6. Without overlap the whole ring all-reduce of
  // the fp32 gradients S, G = 2·(7/8)·S / bandwidth, is exposed. With overlap (MoFa(24) with the
  // buckets for chunks) bucket i is ready when the backward has finished its block (r_i: the
  // head's T_B, then one layer's more each, the embedding last, W in all) and reduces in
  // c_i = G·bytes_i / S on the one DP stream after the bucket before it: with α = β = 1 and no
  // latency the last reduction ends at max_i (r_i + Σ_{j>=i} c_j) (a FIFO queue), and what
  // runs past the backward's end W is exposed.
  AnalyticInput in = input(Layout{.dp = 8, .global_batch = 8}, ScheduleKind::k1F1B, 4);
  const LayerSeconds layer = layer_compute_seconds(ops_for_layer(in.model, in.parallel, 0), in.hardware, in.features);
  const LayerSeconds emb = layer_compute_seconds(ops_for_embedding(in.model, in.parallel), in.hardware, in.features);
  const LayerSeconds head = layer_compute_seconds(ops_for_head(in.model, in.parallel), in.hardware, in.features);
  const double w = head.backward() + 4 * layer.backward() + emb.backward();
  const double grad_bytes = AnalyticModel(in).memory().stages[0].params.dense() * 4;
  const double ring = 2.0 * 7 / 8 * grad_bytes;
  for (const double g : {w / 3, 3 * w}) {  // keeps up with the backward; outlasts it
    in.topology.intra_node.bandwidth = ring / g;
    in.features.dp_overlap.enabled = false;
    EXPECT_NEAR(AnalyticModel(in).evaluate().timing.breakdown.dp_exposed, g, 1e-9 * g);
    in.features.dp_overlap.enabled = true;
    const AnalyticModel on(in);
    const RankPlan& plan = on.plan();
    EXPECT_EQ(plan.dp[0].dense_grad_buckets, 6);  // head, 4 layers, embedding (70B shapes: each over 40 MB)
    const std::array<double, 6> ready{head.backward(), head.backward() + layer.backward(),
                                      head.backward() + 2 * layer.backward(), head.backward() + 3 * layer.backward(),
                                      head.backward() + 4 * layer.backward(), w};
    std::array<double, 6> bytes{plan.head.dense_params, plan.dense.dense_params, plan.dense.dense_params,
                                plan.dense.dense_params, plan.dense.dense_params, plan.embedding.dense_params};
    double carried = 0;
    for (double& b : bytes) carried += b *= 4;
    bytes[5] += grad_bytes - carried;  // what no block carries rides in the last bucket
    double end = w;
    for (int i = 0; i < 6; ++i) {
      double queued = ready[static_cast<std::size_t>(i)];
      for (int j = i; j < 6; ++j) queued += g * bytes[static_cast<std::size_t>(j)] / grad_bytes;
      end = std::max(end, queued);
    }
    EXPECT_GT(end - w, g / 6);  // not the even split of the reduction over the buckets
    EXPECT_NEAR(on.evaluate().timing.breakdown.dp_exposed, end - w, 1e-9 * g) << "G = " << g << ", W = " << w;
  }
}

TEST(AnalyticModel, CpuOptimizerIsCopiesPlusHostUpdate) {
  // MoFa(28): t_D2H(fp32 grads) + t_CPU + t_H2D(bf16 params).
  AnalyticInput in = input(Layout{.global_batch = 1}, ScheduleKind::k1F1B, 2);
  in.features.optimizer_placement = OptimizerPlacement::kCpu;
  const double n = stage_gpu_params(in.model, in.parallel, 0).total();
  const double expected = n * 4 / 50e9 + n / 1e9 + n * 2 / 50e9;
  EXPECT_NEAR(evaluate_mofa(in).timing.breakdown.optimizer, expected, 1e-9 * expected);
}

TEST(AnalyticModel, FullRecomputeAddsTheForwardToTheBackward) {
  // MoFa(32) with one GPU (no collectives): T_B,c grows by exactly the layers' T_F.
  AnalyticInput in = input(Layout{.global_batch = 1}, ScheduleKind::k1F1B, 2);
  const StepTiming base = evaluate_mofa(in).timing;
  in.features.recompute = RecomputeKind::kFull;
  const StepTiming full = evaluate_mofa(in).timing;
  EXPECT_NEAR(full.backward_chunk_s - base.backward_chunk_s, chunk_seconds(in, 2, false, false).f, 1e-12);
  // Selective (MoFa(30)) adds only the recomputed ops' forward.
  in.features.recompute = RecomputeKind::kSelective;
  const LayerOps ops = ops_for_layer(in.model, in.parallel, 0);
  const double sel = layer_compute_seconds(ops, in.hardware, in.features).selective_recompute;
  EXPECT_NEAR(evaluate_mofa(in).timing.backward_chunk_s - base.backward_chunk_s, 2 * sel, 1e-12);
}

TEST(AnalyticModel, SelectiveRecomputeRerunsTheCollectivesOfItsModules) {
  // t = 2 with SP, one stage, one micro-batch, 2 layers: every layer TP collective moves the same
  // 2 B x T x h buffer, so each all-gather costs A and each reduce-scatter R. The modules' re-run
  // forward collectives (model/recompute_modules.h) land in the exposed TP time, not overlapped:
  // torchtitan's per-op policy re-runs the two all-gathers (2A per layer), mlp fc1's all-gather
  // and fc2's reduce-scatter (A + R), layernorm none.
  AnalyticInput in = input(Layout{.tp = 2, .global_batch = 1, .sequence_parallel = true}, ScheduleKind::k1F1B, 2);
  auto tp_with = [&](RecomputeKind kind, RecomputeModules modules) {
    in.features.recompute = kind;
    in.features.recompute_modules = modules;
    return evaluate_mofa(in).timing.breakdown.tp_exposed;
  };
  const double none = tp_with(RecomputeKind::kNone, 0);
  const double two_a = (tp_with(RecomputeKind::kSelective, recompute_bit(RecomputeModule::kTorchtitanOp)) - none) / 2;
  const double a_plus_r = (tp_with(RecomputeKind::kSelective, recompute_bit(RecomputeModule::kMlp)) - none) / 2;
  EXPECT_EQ(tp_with(RecomputeKind::kSelective, recompute_bit(RecomputeModule::kLayernorm)), none);
  ASSERT_GT(two_a, 0);
  ASSERT_GT(a_plus_r, two_a / 2);  // a reduce-scatter costs at least its all-gather's transfer
  // Both together re-run fc1's all-gather once: 2A + R per layer, not the sum 3A + R.
  const double a = two_a / 2;
  const double r = a_plus_r - a;
  // By hand: each rank moves half the 2 B x 4096 x 8192 = 67,108,864 B buffer over the 100 GB/s
  // link (no latency): 0.33554432 ms for the all-gather and the reduce-scatter alike.
  EXPECT_NEAR(a, 0.33554432e-3, 1e-12);
  EXPECT_NEAR(r, 0.33554432e-3, 1e-12);
  EXPECT_NEAR(tp_with(RecomputeKind::kSelective,
                      recompute_bit(RecomputeModule::kTorchtitanOp) | recompute_bit(RecomputeModule::kMlp)) -
                  none,
              2 * (2 * a + r), 1e-12);
  // Without recompute a layer runs 2 all-gathers and 2 reduce-scatters in the forward, as many in the
  // input-gradient pass and 2 all-gathers in the weight-gradient pass: (6A + 4R) per layer; the
  // embedding and head add theirs, so the layers' share is at most the whole.
  EXPECT_LE(2 * (6 * a + 4 * r), none + 1e-12);
}

TEST(AnalyticModel, OffloadBoundByTheCopy) {
  // MoFa(33): with a slow D2H each layer's forward becomes β·t_D2H = activation / d2h_bw.
  AnalyticInput in = input(Layout{.global_batch = 1}, ScheduleKind::k1F1B, 2);
  in.hardware.d2h_bandwidth = 1e6;
  in.features.activation_offload = OverlapSpec{.enabled = true, .alpha = 1, .beta = 1, .chunks = 1};
  const LayerOps ops = ops_for_layer(in.model, in.parallel, 0);
  const Pass emb_head = chunk_seconds(in, 0, true, true);
  const double expected = 2 * ops.totals().activation_bytes / 1e6 + emb_head.f;
  EXPECT_NEAR(evaluate_mofa(in).timing.forward_chunk_s, expected, 1e-9 * expected);
}

TEST(AnalyticModel, TpOverlapNeverSlowerWithUnitCoefficients) {
  AnalyticInput in = input(Layout{.tp = 8, .global_batch = 1, .sequence_parallel = true}, ScheduleKind::k1F1B, 2);
  const StepTiming off = evaluate_mofa(in).timing;
  in.features.tp_overlap = OverlapSpec{.enabled = true, .alpha = 1, .beta = 1, .chunks = 1};
  // One chunk: MoFa(20) degenerates to X + C.
  EXPECT_NEAR(evaluate_mofa(in).timing.step_time_s, off.step_time_s, 1e-12);
  in.features.tp_overlap.chunks = 4;
  const StepTiming on = evaluate_mofa(in).timing;
  EXPECT_LT(on.breakdown.tp_exposed, off.breakdown.tp_exposed);
  EXPECT_GT(off.breakdown.tp_exposed, 0);
}

TEST(AnalyticModel, MoreBandwidthIsNeverSlower) {
  AnalyticInput in = input(Layout{.tp = 8, .pp = 2, .dp = 2, .global_batch = 8}, ScheduleKind::k1F1B, 4);
  double previous = 1e300;
  for (double bw : {25e9, 50e9, 100e9, 400e9}) {
    in.topology.intra_node.bandwidth = bw;
    in.topology.inter_node.bandwidth = bw / 4;
    const double t = evaluate_mofa(in).timing.step_time_s;
    EXPECT_LE(t, previous);
    previous = t;
  }
}

TEST(AnalyticModel, RetimingMatchesAFreshPrepare) {
  AnalyticInput in = input(Layout{.tp = 8, .pp = 2, .global_batch = 4}, ScheduleKind::k1F1B, 4);
  const AnalyticModel prepared(in);
  RateKnobs knobs = prepared.rates();
  knobs.efficiency.gemm = 0.6;
  knobs.bandwidth_scale = 2;
  in.hardware.efficiency.gemm = 0.6;
  in.features.bandwidth_scale = 2;
  EXPECT_DOUBLE_EQ(prepared.time_step(knobs).step_time_s, evaluate_mofa(in).timing.step_time_s);
}

TEST(AnalyticModel, GpipeIsTwoFlowShops) {
  // GPipe, p = 2, m = 4, free hops: all forwards then all backwards, each a flow shop of
  // identical jobs: Σ_r T_F,r + (m − 1)·max_r T_F,r, then Σ_r T_B,r + (m − 1)·max_r T_B,r. Stage 1
  // (the head) is the slower in both phases, so the busy time is m·(T_F,1 + T_B,1) and the idle
  // time is stage 0's passes, T_F,0 + T_B,0 — not (p − 1)·(T_F + T_B) of the busiest stage.
  AnalyticInput in = input(Layout{.pp = 2, .global_batch = 4}, ScheduleKind::kGpipe, 4);
  in.topology.intra_node.bandwidth = 1e30;
  const AnalyticResult r = evaluate_mofa(in);
  const Pass s0 = chunk_seconds(in, 2, true, false);
  const Pass s1 = chunk_seconds(in, 2, false, true);
  ASSERT_GT(s1.f, s0.f);
  ASSERT_GT(s1.b, s0.b);
  EXPECT_NEAR(r.timing.pipeline_s, s0.f + s1.f + 3 * s1.f + s0.b + s1.b + 3 * s1.b, 1e-9 * r.timing.pipeline_s);
  EXPECT_NEAR(r.timing.breakdown.pp_bubble, s0.f + s0.b, 1e-12);
}

TEST(AnalyticModel, ZeroBubbleH1BubbleIsFPlusBMinusW) {
  // ZB-H1: bubble (p − 1)(T_F + T_B − T_W) of the busiest stage, T_B the input-grad part only.
  AnalyticInput in = input(Layout{.pp = 2, .global_batch = 4}, ScheduleKind::kZbH1, 4);
  in.topology.intra_node.bandwidth = 1e30;
  auto seconds = [&](const LayerOps& ops) { return layer_compute_seconds(ops, in.hardware, in.features); };
  const LayerSeconds layer = seconds(ops_for_layer(in.model, in.parallel, 0));
  const LayerSeconds head = seconds(ops_for_head(in.model, in.parallel));
  const double f = 2 * layer.forward + head.forward;
  const double b = 2 * layer.backward_input + head.backward_input;
  const double w = 2 * layer.backward_weight + head.backward_weight;
  EXPECT_NEAR(evaluate_mofa(in).timing.breakdown.pp_bubble, f + b - w, 1e-12);
}

TEST(AnalyticModel, RejectsMismatchedClusterSize) {
  AnalyticInput in = input(Layout{.tp = 2, .global_batch = 1}, ScheduleKind::k1F1B, 2);
  in.topology.gpus = 4;
  EXPECT_THROW(evaluate_mofa(in), std::invalid_argument);
}

TEST(AnalyticModel, ReportsMemoryFeasibility) {
  AnalyticInput in = input(Layout{.global_batch = 1}, ScheduleKind::k1F1B, 80);
  const AnalyticResult r = evaluate_mofa(in);  // 69B parameters on one 80 GB GPU
  EXPECT_FALSE(r.fits);
  EXPECT_GT(r.memory_excess_bytes, 1e12);
}

// ---------------------------------------------------------------- rank 0's groups without a Placement
TEST(AnalyticGroups, GroupMembersOfMatchesThePlacement) {
  // group_members_of computes one rank's group from its coordinates; Placement builds every group
  // by walking all ranks. They must agree for every kind, on random sizes, orders and ranks.
  const std::array<const char*, 6> orders = {"tp-cp-ep-dp-pp", "tp-pp-cp-ep-dp", "pp-tp-dp-ep-cp",
                                             "tp-ep-dp-cp-pp", "cp-dp-ep-tp-pp", "dp-cp-ep-pp-tp"};
  std::mt19937 rng(7);
  auto pick = [&](std::initializer_list<int> v) {
    return *(v.begin() + std::uniform_int_distribution<int>(0, static_cast<int>(v.size()) - 1)(rng));
  };
  int checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    topology::ParallelSizes sizes{.tp = pick({1, 2, 4}), .cp = pick({1, 2, 3}), .ep = 1, .dp = pick({1, 2, 4, 6}),
                                  .pp = pick({1, 2, 3})};
    sizes.ep = pick({1, 2, 3, 4});
    if ((sizes.cp * sizes.dp) % sizes.ep != 0) sizes.ep = 1;
    const topology::RankOrder order = topology::RankOrder::parse(orders[static_cast<std::size_t>(trial) % orders.size()]);
    try {  // an order Megatron refuses with these sizes (not ending in pp with edp != dp) runs without EP
      topology::check_order_for_sizes(sizes, order);
    } catch (const std::invalid_argument&) {
      sizes.ep = 1;
    }
    const topology::Placement placement(sizes, order);
    for (int k = 0; k < topology::kGroupKindCount; ++k) {
      const auto kind = static_cast<topology::GroupKind>(k);
      for (int rank : {0, sizes.world() - 1, std::uniform_int_distribution<int>(0, sizes.world() - 1)(rng)}) {
        const std::span<const int> want = placement.members_of(kind, rank);
        EXPECT_EQ(topology::group_members_of(sizes, order, kind, rank), std::vector<int>(want.begin(), want.end()))
            << topology::group_kind_name(kind) << " of rank " << rank << " with " << order.to_string();
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 200 * topology::kGroupKindCount * 3);
  const topology::ParallelSizes sizes{.tp = 2, .cp = 1, .ep = 1, .dp = 2, .pp = 1};
  EXPECT_THROW((void)topology::group_members_of(sizes, topology::RankOrder{}, topology::GroupKind::kTp, 4),
               std::invalid_argument);
  EXPECT_THROW((void)topology::group_members_of({.tp = 1, .cp = 1, .ep = 3, .dp = 2, .pp = 1}, topology::RankOrder{},
                                                topology::GroupKind::kEp, 0),
               std::invalid_argument);
}

TEST(AnalyticGroups, DpReductionIsPricedAsOnTheFullCluster) {
  // The analytic model prices rank 0's groups on a cluster holding just their GPUs. Here the DP
  // group (tp = 4 on 8-GPU nodes: two members per node, on rails 0 and 2 of 4 NICs) spans 4 nodes
  // in 2 supernodes behind an oversubscribed, slower spine. With p = 1, no overlap and one bucket,
  // the exposed DP time is the ring all-reduce of the gradients, S = dense params × 4 B (fp32),
  // which a CommGroup over Placement's DP group on the whole 32-GPU cluster prices independently.
  for (const char* order : {"tp-cp-ep-dp-pp", "tp-dp-ep-cp-pp"}) {
    AnalyticInput in = input(Layout{.tp = 4, .dp = 8, .global_batch = 8}, ScheduleKind::k1F1B, 4);
    in.rank_order = topology::RankOrder::parse(order);
    in.features.dp_bucket_bytes = 0;
    in.topology.nodes_per_supernode = 2;
    in.topology.nics_per_node = 4;
    in.topology.inter_supernode = topology::LinkSpec{.bandwidth = 20e9, .latency = 30e-6};
    in.topology.oversubscription = 2;
    const AnalyticResult r = evaluate_mofa(in);
    const double grad_bytes = r.memory.stages[0].params.dense() * 4;

    const topology::Topology full(in.topology);
    const topology::Placement placement({.tp = 4, .cp = 1, .ep = 1, .dp = 8, .pp = 1}, in.rank_order);
    const topology::CommGroup dp(full, placement.members_of(topology::GroupKind::kDp, 0));
    ASSERT_EQ(dp.shape().supernodes, 2);
    const double want = dp.seconds(topology::CollectiveKind::kAllReduce, topology::CollectiveAlgorithm::kRing,
                                   Bytes{grad_bytes});
    EXPECT_NEAR(r.timing.breakdown.dp_exposed, want, 1e-9 * want) << order;
    EXPECT_GT(r.timing.breakdown.dp_exposed, 0);
  }
}

TEST(AnalyticGroups, EvaluateMatchesThePreparedModel) {
  // evaluate() (copying the memory report) and evaluate_mofa (moving it out) give the same result,
  // and the timing a prepared model reports is time_step(rates()).
  const AnalyticInput in = input(Layout{.tp = 2, .pp = 2, .dp = 2, .global_batch = 8}, ScheduleKind::k1F1B, 4);
  const AnalyticModel model(in);
  const AnalyticResult a = model.evaluate();
  const AnalyticResult b = evaluate_mofa(in);
  EXPECT_EQ(a.timing.step_time_s, model.time_step(model.rates()).step_time_s);
  EXPECT_EQ(a.timing.step_time_s, b.timing.step_time_s);
  ASSERT_EQ(a.memory.stages.size(), 2U);
  ASSERT_EQ(b.memory.stages.size(), 2U);
  EXPECT_EQ(a.memory.stages[1].peak_bytes, b.memory.stages[1].peak_bytes);
  EXPECT_EQ(model.memory().stages.size(), 2U);  // the model keeps its own report
}

}  // namespace
}  // namespace mofasim::model
