// Finding an op of a layer's cost table (model/op_table.h) by kind, and its collectives by group,
// for the tests that check one op's FLOPs, bytes, kernel shapes or traffic.
#pragma once

#include <stdexcept>
#include <vector>

#include "model/op_table.h"

namespace mofasim::test {

// The first op of `kind` in the table; throws std::logic_error (the test fails) when there is none.
inline const model::OpCost& find_op(const model::LayerOps& ops, model::OpKind kind) {
  for (const model::OpCost& op : ops.ops()) {
    if (op.op == kind) return op;
  }
  throw std::logic_error("op not in table");
}

inline bool has_op(const model::LayerOps& ops, model::OpKind kind) {
  for (const model::OpCost& op : ops.ops()) {
    if (op.op == kind) return true;
  }
  return false;
}

// The layer's collectives on group `g`, in table order.
inline std::vector<model::CommOp> comms_on(const model::LayerOps& ops, model::LayerGroup g) {
  std::vector<model::CommOp> out;
  for (const model::CommOp& c : ops.comms()) {
    if (c.group == g) out.push_back(c);
  }
  return out;
}

}  // namespace mofasim::test
