// Model and hardware specs the model/ tests share, written out field by field (the YAML presets
// under scenarios/ are loaded elsewhere). Shapes are the public configurations restated in
// reference-formulas.md §5.1 (DeepSeek-V3) and §6 (LLaMA).
#pragma once

#include <utility>
#include <vector>

#include "model/spec.h"
#include "topology/topology_spec.h"

namespace mofasim::model::testing {

// LLaMA2-70B: 80 layers, h 8192, 64 heads, 8 KV heads, SwiGLU f 28672, V 32000, s 4096.
inline ModelSpec llama2_70b() {
  return ModelSpec{.name = "llama2-70b",
                   .num_layers = 80,
                   .hidden_size = 8192,
                   .num_attention_heads = 64,
                   .num_kv_heads = 8,
                   .head_dim = 128,
                   .ffn_hidden_size = 28672,
                   .vocab_size = 32000,
                   .seq_length = 4096,
                   .attention = AttentionKind::kGqa,
                   .mla = {},
                   .mlp = MlpKind::kSwiglu,
                   .norm = NormKind::kRmsNorm,
                   .position = PositionKind::kRope,
                   .untie_embeddings = true,
                   .linear_bias = false,
                   .moe = {}};
}

// LLaMA3-405B: 126 layers, h 16384, 128 heads, 8 KV heads, f 53248, V 128256, s 8192.
inline ModelSpec llama3_405b() {
  ModelSpec m = llama2_70b();
  m.name = "llama3-405b";
  m.num_layers = 126;
  m.hidden_size = 16384;
  m.num_attention_heads = 128;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.ffn_hidden_size = 53248;
  m.vocab_size = 128256;
  m.seq_length = 8192;
  return m;
}

// InternLM-7B (InternEvo's 7B_sft config): 32 layers, h 4096, 32 heads (MHA), f 11008, V 103168,
// s 2048; 7,321,423,872 parameters with the untied head.
inline ModelSpec internlm_7b() {
  ModelSpec m = llama2_70b();
  m.name = "internlm-7b";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_kv_heads = 32;
  m.head_dim = 128;
  m.ffn_hidden_size = 11008;
  m.vocab_size = 103168;
  m.seq_length = 2048;
  m.attention = AttentionKind::kMha;
  return m;
}

// DeepSeek-V3 (without MTP unless a test sets mtp_depth): 61 layers (3 dense), h 7168, MLA with
// q/kv LoRA ranks 1536/512, 256 routed experts top-8 with f_e 2048, one shared expert, s 4096.
inline ModelSpec deepseek_v3() {
  return ModelSpec{.name = "deepseek-v3",
                   .num_layers = 61,
                   .hidden_size = 7168,
                   .num_attention_heads = 128,
                   .num_kv_heads = 128,
                   .head_dim = 0,
                   .ffn_hidden_size = 18432,
                   .vocab_size = 129280,
                   .seq_length = 4096,
                   .attention = AttentionKind::kMla,
                   .mla = MlaSpec{.q_lora_rank = 1536,
                                  .kv_lora_rank = 512,
                                  .qk_nope_head_dim = 128,
                                  .qk_rope_head_dim = 64,
                                  .v_head_dim = 128},
                   .mlp = MlpKind::kSwiglu,
                   .norm = NormKind::kRmsNorm,
                   .position = PositionKind::kRope,
                   .untie_embeddings = true,
                   .linear_bias = false,
                   .moe = MoeSpec{.num_experts = 256,
                                  .top_k = 8,
                                  .expert_ffn_hidden_size = 2048,
                                  .num_shared_experts = 1,
                                  .shared_expert_ffn_hidden_size = 2048,
                                  .first_k_dense_layers = 3,
                                  .load_imbalance = 1.0,
                                  .dispatch_bytes_per_element = 1,
                                  .combine_bytes_per_element = 2},
                   .mtp_depth = 0};
}

// A tiny GPT block with every optional feature on: GeLU MLP, biases, LayerNorm, learned positions,
// tied embeddings. h 4, 2 heads (d_h 2), f 16, V 10, s 8, 2 layers.
inline ModelSpec tiny_gpt() {
  return ModelSpec{.name = "tiny-gpt",
                   .num_layers = 2,
                   .hidden_size = 4,
                   .num_attention_heads = 2,
                   .num_kv_heads = 2,
                   .head_dim = 0,
                   .ffn_hidden_size = 16,
                   .vocab_size = 10,
                   .seq_length = 8,
                   .attention = AttentionKind::kMha,
                   .mla = {},
                   .mlp = MlpKind::kGelu,
                   .norm = NormKind::kLayerNorm,
                   .position = PositionKind::kLearned,
                   .untie_embeddings = false,
                   .linear_bias = true,
                   .moe = {}};
}

// ParallelSpec without its stage_layers vector: every member has a default, so tests can name
// only the sizes they care about (g++ 12 warns when a designated initializer skips a member that
// has no default member initializer, as ParallelSpec::stage_layers).
struct Layout {
  int tp = 1;
  int cp = 1;
  int pp = 1;
  int vpp = 1;
  int dp = 1;
  int ep = 1;
  int etp = 1;
  int micro_batch = 1;
  int global_batch = 1;
  bool sequence_parallel = false;
};

inline ParallelSpec parallel_spec(const Layout& l, std::vector<int> stage_layers = {}) {
  ParallelSpec p;
  p.tp = l.tp;
  p.cp = l.cp;
  p.pp = l.pp;
  p.vpp = l.vpp;
  p.dp = l.dp;
  p.ep = l.ep;
  p.etp = l.etp;
  p.micro_batch = l.micro_batch;
  p.global_batch = l.global_batch;
  p.sequence_parallel = l.sequence_parallel;
  p.stage_layers = std::move(stage_layers);
  return p;
}

// 64 GPUs on 8 nodes of 8: NVLink 100 GB/s and 10 us, one NIC per GPU at 10 GB/s and 20 us (the DP
// tests: HSDP, ZeRO broadcast sync).
inline topology::TopologySpec eight_nodes_of_eight() {
  return {.gpus = 64, .gpus_per_node = 8, .intra_node = {.bandwidth = 100e9, .latency = 10e-6},
          .inter_node = {.bandwidth = 10e9, .latency = 20e-6}};
}

// An H100-like device with round numbers so that expected times are easy to derive by hand.
inline HardwareSpec round_gpu() {
  HardwareSpec hw;
  hw.name = "round-gpu";
  hw.peak_flops_bf16 = 1000e12;
  hw.peak_flops_fp8 = 2000e12;
  hw.gpu_memory_bytes = 80e9;
  hw.hbm_bandwidth = 4e12;
  hw.efficiency = EfficiencySpec{.gemm = 0.75, .attention = 0.5, .memory = 0.8, .small_gemm = 0.4};
  return hw;
}

// DeepSeek-V3 with the given token dispatcher.
inline ModelSpec deepseek_v3_with(MoeDispatcher dispatcher) {
  ModelSpec m = deepseek_v3();
  m.moe.token_dispatcher = dispatcher;
  return m;
}

}  // namespace mofasim::model::testing
