// TopologySpec: the sealed, validated description of a cluster's GPUs and network, in SI units
// (bytes/s, seconds). sim/scenario/ fills it from the Scenario; tests build it with designated
// initializers. validate() is the single place that decides what a legal cluster is.
#pragma once

#include <cstdint>
#include <optional>

namespace mofasim::topology {

// One level of the network. bandwidth is the effective bus bandwidth one GPU gets in one
// direction at this level (what nccl-tests reports as busBW), before the decay γ, the scale μ_b
// and oversubscription are applied.
struct LinkSpec {
  double bandwidth = 0;  // bytes/s per GPU per direction
  double latency = 0;    // seconds per algorithm step that crosses this level (α)
};

// How collectives are priced beyond bytes / bus bandwidth (topology/nccl_protocols.h).
enum class CollectiveModel : std::uint8_t {
  kAlphaBeta,  // latency = algorithm steps x the link class's latency; bandwidth = bytes / bus bandwidth
  kNccl,       // NCCL's own tuning model: per-protocol (LL, LL128, Simple) base and per-hop latencies and
               // bandwidth fractions, the cheapest protocol per message size (the bandwidth ramp); NVLS
};

struct CollectiveTuning {
  // α–β by default: kNccl made the held-out vTrain A100 figures worse (multi-node 8.74 -> 8.79 %
  // simulated, 9.96 -> 10.03 % analytic; single-node 7.48 -> 7.56 %, 7.46 -> 7.55 %), see
  // docs/validation-measured.md "Collective model vs nccl-tests".
  CollectiveModel model = CollectiveModel::kAlphaBeta;
  // NCCL's cap on the LL protocol's bus bandwidth (llMaxBw, one node): Ampere 87.7 GB/s, Hopper 141,
  // Blackwell 282 (nccl_model.csv rows "llMaxBw (1 node)", NVIDIA/nccl@5067397 src/graph/tuning.cc).
  double ll_max_bandwidth = 87.7e9;
  // NVLink SHARP (NVLS): single-node all-reduce groups of >= 5 GPUs may reduce in the switch.
  bool nvlink_sharp = false;
  double nvls_efficiency = 0.85;  // nvlsEfficiency: Hopper 0.85, Blackwell 0.74 (nccl_model.csv)
  int nvls_channels = 16;         // NVLS_NCHANNELS: SM90 16, SM100 single NVLink domain 24 (nccl_model.csv)
};

struct TopologySpec {
  int gpus = 0;
  int gpus_per_node = 8;
  int nodes_per_supernode = 0;  // 0 = one supernode holds the whole cluster
  LinkSpec intra_node{};        // NVLink-class; needed when gpus_per_node > 1
  LinkSpec inter_node{};        // scale-out inside a supernode; needed when there are > 1 nodes
  std::optional<LinkSpec> inter_supernode{};// unset = same as inter_node
  std::optional<int> nics_per_node{};       // unset = gpus_per_node (rail-optimised)
  double oversubscription = 1.0;  // >= 1; divides the inter-supernode bandwidth
  double bandwidth_decay = 1.0;   // γ ∈ (0,1], MoFa(3); scales both scale-out levels
  double bandwidth_scale = 1.0;   // μ_b > 0, MoFa(18); scales every level
  CollectiveTuning collectives{};  // latency / protocol model of every collective

  // Throws std::invalid_argument naming the first bad field and its allowed range.
  void validate() const;

  [[nodiscard]] int nodes() const { return gpus_per_node > 0 ? gpus / gpus_per_node : 0; }
  [[nodiscard]] int nics() const { return nics_per_node.value_or(gpus_per_node); }
  [[nodiscard]] const LinkSpec& supernode_link() const { return inter_supernode ? *inter_supernode : inter_node; }
};

}  // namespace mofasim::topology
