// Link utilisation in the Perfetto trace: which links a trace records (`simulate --trace-links`)
// and their counter tracks.
//
// The recorded links are those of the nodes that hold a traced rank (the replica-0 rank of each
// traced stage): the NVLink ports of every GPU on such a node, and its NICs and spine ports, each
// kind kept only if the filter's link_kinds has it. Each link that carried traffic gets one counter
// track under a process "node N links" (pid kNodePidBase + N): "nic_tx rail 0 (of 400 GB/s)",
// "gpu 3 nvlink_rx (of 450 GB/s)", valued as the fraction of the link's capacity in use (0 to 1;
// above 1 never happens, max-min shares stay within capacity). The values are the fluid engine's
// load, Σ weight × rate over the link's transfers (FluidModel::watch_load), so contention (β) shows
// as a lower load. In folded fidelity only the replayed ranks' traffic is on the links.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/executor/perfetto_writer.h"
#include "sim/executor/replay.h"
#include "sim/executor/trace_filter.h"
#include "topology/topology.h"

namespace mofasim::executor {

// Node processes sit above every stage process (pid = rank + 1, at most 2^20 + 1).
inline constexpr int kNodePidBase = 1 << 22;

// "all", "none", or a comma list of nvlink, nic, spine (both directions) or nvlink_tx, nvlink_rx,
// nic_tx, nic_rx, spine_up, spine_down -> a mask of bits (1 << LinkKind). Throws
// std::invalid_argument naming the bad part and the allowed names.
std::uint8_t parse_link_kinds(std::string_view text);

// The links (indices into topo.links()) a trace of `traced_ranks` records, ascending.
std::vector<std::uint32_t> traced_links(const topology::Topology& topo, std::span<const int> traced_ranks,
                                        std::uint8_t link_kinds);

// One process per node and one counter track per link with traffic, samples inside the filter's
// window (the value in effect at its start first).
void write_link_counters(PerfettoWriter& out, std::span<const LinkLoad> loads, const TraceFilter& filter);

}  // namespace mofasim::executor
