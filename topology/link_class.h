// Link classes: the three levels a byte can cross between two GPUs (NVLink-class inside a node,
// scale-out inside a supernode, scale-out between supernodes), ordered from fastest to slowest so
// that "the bottleneck class of a group" is simply the largest value any pair of members needs.
#pragma once

#include <cstdint>
#include <string_view>

namespace mofasim::topology {

enum class LinkClass : std::uint8_t {
  kLocal = 0,           // same GPU: no link crossed (a group of one)
  kIntraNode = 1,       // NVLink-class, GPU to GPU inside one node
  kInterNode = 2,       // scale-out network between nodes of one supernode
  kInterSupernode = 3,  // scale-out network between supernodes (through the spine)
};

inline constexpr int kLinkClassCount = 4;

constexpr std::string_view link_class_name(LinkClass c) {
  switch (c) {
    case LinkClass::kLocal: return "local";
    case LinkClass::kIntraNode: return "intra_node";
    case LinkClass::kInterNode: return "inter_node";
    case LinkClass::kInterSupernode: return "inter_supernode";
  }
  return "?";
}

}  // namespace mofasim::topology
