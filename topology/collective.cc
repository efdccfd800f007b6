// Names, nccl-tests factors and the (kind, algorithm) support table.
#include "topology/collective.h"

#include <stdexcept>
#include <string>

namespace mofasim::topology {

std::string_view collective_kind_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce: return "all-reduce";
    case CollectiveKind::kReduceScatter: return "reduce-scatter";
    case CollectiveKind::kAllGather: return "all-gather";
    case CollectiveKind::kAllToAll: return "all-to-all";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kSendRecv: return "send-recv";
    case CollectiveKind::kRingStep: return "ring-step";
    case CollectiveKind::kAllToAllScaleOut: return "all-to-all-scale-out";
    case CollectiveKind::kAllToAllScaleUp: return "all-to-all-scale-up";
  }
  return "?";
}

std::string_view collective_algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::kRing: return "ring";
    case CollectiveAlgorithm::kTree: return "tree";
    case CollectiveAlgorithm::kHierarchical: return "hierarchical";
    case CollectiveAlgorithm::kPairwise: return "pairwise";
    case CollectiveAlgorithm::kDirect: return "direct";
  }
  return "?";
}

std::string_view protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kAlphaBeta: return "alpha-beta";
    case Protocol::kLL: return "LL";
    case Protocol::kLL128: return "LL128";
    case Protocol::kSimple: return "Simple";
    case Protocol::kNvls: return "NVLS";
  }
  return "?";
}

int ProtocolOptions::cheapest(double bandwidth_seconds) const {
  int best = -1;
  double best_t = 0;
  for (int i = 0; i < count; ++i) {
    const ProtocolOption& o = items[static_cast<std::size_t>(i)];
    const double t = o.latency_seconds + o.byte_factor * bandwidth_seconds;
    if (best < 0 || t < best_t) {
      best = i;
      best_t = t;
    }
  }
  return best;
}

double bus_bandwidth_factor(CollectiveKind kind, int n) {
  const double p = n;
  switch (kind) {
    case CollectiveKind::kAllReduce: return 2 * (p - 1) / p;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllScaleOut:
    case CollectiveKind::kAllToAllScaleUp: return (p - 1) / p;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kSendRecv:
    case CollectiveKind::kRingStep: return 1;
  }
  return 1;
}

CollectiveAlgorithm default_algorithm(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllScaleOut:
    case CollectiveKind::kAllToAllScaleUp: return CollectiveAlgorithm::kPairwise;
    case CollectiveKind::kSendRecv: return CollectiveAlgorithm::kDirect;
    default: return CollectiveAlgorithm::kRing;
  }
}

void check_supported(CollectiveKind kind, CollectiveAlgorithm algorithm) {
  using A = CollectiveAlgorithm;
  const char* allowed = "";
  bool ok = false;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      ok = algorithm == A::kRing || algorithm == A::kTree || algorithm == A::kHierarchical;
      allowed = "ring, tree, hierarchical";
      break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kRingStep:
      ok = algorithm == A::kRing;
      allowed = "ring";
      break;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllScaleOut:
    case CollectiveKind::kAllToAllScaleUp:
      ok = algorithm == A::kPairwise;
      allowed = "pairwise";
      break;
    case CollectiveKind::kSendRecv:
      ok = algorithm == A::kDirect;
      allowed = "direct";
      break;
  }
  if (!ok) {
    throw std::invalid_argument("collective algorithm " + std::string(collective_algorithm_name(algorithm)) +
                                " is not defined for " + std::string(collective_kind_name(kind)) +
                                " (allowed: " + allowed + ")");
  }
}

}  // namespace mofasim::topology
