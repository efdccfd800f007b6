// NCCL protocol options (see nccl_protocols.h). Every constant below is a row of NCCL's
// ncclTunerConstantsDefaults / nvlsEfficiency in NVIDIA/nccl@5067397 src/graph/tuning.cc, as
// transcribed in ../shared/data/kernels/nccl_model.csv (quantity, hw, algorithm, protocol), except
// the protocol bandwidth fractions, which are the busBw lines of the same file's ring / tree model
// (NCCL_PROTO_LL busBw·0.5 capped at llMaxBw, LL128 busBw·0.92, tree Simple busBw·0.92, tree LL
// busBw/3.8, tree LL128 7/9 on one node else 120/128).
#include "topology/nccl_protocols.h"

#include <algorithm>
#include <bit>

namespace mofasim::topology {
namespace {

constexpr double kUs = 1e-6;

// Index by protocol: LL, LL128, Simple.
struct PerProtocol {
  double ll, ll128, simple;
};
// baseLatency (µs): nccl_model.csv rows "baseLatency,any,Ring|Tree,<proto>".
constexpr PerProtocol kRingBase{6.6, 14.0, 8.4};
constexpr PerProtocol kTreeBase{6.8, 14.0, 8.4};
// hwLatency per step (µs): rows "hwLatency (per step),NVLINK|NET,Ring|Tree,<proto>".
constexpr PerProtocol kRingNvlink{0.6, 1.9, 3.4};
constexpr PerProtocol kRingNet{2.7, 4.0, 14.0};
constexpr PerProtocol kTreeNvlink{0.6, 1.25, 4.0};
constexpr PerProtocol kTreeNet{5.0, 8.5, 14.0};
// row "hwLatency (per step),NVLINK,NVLS,Simple,25".
constexpr double kNvlsNvlinkLatency = 25 * kUs;
// NVLS is used only from 5 GPUs on (collectives.csv, H200 8 GiB sweep: Ring at 4 GPUs, NVLS 5-8).
constexpr int kNvlsMinGpus = 5;

double pick(const PerProtocol& v, Protocol p) {
  return p == Protocol::kLL ? v.ll : p == Protocol::kLL128 ? v.ll128 : v.simple;
}

int ring_steps(CollectiveKind kind, int p) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return 2 * (p - 1);
    case CollectiveKind::kRingStep: return 1;
    default: return p - 1;
  }
}

int ring_inter_steps(CollectiveKind kind, int nodes) {
  if (nodes <= 1) return 0;
  switch (kind) {
    case CollectiveKind::kAllReduce: return 2 * (nodes - 1);
    case CollectiveKind::kRingStep: return 1;
    default: return nodes - 1;
  }
}

}  // namespace

ProtocolOptions ring_protocols(const CollectiveTuning& tuning, CollectiveKind kind, const GroupShape& shape,
                               double bus_seconds_per_byte) {
  ProtocolOptions out;
  if (tuning.model != CollectiveModel::kNccl || shape.size < 2) return out;
  const int steps = ring_steps(kind, shape.size);
  const int inter = std::min(steps, ring_inter_steps(kind, shape.nodes));
  const double bus = bus_seconds_per_byte > 0 ? 1.0 / bus_seconds_per_byte : 0;
  for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
    const double latency =
        (pick(kRingBase, p) + (steps - inter) * pick(kRingNvlink, p) + inter * pick(kRingNet, p)) * kUs;
    double factor = 1;
    if (p == Protocol::kLL) factor = std::max(2.0, bus / tuning.ll_max_bandwidth);
    if (p == Protocol::kLL128) factor = 1 / 0.92;
    out.add({.protocol = p, .latency_seconds = latency, .byte_factor = factor});
  }
  if (tuning.nvlink_sharp && kind == CollectiveKind::kAllReduce && shape.nodes == 1 && shape.size >= kNvlsMinGpus) {
    const double ch = tuning.nvls_channels;
    const double ring_volume = 2.0 * (shape.size - 1) / shape.size;
    out.add({.protocol = Protocol::kNvls, .latency_seconds = kNvlsNvlinkLatency,
             .byte_factor = 1 / (tuning.nvls_efficiency * (ch - 1) / ch * ring_volume)});
  }
  return out;
}

ProtocolOptions tree_protocols(const CollectiveTuning& tuning, const GroupShape& shape, double bus_seconds_per_byte) {
  ProtocolOptions out;
  if (tuning.model != CollectiveModel::kNccl || shape.size < 2) return out;
  const int local = std::max(1, shape.size / std::max(1, shape.nodes));
  const int levels = std::bit_width(static_cast<unsigned>(std::max(1, shape.nodes) - 1));  // ⌈log2 N⌉
  const double bus = bus_seconds_per_byte > 0 ? 1.0 / bus_seconds_per_byte : 0;
  for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
    const double latency =
        (pick(kTreeBase, p) + 2 * ((local - 1) * pick(kTreeNvlink, p) + levels * pick(kTreeNet, p))) * kUs;
    double factor = 1 / 0.92;
    if (p == Protocol::kLL) factor = std::max(3.8, bus / tuning.ll_max_bandwidth);
    if (p == Protocol::kLL128) factor = shape.nodes == 1 ? 9.0 / 7.0 : 128.0 / 120.0;
    out.add({.protocol = p, .latency_seconds = latency, .byte_factor = factor});
  }
  return out;
}

CollectiveCost with_protocol(const ProtocolOptions& options, CollectiveCost alpha_beta) {
  const int i = options.cheapest(alpha_beta.bandwidth_seconds);
  if (i < 0) return alpha_beta;
  const ProtocolOption& o = options.items[static_cast<std::size_t>(i)];
  return {.latency_seconds = o.latency_seconds, .bandwidth_seconds = o.byte_factor * alpha_beta.bandwidth_seconds,
          .protocol = o.protocol};
}

}  // namespace mofasim::topology
