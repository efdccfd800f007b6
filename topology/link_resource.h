// Physical link resources a fluid engine shares between concurrent transfers. Each has a dense
// integer id (LinkId) and a capacity in bytes/s; collectives are decomposed into bytes per link
// (collective_plan.h). Full duplex: each direction is its own resource.
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/units/quantities.h"

namespace mofasim::topology {

enum class LinkId : std::uint32_t {};

constexpr std::uint32_t index_of(LinkId id) { return static_cast<std::uint32_t>(id); }

enum class LinkKind : std::uint8_t {
  kNvlinkTx,   // one GPU's NVLink-class egress (owner = GPU)
  kNvlinkRx,   // one GPU's NVLink-class ingress (owner = GPU)
  kNicTx,      // one NIC (rail) of a node, towards the scale-out network (owner = node)
  kNicRx,      // the same NIC, from the network (owner = node)
  kSpineUp,    // that rail's share of its supernode's uplink to the spine (owner = node)
  kSpineDown,  // that rail's share of the downlink from the spine (owner = node)
};

constexpr std::string_view link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::kNvlinkTx: return "nvlink_tx";
    case LinkKind::kNvlinkRx: return "nvlink_rx";
    case LinkKind::kNicTx: return "nic_tx";
    case LinkKind::kNicRx: return "nic_rx";
    case LinkKind::kSpineUp: return "spine_up";
    case LinkKind::kSpineDown: return "spine_down";
  }
  return "?";
}

struct LinkResource {
  LinkKind kind = LinkKind::kNvlinkTx;
  int owner = 0;  // GPU id for NVLink resources, node id for the others
  int rail = 0;   // NIC index within the node (0 for NVLink resources)
  Bandwidth capacity{};
};

}  // namespace mofasim::topology
