// CommGroup: input checks and dispatch to the per-algorithm closed forms and plans.
#include "topology/comm_group.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "topology/internal/algorithms.h"

namespace mofasim::topology {

namespace ti = topology_internal;

CommGroup::CommGroup(const Topology& topology, std::span<const int> gpus)
    : topology_(&topology), gpus_(gpus.begin(), gpus.end()), ring_(gpus.begin(), gpus.end()) {
  if (gpus_.empty()) throw std::invalid_argument("communicator: a group needs at least one GPU");
  for (int g : gpus_) {
    if (g < 0 || g >= topology.gpus()) {
      throw std::invalid_argument("communicator: GPU " + std::to_string(g) + " is outside the cluster [0, " +
                                  std::to_string(topology.gpus()) + ")");
    }
  }
  std::sort(ring_.begin(), ring_.end());
  const auto dup = std::adjacent_find(ring_.begin(), ring_.end());
  if (dup != ring_.end()) {
    throw std::invalid_argument("communicator: GPU " + std::to_string(*dup) + " is listed twice");
  }
  shape_ = make_group_shape(topology, ring_);
}

void CommGroup::check(CollectiveKind kind, CollectiveAlgorithm algorithm) const {
  check_supported(kind, algorithm);
  if (kind == CollectiveKind::kSendRecv && size() != 2) {
    throw std::invalid_argument("send-recv needs a group of exactly 2 GPUs (source, destination), got " +
                                std::to_string(size()));
  }
}

CollectiveCost CommGroup::cost(CollectiveKind kind, CollectiveAlgorithm algorithm, Bytes bytes) const {
  check(kind, algorithm);
  if (!(bytes.value >= 0) || !std::isfinite(bytes.value)) {
    throw std::invalid_argument("collective size must be finite and >= 0 bytes, got " + std::to_string(bytes.value));
  }
  if (size() == 1) return {};
  const Topology& t = *topology_;
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: return ti::ring_cost(t, shape_, kind, bytes.value);
    case CollectiveAlgorithm::kTree: return ti::tree_cost(t, shape_, bytes.value);
    case CollectiveAlgorithm::kHierarchical: return ti::hierarchical_cost(t, shape_, bytes.value);
    case CollectiveAlgorithm::kPairwise: return ti::all_to_all_cost(t, shape_, kind, bytes.value);
    case CollectiveAlgorithm::kDirect: return ti::p2p_cost(t, gpus_[0], gpus_[1], bytes.value);
  }
  MOFASIM_UNREACHABLE("every algorithm is handled");
}

Bandwidth CommGroup::bus_bandwidth(CollectiveKind kind, CollectiveAlgorithm algorithm) const {
  // A message large enough that every protocol model picks its bulk protocol (Simple or NVLS).
  constexpr double kBulk = 1e15;
  const double per_byte = cost(kind, algorithm, Bytes{kBulk}).bandwidth_seconds / kBulk;
  if (per_byte <= 0) return Bandwidth{std::numeric_limits<double>::infinity()};
  return Bandwidth{bus_bandwidth_factor(kind, size()) / per_byte};
}

CollectivePlan CommGroup::plan(CollectiveKind kind, CollectiveAlgorithm algorithm) const {
  check(kind, algorithm);
  CollectivePlan out{.kind = kind, .algorithm = algorithm, .phases = {}};
  if (size() == 1) return out;
  const Topology& t = *topology_;
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: ti::ring_plan(t, shape_, ring_, kind, out); break;
    case CollectiveAlgorithm::kTree: ti::tree_plan(t, shape_, ring_, out); break;
    case CollectiveAlgorithm::kHierarchical: ti::hierarchical_plan(t, shape_, ring_, out); break;
    case CollectiveAlgorithm::kPairwise: ti::all_to_all_plan(t, shape_, ring_, kind, out); break;
    case CollectiveAlgorithm::kDirect: ti::p2p_plan(t, gpus_[0], gpus_[1], out); break;
  }
  return out;
}

}  // namespace mofasim::topology
