// The layout fields in Megatron's vocabulary: HSDP (optimizations.optimizer.
// num_distributed_optimizer_instances), rank orders, the embedding / loss accounting of the
// pipeline split and cp_comm_type: what loads, and the located one-line error of each combination
// Megatron (or Transformer Engine) refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/scenario/loader.h"
#include "test/scenario/scenario_test_util.h"

namespace mofasim::scenario {
namespace {

using testing::Lines;

std::vector<std::string> errors(const Lines& lines) { return testing::errors_of(lines.text(), {}); }

TEST(HsdpField, LoadsIntoTheFeatures) {
  const LoadedScenario s = load_scenario_from_string(
      Lines{.parallelism = "parallelism: {tp: 1, pp: 1, dp: 8, global_batch: 16}",
            .extra = "optimizations: {optimizer: {data_parallel_sharding_strategy: optim_grads, "
                     "num_distributed_optimizer_instances: 4}}"}
          .text(),
      "good.yaml", {}, testing::test_presets());
  EXPECT_EQ(s.features.dist_opt_instances, 4);
  EXPECT_EQ(s.features.dp_sharding, model::DpSharding::kOptimGrads);
}

TEST(HsdpField, LocatedErrors) {
  // dp*cp = 2 (tp 2, pp 2, dp 2 on 8 GPUs).
  EXPECT_THAT(errors({.extra = "optimizations: {optimizer: {distributed: true, num_distributed_optimizer_instances: 4}}"}),
              ::testing::ElementsAre("bad.yaml:5:85: optimizations.optimizer.num_distributed_optimizer_instances: 4 "
                                     "does not divide dp*cp = 2"));
  EXPECT_THAT(errors({.extra = "optimizations: {optimizer: {num_distributed_optimizer_instances: 2}}"}),
              ::testing::ElementsAre("bad.yaml:5:66: optimizations.optimizer.num_distributed_optimizer_instances: 2 needs a "
                                     "sharded optimizer (data_parallel_sharding_strategy optim, optim_grads or "
                                     "optim_grads_params): without sharding every rank already holds a replica"));
  // MoE: dp 4, ep 4 gives an expert-DP size of 1, which 2 instances cannot cut.
  EXPECT_THAT(errors({.model = "model: {preset: test-moe}",
                      .topology = R"(topology: {gpus: 4, intra_node: {bandwidth: "400 GB/s"}, inter_node: {bandwidth: "50 GB/s"}})",
                      .parallelism = "parallelism: {dp: 4, ep: 4, global_batch: 16}",
                      .extra = "optimizations: {optimizer: {distributed: true, num_distributed_optimizer_instances: 2}}"}),
              ::testing::ElementsAre("bad.yaml:5:85: optimizations.optimizer.num_distributed_optimizer_instances: 2 "
                                     "does not divide the expert-DP size dp*cp/ep = 1"));
}

TEST(RankOrderField, MetasOrderLoadsWithContextParallelism) {
  const LoadedScenario s = load_scenario_from_string(
      Lines{.parallelism = "parallelism: {tp: 2, cp: 2, pp: 2, dp: 1, global_batch: 16, rank_order: tp-cp-ep-pp-dp}"}.text(),
      "good.yaml", {}, testing::test_presets());
  EXPECT_EQ(s.proto.parallelism().rank_order(), "tp-cp-ep-pp-dp");
}

TEST(RankOrderField, OrdersLeavingOutDimensionsOfSizeOneLoad) {
  // Megatron's --use-tp-pp-dp-mapping order of older releases: cp and ep (size 1) are appended.
  const LoadedScenario s = load_scenario_from_string(
      Lines{.parallelism = "parallelism: {tp: 2, pp: 2, dp: 2, global_batch: 16, rank_order: tp-pp-dp}"}.text(),
      "good.yaml", {}, testing::test_presets());
  EXPECT_EQ(s.proto.parallelism().rank_order(), "tp-pp-dp");
  // With cp 2 the same order leaves out a dimension of size 2.
  EXPECT_THAT(errors({.parallelism = "parallelism: {tp: 2, cp: 2, pp: 2, dp: 1, global_batch: 16, rank_order: tp-pp-dp}"}),
              ::testing::ElementsAre("bad.yaml:4:73: parallelism.rank_order: 'tp-pp-dp' leaves out cp, whose size is 2; "
                                     "Megatron appends only the dimensions of size 1 an order leaves out"));
}

TEST(RankOrderField, OrdersMegatronRefusesAreLocated) {
  // test-moe on 8 GPUs, pp 2, dp 4, ep 2, pp not last: edp = 4/2 = 2 differs from dp = 4.
  EXPECT_THAT(
      errors({.model = "model: {preset: test-moe}",
              .parallelism = "parallelism: {pp: 2, dp: 4, ep: 2, global_batch: 16, rank_order: tp-cp-ep-pp-dp}"}),
      ::testing::ElementsAre("bad.yaml:4:66: parallelism.rank_order: 'tp-cp-ep-pp-dp' does not end in pp, so Megatron "
                             "needs the expert-DP size tp*cp*dp/(ep*etp) = 2 to equal dp = 4 (the attention and MoE layers' "
                             "data-parallel sizes must match)"));
}

TEST(PipelineSplitFields, LoadAndRefuseWhatMegatronRefuses) {
  // kModelLine has 4 layers; pp 2 with the embedding and loss counted: (4 + 2) / 2 = 3 per stage.
  const LoadedScenario s = load_scenario_from_string(
      Lines{.parallelism = "parallelism: {tp: 2, pp: 2, dp: 2, global_batch: 16, account_for_embedding_in_pipeline_split: "
                           "true, account_for_loss_in_pipeline_split: true}"}
          .text(),
      "good.yaml", {}, testing::test_presets());
  EXPECT_TRUE(s.parallel.account_for_embedding);
  EXPECT_TRUE(s.parallel.account_for_loss);
  // 4 + 1 = 5 layers do not split over 2 stages.
  EXPECT_THAT(errors({.parallelism = "parallelism: {tp: 2, pp: 2, dp: 2, global_batch: 16, "
                                     "account_for_embedding_in_pipeline_split: true}"}),
              ::testing::ElementsAre("bad.yaml:4:26: parallelism.pp: pp*vpp = 2 does not divide model.num_layers + 1 "
                                     "(the embedding and loss counted in the pipeline split) = 5"));
  EXPECT_THAT(errors({.parallelism = "parallelism: {tp: 2, pp: 2, dp: 2, global_batch: 16, stage_layers: [1, 3], "
                                     "account_for_loss_in_pipeline_split: true}"}),
              ::testing::ElementsAre("bad.yaml:4:112: parallelism.account_for_loss_in_pipeline_split: only with the even "
                                     "split, not with stage_layers (Megatron refuses it with an uneven pipeline)"));
}

TEST(CpCommTypeField, LoadsAndUlyssesNeedsHeadsPerCpRank) {
  const LoadedScenario s = load_scenario_from_string(
      Lines{.parallelism = "parallelism: {tp: 2, cp: 2, pp: 2, dp: 1, global_batch: 16, cp_comm_type: all_gather}"}.text(),
      "good.yaml", {}, testing::test_presets());
  EXPECT_EQ(s.parallel.cp_comm_type, model::CpCommType::kAllGather);
  // 8 heads and 4 KV heads over tp 2 leave 4 and 2 per TP rank: 2 KV heads do not split over cp 4.
  EXPECT_THAT(errors({.parallelism = "parallelism: {tp: 2, cp: 4, pp: 1, dp: 1, global_batch: 16, cp_comm_type: a2a}"}),
              ::testing::ElementsAre("bad.yaml:4:75: parallelism.cp_comm_type: a2a needs the attention heads (4) and KV "
                                     "heads (2) per TP rank divisible by cp = 4"));
}

}  // namespace
}  // namespace mofasim::scenario
