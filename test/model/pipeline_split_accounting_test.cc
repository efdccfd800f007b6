// Megatron's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split
// (get_num_layers_to_build): the embedding and the loss each count as one layer, the sum splits
// evenly over the pp*vpp chunks, and the first (last) chunk builds one transformer layer fewer.
// Layer counts per chunk and the parameters (so the static memory) per stage, worked by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "model/memory.h"
#include "model/params.h"
#include "model/stage_layout.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

using testing::parallel_spec;

std::vector<int> layer_counts(const ModelSpec& model, const ParallelSpec& par) {
  std::vector<int> out;
  for (const ChunkLayers& c : chunk_layers(model, par)) out.push_back(c.num_layers);
  return out;
}

ParallelSpec accounted(int pp, int vpp, bool embedding, bool loss) {
  ParallelSpec p = parallel_spec({.pp = pp, .vpp = vpp, .global_batch = 8});
  p.account_for_embedding = embedding;
  p.account_for_loss = loss;
  return p;
}

TEST(PipelineSplitAccounting, LayerCountsPerChunk) {
  ModelSpec model = testing::tiny_gpt();
  model.num_layers = 6;
  // (6 + 1 + 1) / 4 = 2 per stage; the first and the last build one layer fewer.
  EXPECT_THAT(layer_counts(model, accounted(4, 1, true, true)), ::testing::ElementsAre(1, 2, 2, 1));
  // Embedding only: (6 + 1) / 7 = 1, so the first stage holds the embedding alone.
  EXPECT_THAT(layer_counts(model, accounted(7, 1, true, false)), ::testing::ElementsAre(0, 1, 1, 1, 1, 1, 1));
  // Loss only, (6 + 1) / 7 again: the last stage holds the head and loss alone.
  EXPECT_THAT(layer_counts(model, accounted(7, 1, false, true)), ::testing::ElementsAre(1, 1, 1, 1, 1, 1, 0));
  // Interleaved, 14 layers on pp 4 x vpp 2: (14 + 2) / 8 = 2 per chunk, chunks 0 and 7 one fewer;
  // rank 0 runs chunks 0 and 4 (1 + 2 layers), rank 3 chunks 3 and 7 (2 + 1).
  model.num_layers = 14;
  EXPECT_THAT(layer_counts(model, accounted(4, 2, true, true)), ::testing::ElementsAre(1, 2, 2, 2, 2, 2, 2, 1));
  // 6 + 2 = 8 does not split over 3 stages.
  model.num_layers = 6;
  try {
    (void)chunk_layers(model, accounted(3, 1, true, true));
    FAIL() << "8 counted layers over 3 chunks";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("do not divide 6 layers + 2 (embedding / loss) = 8 evenly"));
  }
}

TEST(PipelineSplitAccounting, StageParametersAndStaticMemory) {
  // tiny_gpt with 6 layers of 244 parameters, pp 4, both counted: stage 0 holds the embedding
  // (10 x 4 tokens + 8 x 4 positions = 72) and 1 layer = 316; stages 1 and 2 two layers = 488;
  // stage 3 one layer, the tied head copy (10 x 4) and the final LayerNorm (2 x 4) = 292.
  ModelSpec model = testing::tiny_gpt();
  model.num_layers = 6;
  const ParallelSpec par = accounted(4, 1, true, true);
  EXPECT_DOUBLE_EQ(stage_gpu_params(model, par, 0).total(), 316);
  EXPECT_DOUBLE_EQ(stage_gpu_params(model, par, 1).total(), 488);
  EXPECT_DOUBLE_EQ(stage_gpu_params(model, par, 2).total(), 488);
  EXPECT_DOUBLE_EQ(stage_gpu_params(model, par, 3).total(), 292);
  // Static memory at 18 B per parameter (bf16 weights, fp32 grads, fp32 master + Adam).
  const MemoryReport r = memory_report(model, testing::round_gpu(), par, FeatureSpec{}, std::vector<double>{4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(r.stages[0].static_bytes.total(), 316 * 18);
  EXPECT_DOUBLE_EQ(r.stages[3].static_bytes.total(), 292 * 18);
  // Without the accounting the even split is unchanged: 6 layers over 3 stages.
  EXPECT_THAT(layer_counts(model, parallel_spec({.pp = 3, .global_batch = 8})), ::testing::ElementsAre(2, 2, 2));
}

}  // namespace
}  // namespace mofasim::model
