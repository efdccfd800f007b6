// Checks of the hardware fields that make up the reserved total of the memory fit
// (model/memory_reserve.h): memory_reserved and cuda_context leave room in gpu_memory, and
// allocator_fragmentation is in [0, 0.9). One `fail(path, message)` per problem; run by
// validate_scenario for the hardware section and each topology.node_hardware entry.
#pragma once

#include <string>

#include "proto/scenario.pb.h"
#include "sim/scenario/validate_layout.h"

namespace mofasim::scenario {

// `p` is the hardware message's path ("hardware", "topology.node_hardware[0].hardware");
// `memory_ok`: gpu_memory is given and valid (else the room is not checked).
void check_device_memory(const proto::Hardware& h, const std::string& p, bool memory_ok, const FieldFail& fail);

}  // namespace mofasim::scenario
