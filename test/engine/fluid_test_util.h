// Test helper: records the completion time of labelled activities started on a FluidModel.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/fluid_model.h"

namespace mofasim::sim::testing {

struct FinishLog {
  explicit FinishLog(std::size_t n) : at(n, -1) {}
  std::vector<std::int64_t> at;  // ns, -1 = not finished

  // A callback writing now() into at[label].
  Action on_done(const EventQueue& q, std::size_t label) {
    return [this, qp = &q, label] { at[label] = qp->now().time_since_epoch().count(); };
  }
};

}  // namespace mofasim::sim::testing
