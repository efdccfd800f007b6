// DeepEP's buffer sizes and chunked hop pipeline (see moe_deepep.h).
#include "model/moe_deepep.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace mofasim::model {
namespace {

constexpr int kNumMaxNvlPeers = 8;   // NUM_MAX_NVL_PEERS (csrc/kernels/configs.cuh)
constexpr std::int64_t kMaxTopK = 128;  // kNumMaxTopK in the size hints
constexpr std::int64_t kMaxScales = 128;  // kNumMaxScales
constexpr std::int64_t kSourceMeta = 8;   // internode::get_source_meta_bytes(): two ints
constexpr std::int64_t kTopkIdx = 8;      // topk_idx_t, int64
constexpr std::int64_t kInt4 = 16;

struct Row {
  int ranks;
  DeepEpConfig dispatch;
  DeepEpConfig combine;
};

// deep_ep/buffer.py, get_dispatch_config and get_combine_config: (nvl send, nvl recv, rdma send,
// rdma recv) chunk tokens.
constexpr std::array<Row, 12> kConfigs{{
    {2, {20, 24, 256, 6, 128}, {20, 10, 256, 6, 128}},
    {4, {20, 6, 256, 6, 128}, {20, 9, 256, 6, 128}},
    {8, {20, 6, 256, 6, 128}, {20, 4, 256, 6, 128}},
    {16, {20, 36, 288, 20, 128}, {20, 4, 288, 12, 128}},
    {24, {20, 32, 288, 8, 128}, {20, 1, 288, 8, 128}},
    {32, {20, 32, 288, 8, 128}, {20, 1, 288, 8, 128}},
    {48, {20, 32, 288, 8, 128}, {20, 1, 288, 8, 128}},
    {64, {20, 32, 288, 8, 128}, {20, 1, 288, 8, 128}},
    {96, {20, 20, 480, 12, 128}, {20, 1, 480, 8, 128}},
    {128, {20, 20, 560, 12, 128}, {20, 1, 560, 8, 128}},
    {144, {20, 32, 720, 12, 128}, {20, 2, 720, 8, 128}},
    {160, {20, 28, 720, 12, 128}, {20, 2, 720, 8, 128}},
}};

const Row& row(int ranks) {
  for (const Row& r : kConfigs) {
    if (r.ranks >= ranks) return r;
  }
  return kConfigs.back();
}

std::int64_t align128(std::int64_t v) { return (v + 127) / 128 * 128; }

// Per token slot: the hidden vector, source metadata, top-k indices and weights, FP8 scales.
std::int64_t slot_bytes(std::int64_t hidden_bytes) {
  return hidden_bytes + kSourceMeta + kMaxTopK * kTopkIdx + kMaxTopK * 4 + kMaxScales * 4;
}

// Config::get_nvl_buffer_size_hint.
std::int64_t nvl_hint(const DeepEpConfig& c, std::int64_t hidden_bytes, int ranks) {
  const std::int64_t rdma_ranks = std::max(ranks / kNumMaxNvlPeers, 1);
  const std::int64_t nvl_ranks = std::min(ranks, kNumMaxNvlPeers);
  const std::int64_t channels = c.num_sms / 2;
  const std::int64_t slots = channels * nvl_ranks * c.nvl_chunked_recv_tokens;
  return align128(channels * nvl_ranks * (2 * rdma_ranks + 3) * 4 + slots * slot_bytes(hidden_bytes));
}

// Config::get_rdma_buffer_size_hint: 0 within 8 ranks; send and receive halves (the factor 2).
std::int64_t rdma_hint(const DeepEpConfig& c, std::int64_t hidden_bytes, int ranks) {
  if (ranks <= kNumMaxNvlPeers) return 0;
  const std::int64_t rdma_ranks = ranks / kNumMaxNvlPeers;
  const std::int64_t channels = c.num_sms / 2;
  const std::int64_t send = c.rdma_chunked_send_tokens;
  const std::int64_t recv = (c.rdma_chunked_recv_tokens + send - 1) / send * send;
  const std::int64_t slots = channels * rdma_ranks * recv;
  return align128(channels * rdma_ranks * (kNumMaxNvlPeers * 2 + 2) * 2 * 4 +
                  2 * slots * (slot_bytes(hidden_bytes) + kInt4));
}

}  // namespace

DeepEpConfig deepep_dispatch_config(int ranks) { return row(ranks).dispatch; }
DeepEpConfig deepep_combine_config(int ranks) { return row(ranks).combine; }

DeepEpBuffers deepep_buffers(int hidden, int ranks) {
  if (ranks < 2) return {};
  const std::int64_t hidden_bytes = std::int64_t{hidden} * 2;  // get_hidden_bytes: max(element size, 2)
  const Row& r = row(ranks);
  return {.nvl_bytes = static_cast<double>(
              std::max(nvl_hint(r.dispatch, hidden_bytes, ranks), nvl_hint(r.combine, hidden_bytes, ranks))),
          .rdma_bytes = static_cast<double>(
              std::max(rdma_hint(r.dispatch, hidden_bytes, ranks), rdma_hint(r.combine, hidden_bytes, ranks)))};
}

double deepep_pipeline_chunks(double tokens, int ranks, bool toward_experts) {
  const DeepEpConfig c = toward_experts ? deepep_dispatch_config(ranks) : deepep_combine_config(ranks);
  const double per_chunk = static_cast<double>(c.num_sms / 2) * c.rdma_chunked_send_tokens;
  return std::max(1.0, tokens / per_chunk);
}

}  // namespace mofasim::model
