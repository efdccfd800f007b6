// HSDP in the DAG (sim/executor/generate_dp.cc): with num_distributed_optimizer_instances = N the
// gradient buckets are reduce-scattered over the shard group (Scope::kDp, dp*cp/N ranks) and each
// bucket's reduced shard is then all-reduced across the replicas (Scope::kDpReplica, N ranks), as
// Megatron's param_and_grad_buffer.py issues them.
#include <gtest/gtest.h>

#include "schedules/factory.h"
#include "sim/executor/generate.h"
#include "sim/executor/simulate_step.h"
#include "test/executor/test_plans.h"

namespace mofasim::executor {
namespace {

// One layer, F = 1 ms, B = 2 ms, 8 MB of gradients (one bucket), dp 8 as 2 instances of 4: the
// replica all-reduce carries 8 MB / 4 = 2 MB.
StepPlan hsdp_plan() {
  StepPlan plan = testing::one_layer_dp_plan(8e6);
  plan.stages[0].dense_replica_share = 0.25;
  return plan;
}

model::FeatureSpec hsdp_features() { return testing::zero_one(model::DpParamSync::kAllGather, 2); }

TEST(HsdpDag, EachBucketIsReduceScatteredThenItsShardAllReducedAcrossReplicas) {
  const StepPlan plan = hsdp_plan();
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  const Workload w = generate_workload(testing::one_layer_dp_input(plan, sched, 8, hsdp_features()));
  TaskId scatter = kNone;
  TaskId replica = kNone;
  for (TaskId t = 0; t < w.size(); ++t) {
    if (w.op_name(w.op(t)) == "dp_grad_reduce") scatter = t;
    if (w.op_name(w.op(t)) == "dp_grad_replica_all_reduce") replica = t;
  }
  ASSERT_NE(scatter, kNone);
  ASSERT_NE(replica, kNone);
  EXPECT_EQ(w.scope(scatter), Scope::kDp);
  EXPECT_EQ(w.collective(scatter), CollectiveKind::kReduceScatter);
  EXPECT_DOUBLE_EQ(w.work(scatter), 8e6);
  EXPECT_EQ(w.scope(replica), Scope::kDpReplica);
  EXPECT_EQ(w.collective(replica), CollectiveKind::kAllReduce);
  EXPECT_DOUBLE_EQ(w.work(replica), 2e6);
  bool ordered = false;
  const auto from = w.edge_sources();
  const auto to = w.edge_targets();
  for (std::size_t e = 0; e < from.size(); ++e) ordered |= from[e] == scatter && to[e] == replica;
  EXPECT_TRUE(ordered);
}

TEST(HsdpDag, ReplayPricesTheShardGroupInTheNodeAndTheReplicasAcrossNodes) {
  // 8 GPUs, 4 per node (a NIC each): the shard groups are the nodes, the replica groups pairs of
  // GPUs j, j+4. Reduce-scatter of 8 MB over 4 on 100 GB/s NVLink: 3/4 x 8 MB = 60 us; all-reduce
  // of 2 MB over 2 nodes at 1 GB/s: 2 x 1/2 x 2 MB = 2 ms. Step: 3 ms + 0.06 ms + 2 ms.
  const StepPlan plan = hsdp_plan();
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  const testing::FoldedAndFull step = testing::folded_and_full_step(testing::one_layer_dp_simulation(plan, sched, hsdp_features()));
  EXPECT_NEAR(step.folded, 5.06e-3, 1e-8);
  EXPECT_NEAR(step.full, step.folded, 1e-12);
}

}  // namespace
}  // namespace mofasim::executor
