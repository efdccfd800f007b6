// Sliding-window attention (model/attention_window.h): the windowed share of causal pairs by hand,
// the layer pattern of Megatron's window_attn_skip_freq, and the op table's and the FLOP closed
// form's attention work under it, and which chunks hold another mix than the model's.
#include "model/attention_window.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "model/flops.h"
#include "model/op_table.h"
#include "model/shape.h"
#include "test/model/model_presets_for_test.h"
#include "test/support/op_lookup.h"

namespace mofasim::model {
namespace {

using test::find_op;
using test::has_op;
using testing::llama2_70b;

TEST(AttentionWindow, PairsOfACausalWindowByHand) {
  // s = 4096, w = 128: 4096 x 128 - 128 x 127 / 2 = 516,160 pairs of 4096 x 4097 / 2 = 8,390,656.
  EXPECT_DOUBLE_EQ(window_pair_ratio(4096, 128), 516160.0 / 8390656.0);  // 0.0615
  // Each query attends to min(i+1, w) keys: s = 4, w = 2 is 1 + 2 + 2 + 2 = 7 of 10 pairs.
  EXPECT_DOUBLE_EQ(window_pair_ratio(4, 2), 7.0 / 10.0);
  EXPECT_EQ(window_pair_ratio(4096, 4096), 1.0);  // a window as long as the sequence is full attention
  EXPECT_EQ(window_pair_ratio(4096, 0), 1.0);
}

TEST(AttentionWindow, SkipFrequencyKeepsEveryNthLayerFull) {
  ModelSpec m = llama2_70b();  // 80 layers, s = 4096
  EXPECT_FALSE(is_window_layer(m, 0));
  EXPECT_EQ(attention_window_share(m), 1.0);
  m.window_size = 128;
  m.window_attn_skip_freq = 2;  // gpt-oss: sliding, full, sliding, ...
  EXPECT_TRUE(is_window_layer(m, 0));
  EXPECT_FALSE(is_window_layer(m, 1));
  EXPECT_TRUE(is_window_layer(m, 78));
  EXPECT_FALSE(is_window_layer(m, 79));
  // 40 windowed and 40 full layers: the mean of 0.0615 and 1.
  EXPECT_DOUBLE_EQ(attention_window_share(m), (40 * (516160.0 / 8390656.0) + 40) / 80);
  m.window_attn_skip_freq = 0;  // every layer windowed
  EXPECT_NEAR(attention_window_share(m), 516160.0 / 8390656.0, 1e-15);  // a mean of 80 equal terms
}

TEST(AttentionWindow, OpTableAndModelFlopsScaleTheAttentionCore) {
  ModelSpec full = llama2_70b();
  ModelSpec windowed = full;
  windowed.window_size = 128;
  windowed.window_attn_skip_freq = 2;
  const double share = attention_window_share(windowed);
  const ParallelSpec p = testing::parallel_spec({.tp = 8, .global_batch = 1, .sequence_parallel = true});
  const LayerOps a = ops_for_layer(full, p, 0);
  const LayerOps b = ops_for_layer(windowed, p, 0);
  for (const OpKind k : {OpKind::kAttentionMap, OpKind::kAttentionValue}) {
    ASSERT_TRUE(has_op(a, k));
    ASSERT_TRUE(has_op(b, k));
    const OpCost& x = find_op(a, k);
    const OpCost& y = find_op(b, k);
    // Causal QK^T over 4096 keys, 8 heads of 128 per GPU: 4096 x 4096 x 128 x 8 forward, x share.
    EXPECT_DOUBLE_EQ(x.forward.flops, 4096.0 * 4096 * 128 * 8);
    EXPECT_DOUBLE_EQ(y.forward.flops, x.forward.flops * share);
    EXPECT_DOUBLE_EQ(y.backward_input.flops, x.backward_input.flops * share);
    EXPECT_EQ(y.activation_bytes, x.activation_bytes);  // memory does not depend on the window
  }
  // The closed form: 6 a d s per token per layer of attention core, x share.
  EXPECT_DOUBLE_EQ(model_flops_per_token(windowed).attention_core,
                   model_flops_per_token(full).attention_core * share);
  EXPECT_EQ(model_flops_per_token(windowed).mlp, model_flops_per_token(full).mlp);
}

TEST(AttentionWindow, WhichChunksHoldAnotherMix) {
  ModelSpec m = llama2_70b();
  m.window_size = 128;
  m.window_attn_skip_freq = 2;  // layers 0, 2, 4, ... windowed; 40 of 80
  EXPECT_FALSE(window_mix_differs(m, testing::parallel_spec({.pp = 4, .global_batch = 4})));  // 20 a chunk
  ParallelSpec odd = testing::parallel_spec({.pp = 2, .global_batch = 2});
  odd.stage_layers = {41, 39};
  EXPECT_EQ(windowed_layers(m, 0, 41), 21);   // 0, 2, ..., 40
  EXPECT_EQ(windowed_layers(m, 41, 39), 19);  // 42, ..., 78
  EXPECT_TRUE(window_mix_differs(m, odd));
  // Every layer windowed (no skip frequency), or a window as long as the sequence: one mix.
  m.window_attn_skip_freq = 0;
  EXPECT_FALSE(window_mix_differs(m, odd));
  m.window_attn_skip_freq = 2;
  m.window_size = m.seq_length;
  EXPECT_FALSE(window_mix_differs(m, odd));
}

}  // namespace
}  // namespace mofasim::model
