// Finding an op of a layer's cost table (model/op_table.h) by kind, for the tests that check one
// op's FLOPs, bytes or kernel shapes.
#pragma once

#include <stdexcept>

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

}  // namespace mofasim::test
