// Collective vocabulary shared by every algorithm: kinds, algorithms, nccl-tests bus-bandwidth
// factors, the closed-form cost split, and CollectivePlan, the decomposition of one collective
// into bytes per physical link that a fluid engine runs.
//
// Sizes follow nccl-tests: S is the whole buffer for all-reduce and broadcast, the whole gathered
// / scattered array (per-rank count × ranks) for reduce-scatter and all-gather, the total bytes
// one rank sends (itself included) for all-to-all, and the message for send/recv and a ring step.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

#include "topology/collective_kind.h"
#include "topology/link_resource.h"

namespace mofasim::topology {

enum class CollectiveAlgorithm : std::uint8_t {
  kRing,          // all-reduce, reduce-scatter, all-gather, broadcast (pipelined ring / chain), ring step
  kTree,          // all-reduce (NCCL double binary tree)
  kHierarchical,  // all-reduce: intra-node RS -> inter-node AR per rail -> intra-node AG, serialized
  kPairwise,      // all-to-all
  kDirect,        // send/recv
};

std::string_view collective_kind_name(CollectiveKind k);
std::string_view collective_algorithm_name(CollectiveAlgorithm a);

// nccl-tests busBW = algBW × factor: AR 2(n−1)/n; RS, AG, A2A (n−1)/n; broadcast, send/recv, ring step 1.
double bus_bandwidth_factor(CollectiveKind kind, int n);

// The algorithm used when none is asked for (ring; pairwise for all-to-all; direct for send/recv).
CollectiveAlgorithm default_algorithm(CollectiveKind kind);

// Throws std::invalid_argument when the algorithm is not defined for the kind, listing the allowed.
void check_supported(CollectiveKind kind, CollectiveAlgorithm algorithm);

// The protocol a collective runs with (CollectiveModel::kNccl); kAlphaBeta under the α–β model.
enum class Protocol : std::uint8_t { kAlphaBeta, kLL, kLL128, kSimple, kNvls };
std::string_view protocol_name(Protocol p);

// One way to run a collective: its whole latency, and the factor on the α–β bandwidth term (the
// bytes every link carries are multiplied by it: LL moves a flag with every word, NVLS reduces in
// the switch and moves fewer bytes per GPU). The cheapest option for the message size is taken.
struct ProtocolOption {
  Protocol protocol = Protocol::kAlphaBeta;
  double latency_seconds = 0;
  double byte_factor = 1;
};
struct ProtocolOptions {
  std::array<ProtocolOption, 4> items{};
  int count = 0;  // 0: the α–β model (latency and bytes as the plan states them)
  void add(ProtocolOption o) { items[static_cast<std::size_t>(count++)] = o; }
  // Index of the cheapest option for a message whose α–β bandwidth term is bandwidth_seconds
  // (the first on ties); -1 when there is none.
  [[nodiscard]] int cheapest(double bandwidth_seconds) const;
};

// Closed-form cost of one collective running alone: latency (steps × α, or the chosen protocol's
// latency) + bandwidth term.
struct CollectiveCost {
  double latency_seconds = 0;
  double bandwidth_seconds = 0;
  Protocol protocol = Protocol::kAlphaBeta;
  [[nodiscard]] double seconds() const { return latency_seconds + bandwidth_seconds; }
};

// Bytes that cross one link per byte of S (plans are linear in S: multiply by S to get bytes).
struct LinkShare {
  LinkId link{};
  double bytes_per_byte = 0;
};

// One phase: all its transfers run concurrently; the phase ends when every link has carried its
// bytes, plus latency_seconds. Phases run one after the other.
struct CommPhase {
  double latency_seconds = 0;
  std::vector<LinkShare> shares{};  // one entry per link, ascending link id
};

// The pipeline fill of a chained broadcast: its first chunk crosses every hop before the last
// member has it, so the collective also takes seconds_per_byte · min(S, cap_bytes) (one chunk per
// channel, or the whole message when it is smaller). 0 for every other collective.
struct PipelineFill {
  double cap_bytes = 0;
  double seconds_per_byte = 0;
  [[nodiscard]] double seconds(double bytes) const { return seconds_per_byte * std::min(bytes, cap_bytes); }
};

// A collective as link loads. Alone, at full link capacity, its time is
//   Σ_phases [ latency + max_link (S · bytes_per_byte / capacity) ] + fill.seconds(S),
// which equals the closed form (CommGroup::cost). Build once per group and reuse.
// Under CollectiveModel::kNccl a single-phase plan also carries its protocol options: the runner
// takes options.cheapest(S · seconds_per_byte), replaces the phase latency with that option's and
// multiplies S by its byte_factor (exactly what CommGroup::cost charges).
struct CollectivePlan {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::vector<CommPhase> phases{};  // empty for a group of one
  ProtocolOptions protocols{};      // count 0: run the phases as stated
  double seconds_per_byte = 0;      // α–β bandwidth term per byte of S, alone on the network
  PipelineFill fill{};              // broadcast: added to the (single) phase's latency
};

}  // namespace mofasim::topology
