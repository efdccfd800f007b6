// InternEvo's broadcast parameter sync in the DAG (sim/executor/generate_dp.cc): with
// DpParamSync::kBroadcast the gradient buckets are all-reduced over DP (not reduce-scattered) and
// the parameters go out as one broadcast per owner rank, each of the same size, one after another
// on the DP stream; the replay prices each with its pipeline fill.
#include <gtest/gtest.h>

#include "schedules/factory.h"
#include "sim/executor/generate.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

// One layer, F = 1 ms, B = 2 ms, 8 MB of gradients (one bucket) and 4 MB of parameters held by 3
// owner ranks of the dp 8 group.
StepPlan broadcast_plan() {
  StepPlan plan = testing::one_layer_dp_plan(8e6);
  plan.stages[0].param_gather_bytes = 4e6;
  plan.stages[0].param_broadcasts = 3;
  return plan;
}

model::FeatureSpec broadcast_features() { return testing::zero_one(model::DpParamSync::kBroadcast); }

TEST(ZeroBroadcastDag, GradientsAreAllReducedAndEachOwnerBroadcastsAThird) {
  const StepPlan plan = broadcast_plan();
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  const Workload w = generate_workload(testing::one_layer_dp_input(plan, sched, 8, broadcast_features()));
  int broadcasts = 0;
  int gathers = 0;
  TaskId reduce = kNone;
  for (TaskId t = 0; t < w.size(); ++t) {
    const std::string_view name = w.op_name(w.op(t));
    if (name == "dp_grad_reduce") reduce = t;
    if (name == "dp_param_all_gather") ++gathers;
    if (name == "dp_param_broadcast") {
      ++broadcasts;
      EXPECT_EQ(w.collective(t), CollectiveKind::kBroadcast);
      EXPECT_EQ(w.scope(t), Scope::kDp);
      EXPECT_DOUBLE_EQ(w.work(t), 4e6 / 3);
    }
  }
  EXPECT_EQ(broadcasts, 3);
  EXPECT_EQ(gathers, 0);
  ASSERT_NE(reduce, kNone);
  EXPECT_EQ(w.collective(reduce), CollectiveKind::kAllReduce);
}

TEST(ZeroBroadcastDag, ReplayChargesEveryBroadcastItsFill) {
  // 8 GPUs on 2 nodes of 4, one NIC per GPU at 1 GB/s, NVLink 100 GB/s, no latency. All-reduce of
  // 8 MB over 8 (2 x 7/8 x 8 MB at the ring's 4 GB/s per node: 3.5 ms) after the 3 ms of compute.
  // Each broadcast of 4/3 MB: 4/3 MB / 4 GB/s = 0.3333 ms, plus its fill of one 128 KiB chunk per
  // channel (4 channels) over 6 NVLink hops and 1 node-to-node hop:
  // 131072 x (6 x 4 / 100e9 + 1 / 1e9) = 0.16204 ms. Step: 3 + 3.5 + 3 x 0.49537 = 7.9861 ms.
  const StepPlan plan = broadcast_plan();
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  const testing::FoldedAndFull step = testing::folded_and_full_step(testing::one_layer_dp_simulation(plan, sched, broadcast_features()));
  EXPECT_NEAR(step.folded, 3e-3 + 3.5e-3 + 3 * (4e6 / 3 / 4e9 + 131072 * (24 / 100e9 + 1 / 1e9)), 1e-8);
  EXPECT_NEAR(step.full, step.folded, 1e-12);
}

}  // namespace
}  // namespace mofasim::executor
