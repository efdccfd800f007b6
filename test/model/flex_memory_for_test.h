// The memory report of one layout under the alltoall and the flex (DeepEP) dispatcher, for the
// tests that check what DeepEP's buffers add per GPU.
#pragma once

#include <vector>

#include "model/memory.h"
#include "model/spec.h"

namespace mofasim::model::testing {

struct FlexAndAllToAll {
  MemoryReport alltoall;
  MemoryReport flex;
};

// `m` under both dispatchers on an 80 GB GPU with the distributed optimizer and 1F1B's in-flight
// micro-batches.
inline FlexAndAllToAll flex_and_alltoall_memory(ModelSpec m, const ParallelSpec& p) {
  HardwareSpec hw;
  hw.gpu_memory_bytes = 80e9;
  FeatureSpec f;
  f.distributed_optimizer = true;
  const std::vector<double> inflight = one_f_one_b_inflight(p);
  m.moe.token_dispatcher = MoeDispatcher::kAllToAll;
  FlexAndAllToAll out;
  out.alltoall = memory_report(m, hw, p, f, inflight);
  m.moe.token_dispatcher = MoeDispatcher::kFlex;
  out.flex = memory_report(m, hw, p, f, inflight);
  return out;
}

}  // namespace mofasim::model::testing
