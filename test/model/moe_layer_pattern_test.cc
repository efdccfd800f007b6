// MoE layers interleaved with dense ones (MoeSpec::layer_period / layer_mask, the scenario's
// moe.layer_pattern): which layers are MoE, the FLOPs they add up to, and the op tables the memory
// model takes for each layer type.
#include <gtest/gtest.h>

#include "model/flops.h"
#include "model/memory.h"
#include "model/op_table.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

// DeepSeek-V3's shapes with Llama 4 Maverick's alternation: a dense layer, then a MoE one.
ModelSpec alternating() {
  ModelSpec m = testing::deepseek_v3();
  m.moe.first_k_dense_layers = 0;
  m.moe.layer_period = 2;
  m.moe.layer_mask = 0b10;
  return m;
}

TEST(MoeLayerPattern, WhichLayersAreMoe) {
  ModelSpec m = alternating();  // 61 layers: 0, 2, ..., 60 dense; 1, 3, ..., 59 MoE
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_FALSE(m.is_moe_layer(60));
  EXPECT_EQ(m.num_moe_layers(), 30);
  EXPECT_EQ(m.first_layer_of_type(false), 0);
  EXPECT_EQ(m.first_layer_of_type(true), 1);
  // Megatron's integer --moe-layer-freq 4: layers 0, 4, 8, ... are MoE; with 3 dense layers first,
  // the first MoE layer is 4.
  m.moe.layer_period = 4;
  m.moe.layer_mask = 0b0001;
  m.moe.first_k_dense_layers = 3;
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(4));
  EXPECT_FALSE(m.is_moe_layer(5));
  EXPECT_EQ(m.num_moe_layers(), 15);  // 4, 8, ..., 60
  EXPECT_EQ(m.first_layer_of_type(true), 4);
  // The default (no pattern) keeps the dense layers first.
  const ModelSpec v3 = testing::deepseek_v3();
  EXPECT_EQ(v3.num_moe_layers(), 58);
  EXPECT_EQ(v3.first_layer_of_type(false), 0);
  EXPECT_EQ(v3.first_layer_of_type(true), 3);
}

TEST(MoeLayerPattern, FlopsCountEachLayerType) {
  // Per token, the FFN FLOPs are 6 h (3 f_dense) per dense layer and 6 h 3 (k f_e + f_shared) per
  // MoE layer: 31 dense and 30 MoE layers here, against 3 and 58 in DeepSeek-V3.
  const ModelSpec v3 = testing::deepseek_v3();
  const double h = 7168;
  const double dense_ffn = 6 * h * 3 * 18432.0;
  const double moe_ffn = 6 * h * 3 * (8 * 2048.0 + 2048);
  EXPECT_EQ(model_flops_per_token(v3).mlp, 3 * dense_ffn + 58 * moe_ffn);
  EXPECT_EQ(model_flops_per_token(alternating()).mlp, 31 * dense_ffn + 30 * moe_ffn);
  // Attention does not depend on the FFN type.
  EXPECT_EQ(model_flops_per_token(alternating()).attention_linear, model_flops_per_token(v3).attention_linear);
}

TEST(MoeLayerPattern, MemoryTakesATableOfEachType) {
  // Megatron's integer period 2: layer 0 is MoE and layer 1 dense, the reverse of the usual order;
  // the memory model's dense and MoE tables must come from layers of those types.
  ModelSpec m = alternating();
  m.moe.layer_mask = 0b01;
  const ParallelSpec p = testing::parallel_spec({.ep = 1, .global_batch = 1});
  const MemoryOpTotals t = memory_op_totals(m, p);
  EXPECT_EQ(t.dense.activation_bytes, ops_for_layer(m, p, 1).totals().activation_bytes);
  EXPECT_EQ(t.moe.activation_bytes, ops_for_layer(m, p, 0).totals().activation_bytes);
  EXPECT_NE(t.dense.activation_bytes, t.moe.activation_bytes);
}

}  // namespace
}  // namespace mofasim::model
