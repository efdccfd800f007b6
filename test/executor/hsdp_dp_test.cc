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
  StepPlan plan = testing::uniform_plan(1, 1, 1e-3, 2e-3, 0);
  plan.layers[0].dense_grad_bytes = 8e6;
  plan.stages[0].dense_replica_share = 0.25;
  return plan;
}

model::FeatureSpec hsdp_features() {
  model::FeatureSpec f;
  f.distributed_optimizer = true;
  f.dp_sharding = model::DpSharding::kOptim;
  f.dist_opt_instances = 2;
  return f;
}

TEST(HsdpDag, EachBucketIsReduceScatteredThenItsShardAllReducedAcrossReplicas) {
  const StepPlan plan = hsdp_plan();
  const schedules::Schedule sched = schedules::build_schedule(model::ScheduleKind::k1F1B, {.stages = 1, .microbatches = 1});
  GenerateInput in;
  in.schedule = &sched;
  in.plan = &plan;
  in.parallel.dp = 8;
  in.parallel.global_batch = 8;
  in.features = hsdp_features();
  in.position_layers = {{0, 1}};
  const Workload w = generate_workload(in);
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
  PlanSimulation sim;
  sim.plan = &plan;
  sim.schedule = &sched;
  sim.position_layers = {{0, 1}};
  sim.parallel.dp = 8;
  sim.parallel.global_batch = 8;
  sim.features = hsdp_features();
  sim.topology = {.gpus = 8, .gpus_per_node = 4, .intra_node = {.bandwidth = 100e9, .latency = 0},
                  .inter_node = {.bandwidth = 1e9, .latency = 0}};
  SimulateOptions folded;
  folded.fidelity = Fidelity::kFolded;
  SimulateOptions full;
  full.fidelity = Fidelity::kFull;
  const StepResult a = simulate_plan(sim, folded);
  EXPECT_NEAR(a.step_time_s, 5.06e-3, 1e-8);
  EXPECT_NEAR(simulate_plan(sim, full).step_time_s, a.step_time_s, 1e-12);
}

}  // namespace
}  // namespace mofasim::executor
