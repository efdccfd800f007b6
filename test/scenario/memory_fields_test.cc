// The precision, data-parallel sharding and recompute fields in Megatron's names: what they load
// as (the old `recompute`, `state_dtype` and `distributed` as aliases of the new vocabulary) and
// the located one-line errors of bad values and combinations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/scenario/loader.h"
#include "test/scenario/scenario_test_util.h"

namespace mofasim::scenario {
namespace {

using testing::Lines;

LoadedScenario load(const std::string& optimizations, const std::string& model = testing::kModelLine) {
  return load_scenario_from_string(Lines{.model = model, .extra = optimizations}.text(), "good.yaml", {},
                                   testing::test_presets());
}

std::vector<std::string> errors(const std::string& optimizations, const std::string& model = testing::kModelLine) {
  return testing::errors_of(Lines{.model = model, .extra = optimizations}.text(), {});
}

TEST(MemoryFields, OldFieldsAreAliasesOfMegatronsVocabulary) {
  const LoadedScenario old = load("optimizations: {recompute: selective, optimizer: {distributed: true, state_dtype: bf16}}");
  const LoadedScenario megatron = load(
      "optimizations: {recompute_granularity: selective, recompute_modules: [core_attn], optimizer: "
      "{data_parallel_sharding_strategy: optim, exp_avg_dtype: bf16, exp_avg_sq_dtype: bf16}}");
  for (const LoadedScenario* s : {&old, &megatron}) {
    EXPECT_EQ(s->features.recompute, model::RecomputeKind::kSelective);
    EXPECT_EQ(s->features.recompute_modules, model::recompute_bit(model::RecomputeModule::kCoreAttn));
    EXPECT_TRUE(s->features.distributed_optimizer);
    EXPECT_EQ(s->features.dp_sharding, model::DpSharding::kOptim);
    EXPECT_EQ(s->features.optimizer_state_dtype, model::DType::kBf16);
    EXPECT_EQ(s->features.exp_avg_sq_dtype, model::DType::kBf16);
  }
  const LoadedScenario full = load("optimizations: {recompute: full}");
  EXPECT_EQ(full.features.recompute_method, model::RecomputeMethod::kUniform);
  EXPECT_EQ(full.features.recompute_num_layers, 1);
}

TEST(MemoryFields, ModulesMethodsPrecisionAndSharding) {
  const LoadedScenario s = load(
      "optimizations: {recompute_granularity: selective, recompute_modules: [mlp, layernorm], optimizer: "
      "{params_dtype: fp16, main_grads_dtype: fp16, main_params_dtype: fp32, data_parallel_sharding_strategy: "
      "optim_grads}}");
  EXPECT_EQ(s.features.recompute_modules, model::recompute_bit(model::RecomputeModule::kMlp) |
                                              model::recompute_bit(model::RecomputeModule::kLayernorm));
  EXPECT_EQ(s.features.param_dtype, model::DType::kFp16);
  EXPECT_EQ(s.features.grad_dtype, model::DType::kFp16);
  EXPECT_EQ(s.features.dp_sharding, model::DpSharding::kOptimGrads);
  EXPECT_TRUE(s.features.distributed_optimizer);
  const LoadedScenario block = load("optimizations: {recompute_granularity: full, recompute_method: block, recompute_num_layers: 0}");
  EXPECT_EQ(block.features.recompute, model::RecomputeKind::kFull);
  EXPECT_EQ(block.features.recompute_method, model::RecomputeMethod::kBlock);
  EXPECT_EQ(block.features.recompute_num_layers, 0);
  const LoadedScenario every = load("optimizations: {recompute: full, recompute_method: block}");
  EXPECT_GE(every.features.recompute_num_layers, 1 << 20);  // unset: every layer of a chunk
}

TEST(MemoryFields, TorchtitanSelectiveAcOptionLoadsAsItsPolicy) {
  const LoadedScenario every = load("optimizations: {recompute_granularity: selective, selective_ac_option: \"2\"}");
  EXPECT_EQ(every.features.recompute, model::RecomputeKind::kFull);
  EXPECT_EQ(every.features.recompute_method, model::RecomputeMethod::kEveryNth);
  EXPECT_EQ(every.features.recompute_num_layers, 2);
  const LoadedScenario op = load("optimizations: {recompute: selective, selective_ac_option: op}");
  EXPECT_EQ(op.features.recompute, model::RecomputeKind::kSelective);
  EXPECT_EQ(op.features.recompute_modules, model::recompute_bit(model::RecomputeModule::kTorchtitanOp));
}

TEST(MemoryFields, BadValuesAndCombinationsAreLocatedOneLineErrors) {
  EXPECT_THAT(errors("optimizations: {recompute: selective, selective_ac_option: often}"),
              ::testing::ElementsAre("bad.yaml:5:60: optimizations.selective_ac_option: must be 'op' or a layer "
                                     "frequency k >= 1 (at most 6 digits), got 'often'"));
  EXPECT_THAT(errors("optimizations: {recompute: full, selective_ac_option: op}"),
              ::testing::ElementsAre("bad.yaml:5:55: optimizations.selective_ac_option: only with "
                                     "recompute_granularity: selective (torchtitan's mode: selective)"));
  EXPECT_THAT(errors("optimizations: {recompute: selective, recompute_modules: [mlp], selective_ac_option: op}"),
              ::testing::Contains("bad.yaml:5:86: optimizations.selective_ac_option: give recompute_modules (Megatron) "
                                  "or selective_ac_option (torchtitan), not both"));
  EXPECT_THAT(errors("optimizations: {optimizer: {main_params_dtype: bf16}}"),
              ::testing::ElementsAre("bad.yaml:5:48: optimizations.optimizer.main_params_dtype: must be one of fp32, "
                                     "fp16, got bf16"));
  EXPECT_THAT(errors("optimizations: {recompute_modules: [mlp]}"),
              ::testing::ElementsAre("bad.yaml:5:36: optimizations.recompute_modules: only with "
                                     "recompute_granularity: selective"));
  EXPECT_THAT(errors("optimizations: {recompute: selective, recompute_modules: [mla_up_proj]}"),
              ::testing::ElementsAre("bad.yaml:5:59: optimizations.recompute_modules[0]: needs model.attention: mla"));
  EXPECT_THAT(errors("optimizations: {recompute: full, recompute_num_layers: 0}"),
              ::testing::ElementsAre("bad.yaml:5:56: optimizations.recompute_num_layers: must be at least 1 with "
                                     "recompute_method uniform, got 0"));
  EXPECT_THAT(errors("optimizations: {optimizer: {placement: cpu, data_parallel_sharding_strategy: optim_grads_params}}"),
              ::testing::Contains("bad.yaml:5:78: optimizations.optimizer.data_parallel_sharding_strategy: "
                                  "optim_grads_params with placement cpu is not supported"));
  EXPECT_THAT(errors("optimizations: {optimizer: {distributed: false, data_parallel_sharding_strategy: optim}}"),
              ::testing::ElementsAre("bad.yaml:5:82: optimizations.optimizer.data_parallel_sharding_strategy: "
                                     "contradicts distributed: false (distributed: true is optim; give one of the two)"));
  EXPECT_THAT(errors("optimizations: {recompute: full, recompute_granularity: selective}"),
              ::testing::ElementsAre("bad.yaml:5:57: optimizations.recompute_granularity: contradicts recompute "
                                     "(give one of the two)"));
}

}  // namespace
}  // namespace mofasim::scenario
