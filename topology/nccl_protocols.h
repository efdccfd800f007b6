// NCCL's collective tuning model (src/graph/tuning.cc) as protocol options for the ring and tree
// algorithms: for each protocol a whole latency (base + per-hop latencies by link class) and a
// factor on the α–β bandwidth term. The cheapest option at the message size is what NCCL would
// pick; taking it gives the latency floor and the bandwidth ramp of nccl-tests curves.
//
//   ring latency(p) = base[ring][p] + (steps − inter)·hw[NVLink][ring][p] + inter·hw[NET][ring][p]
//     steps = 2(P−1) all-reduce, P−1 reduce-scatter / all-gather / broadcast, 1 ring step;
//     inter = the steps that cross nodes: 2(N−1) all-reduce, N−1 otherwise (N nodes, 0 when N = 1)
//   tree latency(p) = base[tree][p] + 2·((P/N − 1)·hw[NVLink][tree][p] + ⌈log2 N⌉·hw[NET][tree][p])
//   bandwidth factor (on bytes / bus bandwidth B):
//     ring: LL max(2, B/llMaxBw), LL128 1/0.92, Simple 1
//     tree: LL max(3.8, B/llMaxBw), LL128 9/7 (one node) or 128/120, Simple 1/0.92
//   NVLS (NVLink SHARP, single-node all-reduce of >= 5 GPUs where the hardware has it): latency
//     hw[NVLink][NVLS][Simple]; each GPU moves S once at B·eff·(ch−1)/ch, i.e. factor
//     1 / (eff·(ch−1)/ch · 2(P−1)/P) on the ring's bandwidth term.
// Not modelled: per-channel bandwidth caps (NCCL's channel count comes from a topology search that
// is not documented per system), the PCI latency class (intra-node is taken as NVLink), and the
// network overhead NCCL adds per CPU vendor.
#pragma once

#include "topology/collective.h"
#include "topology/group_shape.h"
#include "topology/topology_spec.h"

namespace mofasim::topology {

// Options of a ring collective of `kind` over a group of this shape whose α–β bandwidth term is
// bus_seconds_per_byte (= 1 / bus bandwidth) per byte of bus traffic. Empty under kAlphaBeta.
ProtocolOptions ring_protocols(const CollectiveTuning& tuning, CollectiveKind kind, const GroupShape& shape,
                               double bus_seconds_per_byte);

// Options of a tree all-reduce (same arguments).
ProtocolOptions tree_protocols(const CollectiveTuning& tuning, const GroupShape& shape, double bus_seconds_per_byte);

// The α–β cost with the cheapest option applied (unchanged when there is none).
CollectiveCost with_protocol(const ProtocolOptions& options, CollectiveCost alpha_beta);

}  // namespace mofasim::topology
