// The expert-DP gradient traffic of an etp = 2 layout in the per-rank plan: DeepSeek-V3 on tp 4
// (sequence parallel), dp 16, ep 8, etp 2, so edp = 64 / (8·2) = 4 (see moe_expert_tp_test.cc for
// the layer's bytes and the expert parameters per GPU, 704,643,072 per MoE layer).
#include <gtest/gtest.h>

#include "model/params.h"
#include "model/rank_plan.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

ParallelSpec etp2() {
  return testing::parallel_spec({.tp = 4, .cp = 1, .pp = 1, .vpp = 1, .dp = 16, .ep = 8, .etp = 2,
                                 .micro_batch = 1, .global_batch = 16, .sequence_parallel = true});
}

TEST(MoeExpertDp, ExpertGradientsReduceOverExpertDp) {
  // The rank's expert gradients (fp32, 4 B per parameter on this GPU) go to the expert-DP group;
  // with the distributed optimizer this GPU updates 1/edp = 1/4 of them.
  const ModelSpec m = testing::deepseek_v3();
  HardwareSpec hw;
  hw.gpu_memory_bytes = 80e9;
  FeatureSpec f;
  f.distributed_optimizer = true;
  const RankPlan plan = build_rank_plan({.model = &m, .hardware = &hw, .parallel = etp2(), .features = f});
  const GpuParams p = stage_gpu_params(m, etp2(), 0);
  EXPECT_DOUBLE_EQ(plan.dp[0].expert_grad_bytes, 4 * p.expert);
  EXPECT_DOUBLE_EQ(plan.dp[0].expert_grad_bytes, 4 * (58 + m.mtp_depth) * 704'643'072.0);
  EXPECT_DOUBLE_EQ(plan.dp[0].updated_params, p.dense() / 16 + p.expert / 4);
}

}  // namespace
}  // namespace mofasim::model
