// DeepEP (token_dispatcher_type flex): what its normal (high-throughput) kernels hold and how its two
// hops overlap, from DeepEP's own sizing rules (deep_ep/buffer.py, csrc/config.hpp) as Megatron-Core
// calls them (megatron/core/transformer/moe/fused_a2a.py, get_buffer).
//
// Buffers. One deep_ep.Buffer per rank for the dispatcher's group of R = ep·etp ranks (Megatron's
// tp_ep group), sized once with the larger of the dispatch and combine configs' hints:
//   NVLink (num_nvl_bytes): C·n·(2·r + 3)·4 + C·n·N·(H + 8 + 128·8 + 128·4 + 128·4), 128-aligned,
//   RDMA (num_rdma_bytes, only when R > 8): C·r·18·2·4 + 2·C·r·N'·(H + 8 + 128·8 + 128·4 + 128·4 + 16),
// with C = num_sms/2 channels (num_sms = 20, DeepEP's Buffer.num_sms and Megatron's
// --moe-deepep-num-sms default), n = min(R, 8) NVLink peers, r = max(R/8, 1) RDMA ranks (DeepEP
// counts 8 NVLink peers per node whatever the node), H = hidden·max(element bytes, 2) = 2·hidden
// (get_hidden_bytes), 8 B of source metadata, 128 top-k indices (int64) and weights (fp32) and 128
// fp32 scales per token slot, N = num_max_nvl_chunked_recv_tokens, N' = num_max_rdma_chunked_recv_tokens
// rounded up to a multiple of num_max_rdma_chunked_send_tokens (Config's constructor).
//
// Hop overlap. In the internode kernels each channel's RDMA sender, NVLink forwarder and receiver
// run at once (DeepEP README, "normal kernels ... forward from NVLink to RDMA"; csrc/kernels/
// internode.cu, warp roles kRDMASender / kRDMAAndNVLForwarder / kNVLReceivers), moving the tokens in
// chunks of num_max_rdma_chunked_send_tokens per channel. Two stages of n equal chunks take
// (n − 1)·max(a, b) + a + b = max(T1, T2) + min(T1, T2)/n (a = T1/n, b = T2/n): the shorter hop is
// hidden under the longer one but for one chunk. n = T_g / (C·chunk tokens), at least 1.
#pragma once

namespace mofasim::model {

// DeepEP's recommended Config for a group of `ranks` ranks (Buffer.get_dispatch_config /
// get_combine_config). DeepEP asserts on a size it has no entry for; here such a size takes the
// next listed size up (the largest, 160, beyond it).
struct DeepEpConfig {
  int num_sms = 20;
  int nvl_chunked_send_tokens = 0;
  int nvl_chunked_recv_tokens = 0;
  int rdma_chunked_send_tokens = 0;
  int rdma_chunked_recv_tokens = 0;
};
DeepEpConfig deepep_dispatch_config(int ranks);
DeepEpConfig deepep_combine_config(int ranks);

struct DeepEpBuffers {
  double nvl_bytes = 0;
  double rdma_bytes = 0;
  [[nodiscard]] double total() const { return nvl_bytes + rdma_bytes; }
};
// The per-rank buffers Megatron allocates for a flex dispatcher over `ranks` ranks and hidden size
// `hidden` (0 for ranks < 2: no dispatcher).
DeepEpBuffers deepep_buffers(int hidden, int ranks);

// n above: the chunks the two hops of one transfer pipeline over, for `tokens` tokens per rank
// (T_g) toward the experts (dispatch config) or back from them (combine config).
double deepep_pipeline_chunks(double tokens, int ranks, bool toward_experts);

}  // namespace mofasim::model
