// Chakra execution traces out (`simulate --chakra DIR`): one training step's task DAG, one trace
// per rank, in Chakra's schema (proto/chakra/et_def.proto) so ASTRA-sim can replay the same step.
//
// File layout, as Chakra's protolib encodeMessage writes it: DIR/mofasim.<rank>.et holds a
// GlobalMetadata message then the rank's Node messages, each prefixed by its byte length as a
// varint32. DIR/comm_groups.json maps every pg_name used to its ranks (ASTRA-sim's
// --comm-group-configuration format).
//
// The Workload is one pipeline replica (one template per stage); a rank's trace is its stage's
// tasks with the rank's own groups and peers:
//   compute / host task -> COMP_NODE   (duration_micros: the uncontended device or host time,
//                                        rounded to whole microseconds and at least 1; num_ops: FLOPs)
//   collective          -> COMM_COLL_NODE (comm_type, comm_size = buffer bytes per member, pg_name)
//   CP ring KV exchange -> COMM_SEND_NODE to the next CP rank + COMM_RECV_NODE from the previous
//   PP transfer         -> COMM_SEND_NODE on the sender, COMM_RECV_NODE on the receiver (same tag)
//   D2H / H2D copy      -> MEM_STORE_NODE / MEM_LOAD_NODE (tensor_size = bytes)
// Node ids: a task's id; the receive half of a transfer is (task count + task id). Every DAG edge
// u -> v appears once in data_deps of v's node, since Chakra's ETFeeder (what ASTRA-sim reads
// traces with) resolves data_deps only; the edges that are stream issue order (u and v on one
// stream) are repeated in ctrl_deps for tools that tell the two apart. A P2P's incoming edges go
// to its half on the rank where the predecessor has a node.
#pragma once

#include <string>
#include <vector>

#include "proto/chakra/et_def.pb.h"
#include "sim/executor/instance_map.h"
#include "sim/executor/simulate_step.h"
#include "sim/executor/workload.h"
#include "topology/placement.h"

namespace mofasim::interop {

// Above this many ranks `--chakra` needs an explicit --chakra-ranks list.
inline constexpr int kChakraMaxRanks = 256;

// The step's task DAG exactly as simulate_step generates it (no replay).
executor::Workload step_workload(const executor::SimulationInput& input);

topology::Placement step_placement(const executor::SimulationInput& input);

// The ranks to write: `list` ("0,3,8-15") when given, else every rank (full fidelity, at most
// kChakraMaxRanks) or the simulated ranks (folded: pipeline replica 0). Throws
// std::invalid_argument with "--chakra-ranks: ..." or "--chakra: ..." for a bad list, a rank the
// folded run did not simulate, or too many ranks.
std::vector<int> chakra_ranks(const topology::Placement& placement, executor::Fidelity fidelity, const std::string& list);

// The trace of one rank: its metadata and nodes.
struct ChakraTrace {
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;
};
ChakraTrace chakra_trace(const executor::Workload& w, const topology::Placement& placement, int rank);

// pg_name of the group of kind `k` that holds `rank` (stable across runs and rank selections).
std::string chakra_group_name(const topology::Placement& placement, topology::GroupKind k, int rank);

// Writes DIR/mofasim.<rank>.et for `ranks` and DIR/comm_groups.json; creates DIR. Throws
// std::runtime_error when a file cannot be written.
void write_chakra_traces(const executor::Workload& w, const topology::Placement& placement, const std::vector<int>& ranks,
                         const std::string& dir);

// Reads one trace file back (length-delimited GlobalMetadata then Nodes); for tests and tools.
ChakraTrace read_chakra_trace(const std::string& path);

}  // namespace mofasim::interop
