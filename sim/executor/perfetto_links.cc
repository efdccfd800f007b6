// Link selection and link-utilisation counter tracks of the Perfetto trace (see perfetto_links.h).
#include "sim/executor/perfetto_links.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "sim/units/format.h"

namespace mofasim::executor {
namespace {

constexpr std::uint8_t bit(topology::LinkKind k) { return static_cast<std::uint8_t>(1U << static_cast<unsigned>(k)); }

std::uint8_t kinds_named(std::string_view name) {
  using K = topology::LinkKind;
  if (name == "nvlink") return bit(K::kNvlinkTx) | bit(K::kNvlinkRx);
  if (name == "nic") return bit(K::kNicTx) | bit(K::kNicRx);
  if (name == "spine") return bit(K::kSpineUp) | bit(K::kSpineDown);
  for (const K k : {K::kNvlinkTx, K::kNvlinkRx, K::kNicTx, K::kNicRx, K::kSpineUp, K::kSpineDown}) {
    if (name == topology::link_kind_name(k)) return bit(k);
  }
  return 0;
}

bool is_nvlink(topology::LinkKind k) { return k == topology::LinkKind::kNvlinkTx || k == topology::LinkKind::kNvlinkRx; }

std::string track_name(const LinkLoad& l) {
  const std::string kind(topology::link_kind_name(l.link.kind));
  const std::string where = is_nvlink(l.link.kind) ? "gpu " + std::to_string(l.link.owner) + " " + kind
                                                   : kind + " rail " + std::to_string(l.link.rail);
  return where + " (of " + format_number("%.4g GB/s", l.link.capacity.bytes_per_second / 1e9) + ")";
}

}  // namespace

std::uint8_t parse_link_kinds(std::string_view text) {
  if (text == "all") return 0x3F;
  if (text == "none") return 0;
  std::uint8_t mask = 0;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view part = text.substr(at, comma - at);
    const std::uint8_t kinds = kinds_named(part);
    if (kinds == 0) {
      throw std::invalid_argument("expected all, none or a comma list of nvlink, nic, spine, nvlink_tx, nvlink_rx, "
                                  "nic_tx, nic_rx, spine_up, spine_down, got '" + std::string(text) + "' ('" +
                                  std::string(part) + "' is not a link kind)");
    }
    mask |= kinds;
    at = comma + 1;
  }
  return mask;
}

std::vector<std::uint32_t> traced_links(const topology::Topology& topo, std::span<const int> traced_ranks,
                                        std::uint8_t link_kinds) {
  const int per_node = topo.spec().gpus_per_node;
  std::vector<bool> node_traced(static_cast<std::size_t>(std::max(1, topo.spec().nodes())), false);
  for (const int rank : traced_ranks) node_traced[static_cast<std::size_t>(rank / per_node)] = true;
  std::vector<std::uint32_t> out;
  const auto links = topo.links();
  for (std::size_t i = 0; i < links.size(); ++i) {
    const topology::LinkResource& l = links[i];
    const int node = is_nvlink(l.kind) ? l.owner / per_node : l.owner;
    if ((link_kinds & bit(l.kind)) != 0 && node_traced[static_cast<std::size_t>(node)]) {
      out.push_back(static_cast<std::uint32_t>(i));
    }
  }
  return out;
}

void write_link_counters(PerfettoWriter& out, std::span<const LinkLoad> loads, const TraceFilter& filter) {
  std::map<int, std::vector<const LinkLoad*>> by_node;  // ascending nodes, links in topology order
  for (const LinkLoad& l : loads) {
    if (!l.t_ns.empty()) by_node[l.node].push_back(&l);  // a link that carried nothing gets no track
  }
  for (const auto& [node, links] : by_node) {
    const std::uint64_t process = out.process_track(kNodePidBase + node, "node " + std::to_string(node) + " links");
    for (const LinkLoad* l : links) {
      const std::uint64_t track = out.counter_track(process, track_name(*l));
      const double capacity = l->link.capacity.bytes_per_second;
      double value = 0;  // the load before the first sample
      bool opened = false;
      for (std::size_t i = 0; i < l->t_ns.size(); ++i) {
        const std::int64_t at = l->t_ns[i];
        if (!opened && at > filter.from_ns) {
          out.counter(track, filter.from_ns, value);  // the value the window starts with
          opened = true;
        }
        if (at >= filter.to_ns) break;
        value = l->bytes_per_s[i] / capacity;
        if (at >= filter.from_ns) {
          out.counter(track, at, value);
          opened = true;
        }
      }
      if (!opened) out.counter(track, filter.from_ns, value);
    }
  }
}

}  // namespace mofasim::executor
