// DeepEP's per-rank buffers and its chunked hop pipeline (model/moe_deepep.h), hand-worked from
// DeepEP's Config size hints with Megatron's get_buffer (the larger of the dispatch and combine
// configs), 10 channels (num_sms 20), hidden bytes 2h.
#include "model/moe_deepep.h"

#include <gtest/gtest.h>

#include <vector>

#include "model/memory.h"
#include "test/model/flex_memory_for_test.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

// A token slot: 2h + 8 (source meta) + 128·8 (top-k ids) + 128·4 (weights) + 128·4 (scales).
TEST(MoeDeepEp, DeepSeekV3BuffersOnSixtyFourRanks) {
  // h = 7168: slot 14,336 + 2,056 = 16,392 B. 64 ranks: 8 NVLink peers, 8 RDMA ranks; both configs
  // keep 288 NVLink and 128 RDMA receive tokens (RDMA send chunk 8).
  //   NVLink: 10·8·(2·8 + 3)·4 = 6,080 + 10·8·288·16,392 = 377,671,680 -> 377,677,760, 128-aligned
  //     377,677,824.
  //   RDMA: 10·8·18·2·4 = 11,520 + 2·10·8·128·(16,392 + 16) = 336,035,840 -> 336,047,360 (aligned).
  const DeepEpBuffers b = deepep_buffers(7168, 64);
  EXPECT_EQ(b.nvl_bytes, 377'677'824.0);
  EXPECT_EQ(b.rdma_bytes, 336'047'360.0);
  EXPECT_EQ(b.total(), 713'725'184.0);  // 680.7 MiB per GPU
}

TEST(MoeDeepEp, WithinOneNodeOnlyTheNvlinkBuffer) {
  // h = 256, 8 ranks: slot 512 + 2,056 = 2,568 B; 10·8·(2 + 3)·4 = 1,600 + 10·8·256·2,568 =
  // 52,592,640 -> 52,594,240, aligned 52,594,304. No RDMA buffer within 8 ranks.
  const DeepEpBuffers b = deepep_buffers(256, 8);
  EXPECT_EQ(b.nvl_bytes, 52'594'304.0);
  EXPECT_EQ(b.rdma_bytes, 0.0);
  EXPECT_EQ(deepep_buffers(256, 1).total(), 0.0);
  // A group size DeepEP lists no config for takes the next one up: 12 ranks -> 16's.
  EXPECT_EQ(deepep_dispatch_config(12).rdma_chunked_send_tokens, 20);
  EXPECT_EQ(deepep_combine_config(12).rdma_chunked_send_tokens, 12);
}

TEST(MoeDeepEp, PipelineChunks) {
  // 64 ranks: 8 tokens per RDMA chunk on 10 channels; 4096 tokens -> 51.2 chunks each way.
  EXPECT_DOUBLE_EQ(deepep_pipeline_chunks(4096, 64, true), 51.2);
  EXPECT_DOUBLE_EQ(deepep_pipeline_chunks(4096, 64, false), 51.2);
  // 16 ranks: dispatch 20, combine 12 tokens per chunk.
  EXPECT_DOUBLE_EQ(deepep_pipeline_chunks(4000, 16, true), 20.0);
  EXPECT_DOUBLE_EQ(deepep_pipeline_chunks(4080, 16, false), 34.0);
  EXPECT_DOUBLE_EQ(deepep_pipeline_chunks(10, 16, true), 1.0);  // fewer tokens than one chunk
}

TEST(MoeDeepEp, MemoryModelCountsTheBuffersOncePerGpu) {
  const ParallelSpec p = testing::parallel_spec({.tp = 1, .cp = 1, .pp = 1, .vpp = 1, .dp = 128, .ep = 64, .etp = 1,
                                                 .micro_batch = 1, .global_batch = 128});
  const auto [a2a, flex] = testing::flex_and_alltoall_memory(testing::deepseek_v3(), p);
  for (std::size_t s = 0; s < flex.stages.size(); ++s) {
    EXPECT_EQ(flex.stages[s].static_bytes.deepep_buffers, 713'725'184.0);
    EXPECT_EQ(a2a.stages[s].static_bytes.deepep_buffers, 0.0);
    EXPECT_DOUBLE_EQ(flex.stages[s].peak_bytes - a2a.stages[s].peak_bytes, 713'725'184.0);
  }
}

}  // namespace
}  // namespace mofasim::model
