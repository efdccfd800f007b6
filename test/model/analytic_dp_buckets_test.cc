// MoFa(24) at v = 1 with gradient buckets queued on one DP stream (bucketed_dp_overlap_seconds),
// hand-worked event by event, and the closed form's overlap-interference floor (every overlap's α,
// and ZeRO-3's per-layer gathers, at least model::overlap_interference_alpha, as the replay slows
// compute beside any collective).
#include <algorithm>

#include <gtest/gtest.h>

#include "model/analytic_model.h"
#include "model/analytic_overlap.h"
#include "model/compute_time.h"
#include "model/interference.h"
#include "model/op_table.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

TEST(AnalyticDpBuckets, OneBucketReadyAtTheEndIsAllExposed) {
  // Backward 10 s; the one bucket is ready when it ends: 10 + latency 0.5 + bandwidth 2 = 12.5.
  const DpBucket b{.ready = 10, .latency = 0.5, .bandwidth = 2};
  EXPECT_DOUBLE_EQ(bucketed_dp_overlap_seconds(&b, 1, 10, 1, 1), 12.5);
}

TEST(AnalyticDpBuckets, BucketsQueueBehindTheOneBefore) {
  // Backward 6 s; buckets ready at 1, 5, 6 reduce in 1, 3, 1 s: 1 -> 2, 5 -> 8, then the third,
  // ready at 6, waits for the second: 8 -> 9. The even split of MoFa(24) (5 s over 3 buckets under
  // 2 s of backward each) would expose 5/3 only: 7.67.
  const DpBucket b[] = {{.ready = 1, .bandwidth = 1}, {.ready = 5, .bandwidth = 3}, {.ready = 6, .bandwidth = 1}};
  EXPECT_DOUBLE_EQ(bucketed_dp_overlap_seconds(b, 3, 6, 1, 1), 9);
  // Buckets that keep up with the backward expose only the last one: 6 + 1.
  const DpBucket fast[] = {{.ready = 1, .bandwidth = 1}, {.ready = 5, .bandwidth = 0.5}, {.ready = 6, .bandwidth = 1}};
  EXPECT_DOUBLE_EQ(bucketed_dp_overlap_seconds(fast, 3, 6, 1, 1), 7);
}

TEST(AnalyticDpBuckets, TheBackwardRunsSlowedWhileABucketReduces) {
  // Backward 4 s, α = 1.25: the first bucket (2 s, ready at 1) runs beside the backward, which
  // does 2 / 1.25 = 1.6 s of its work meanwhile (done 2.6 at t = 3); the rest, 1.4 s, ends at
  // 4.4; the last bucket (1 s, ready at 4) then runs alone: 5.4 = 4 + 2·(1 − 1/1.25) + 1.
  const DpBucket b[] = {{.ready = 1, .bandwidth = 2}, {.ready = 4, .bandwidth = 1}};
  EXPECT_NEAR(bucketed_dp_overlap_seconds(b, 2, 4, 1.25, 1), 5.4, 1e-12);
  // A latency slows nothing (the replay's fluid model): α = 2, latency 1 then 1 s of bandwidth
  // from t = 0: the backward does 1 s alone, 0.5 s in the next second, 2.5 s alone: 4.5.
  const DpBucket late{.ready = 0, .latency = 1, .bandwidth = 1};
  EXPECT_NEAR(bucketed_dp_overlap_seconds(&late, 1, 4, 2, 1), 4.5, 1e-12);
  // β = 2: a 3 s bucket from t = 0 does 1 s of its work during the 2 s backward, 2 s alone after: 4.
  const DpBucket slow{.ready = 0, .bandwidth = 3};
  EXPECT_NEAR(bucketed_dp_overlap_seconds(&slow, 1, 2, 1, 2), 4, 1e-12);
}

// LLaMA2-70B shapes with 4 layers, dp = 8 on one node, DP overlap: the closed form with the
// overlap coefficients left at 1 on a GPU whose collectives hold 24 of 108 SMs times the step
// as if every overlap's α were 108 / 84 (the replay's floor).
TEST(AnalyticDpBuckets, OverlapAlphaIsAtLeastTheHardwareInterference) {
  ModelSpec m = testing::llama2_70b();
  m.num_layers = 4;
  const ParallelSpec p = testing::parallel_spec(testing::Layout{.dp = 8, .global_batch = 8});
  AnalyticInput in{.model = m, .hardware = testing::round_gpu(), .parallel = p, .features = {},
                   .topology = {.gpus = 8, .gpus_per_node = 8, .intra_node = {.bandwidth = 1e12, .latency = 0},
                                .inter_node = {.bandwidth = 1e9, .latency = 0}}};
  in.features.dp_overlap.enabled = true;
  in.hardware.kernels.sm_count = 108;
  in.hardware.collective_sms = 24;
  const double floor = AnalyticModel(in).evaluate().timing.step_time_s;
  in.features.overlap_interference = false;
  const double free = AnalyticModel(in).evaluate().timing.step_time_s;
  in.features.dp_overlap.alpha = 108.0 / 84.0;
  const double given = AnalyticModel(in).evaluate().timing.step_time_s;
  EXPECT_DOUBLE_EQ(floor, given);
  EXPECT_GT(floor, free * 1.01);  // the buckets reduce under the backward: the floor shows
}

// ZeRO-3: each layer's gather runs beside the pass before it and slows it as any collective does
// (the replay's interference floor). LLaMA2-70B layers, 2 of them, dp 4 on one node of 100 GB/s
// without latency: g = 3/4 · 1,711,308,800 B / 100 GB/s = 12.834816 ms per gather (as in
// sharded_dp_test.cc). A pass of X seconds beside it runs slowed to (108/84)·X while the gather
// runs: the gather ends first when g <= (108/84)·X, and the two cost X + g·(1 − 84/108), else g
// (interference-free: max(X, g)). The layer's forward, F = 10.20 ms, is shorter than g but not
// once slowed (13.11 ms): 0.217 ms more; its backward (20.28 ms) 2.852 ms more. 2 micro-batches ×
// 2 layers of each pass.
TEST(AnalyticDpBuckets, ZeroThreeGathersSlowThePassTheyRunBeside) {
  ModelSpec m = testing::llama2_70b();
  m.num_layers = 2;
  AnalyticInput in{.model = m, .hardware = testing::round_gpu(),
                   .parallel = testing::parallel_spec(testing::Layout{.dp = 4, .global_batch = 8}), .features = {},
                   .topology = {.gpus = 4, .gpus_per_node = 4, .intra_node = {.bandwidth = 100e9, .latency = 0}}};
  in.features.distributed_optimizer = true;
  in.features.dp_sharding = DpSharding::kOptimGradsParams;
  in.hardware.kernels.sm_count = 108;
  in.hardware.collective_sms = 24;
  const double g = 1'283'481'600 / 100e9;
  const LayerSeconds layer = layer_compute_seconds(ops_for_layer(in.model, in.parallel, 0), in.hardware, in.features);
  auto extra = [&](double pass) {  // over the interference-free max(pass, g)
    const double slowed = g <= 108.0 / 84.0 * pass ? pass + g * (1 - 84.0 / 108.0) : g;
    return slowed - std::max(pass, g);
  };
  const double want = 2 * 2 * (extra(layer.forward) + extra(layer.backward()));
  ASSERT_GT(want, 0);  // at least the backward outlasts its gather
  const double with = AnalyticModel(in).evaluate().timing.step_time_s;
  in.features.overlap_interference = false;
  const double without = AnalyticModel(in).evaluate().timing.step_time_s;
  ASSERT_LT(layer.forward, g);  // the case above: the forward alone is shorter than its gather
  EXPECT_NEAR(with - without, want, 1e-12);
}

}  // namespace
}  // namespace mofasim::model
