// The kinds of collective, the one enum every layer uses: the op table lists a layer's collectives
// by it (model/op_table.h), topology/ prices and plans them (collective.h), and the step generator
// tags its communication tasks with it (a task that is no collective has none: TaskKind says what
// it is). A header of its own with no dependencies (docs/layering.rules).
#pragma once

#include <cstdint>

namespace mofasim::topology {

enum class CollectiveKind : std::uint8_t {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  kBroadcast,
  kSendRecv,  // members[0] sends S bytes to members[1]
  // One step of a ring: every member sends S bytes to its ring successor at once (a CP ring
  // attention KV exchange). One α, each ring edge carries S. Both step models price a CP ring
  // step with this kind (cost) and the replay runs its plan, so the two cannot drift apart.
  kRingStep,
  // The two hops of a node-deduplicating all-to-all (DeepEP's dispatch and combine), S as for
  // kAllToAll. Scale-out: only the node-crossing part of a pairwise all-to-all (S·(P−g)/P per
  // member through its NIC, one copy per destination node); scale-up: the forward inside each
  // node (S·(g−1)/g per member over NVLink). Pairwise algorithm.
  kAllToAllScaleOut,
  kAllToAllScaleUp,
};

}  // namespace mofasim::topology
