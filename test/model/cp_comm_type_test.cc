// Context parallelism's KV exchange by --cp-comm-type in the op table (model/op_table.cc), bytes
// worked by hand. A GQA layer: h 512, 8 heads and 4 KV heads of 64, s 1024, b 1, tp 1, cp 2, so
// each CP rank holds T = 512 tokens and its K and V are 2 B x 512 x 4 x (64 + 64) = 524,288 B.
#include <gtest/gtest.h>

#include <vector>

#include "model/op_table.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

ModelSpec gqa() {
  return {.name = "gqa", .num_layers = 2, .hidden_size = 512, .num_attention_heads = 8, .num_kv_heads = 4,
          .head_dim = 64, .ffn_hidden_size = 1536, .vocab_size = 8192, .seq_length = 1024};
}

std::vector<CommOp> cp_comms(CpCommType type) {
  ParallelSpec par = testing::parallel_spec({.cp = 2, .global_batch = 1});
  par.cp_comm_type = type;
  std::vector<CommOp> out;
  for (const CommOp& c : ops_for_layer(gqa(), par, 0).comms()) {
    if (c.group == LayerGroup::kCp) out.push_back(c);
  }
  return out;
}

TEST(CpCommType, RingSendsTheKvBlockOnce) {
  const std::vector<CommOp> c = cp_comms(CpCommType::kP2p);
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c[0].collective, CollectiveKind::kSendRecv);
  EXPECT_DOUBLE_EQ(c[0].bytes, 524288);
  EXPECT_EQ(c[0].count, 1);  // cp - 1 steps
  EXPECT_EQ(c[1].phase, Phase::kInputGrad);
  EXPECT_DOUBLE_EQ(c[1].bytes, 2 * 524288);  // dK, dV travel with K, V
}

TEST(CpCommType, AllGatherGathersKvForwardAndBackwardAndReduceScattersTheirGradients) {
  const std::vector<CommOp> c = cp_comms(CpCommType::kAllGather);
  ASSERT_EQ(c.size(), 3U);
  // The gathered buffer is both ranks' K and V: 2 x 524,288 B, half of it received.
  EXPECT_EQ(c[0].collective, CollectiveKind::kAllGather);
  EXPECT_EQ(c[0].phase, Phase::kForward);
  EXPECT_TRUE(c[0].before_op);
  EXPECT_DOUBLE_EQ(c[0].bytes, 1048576);
  EXPECT_DOUBLE_EQ(c[0].wire_bytes, 524288);
  EXPECT_EQ(c[1].collective, CollectiveKind::kAllGather);
  EXPECT_EQ(c[1].phase, Phase::kInputGrad);
  EXPECT_DOUBLE_EQ(c[1].bytes, 1048576);
  EXPECT_EQ(c[2].collective, CollectiveKind::kReduceScatter);
  EXPECT_FALSE(c[2].before_op);
  EXPECT_DOUBLE_EQ(c[2].bytes, 1048576);
}

TEST(CpCommType, UlyssesAllToAllsQkvInAndTheOutputBack) {
  // Q, K, V: 2 B x 512 x (8 x 64 + 4 x 128) = 1,048,576 B; O: 2 B x 512 x 8 x 64 = 524,288 B;
  // each all-to-all sends (c-1)/c of its buffer.
  const std::vector<CommOp> c = cp_comms(CpCommType::kA2a);
  ASSERT_EQ(c.size(), 4U);
  for (const CommOp& op : c) EXPECT_EQ(op.collective, CollectiveKind::kAllToAll);
  EXPECT_EQ(c[0].phase, Phase::kForward);
  EXPECT_TRUE(c[0].before_op);
  EXPECT_DOUBLE_EQ(c[0].bytes, 1048576);
  EXPECT_DOUBLE_EQ(c[0].wire_bytes, 524288);
  EXPECT_FALSE(c[1].before_op);
  EXPECT_DOUBLE_EQ(c[1].bytes, 524288);
  EXPECT_EQ(c[2].phase, Phase::kInputGrad);
  EXPECT_TRUE(c[2].before_op);
  EXPECT_DOUBLE_EQ(c[2].bytes, 524288);  // dO in
  EXPECT_DOUBLE_EQ(c[3].bytes, 1048576);  // dQ, dK, dV out
}

}  // namespace
}  // namespace mofasim::model
