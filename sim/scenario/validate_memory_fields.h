// Checks of the precision, data-parallel sharding and recompute fields of `optimizations` (the
// Megatron vocabulary: main_grads_dtype, data_parallel_sharding_strategy, recompute_granularity,
// recompute_modules, ...): allowed values and combinations, one `fail(path, message)` per problem.
#pragma once

#include <functional>
#include <string>

#include "proto/scenario.pb.h"

namespace mofasim::scenario {

void check_memory_fields(const proto::Scenario& s,
                         const std::function<void(const std::string& path, const std::string& message)>& fail);

}  // namespace mofasim::scenario
