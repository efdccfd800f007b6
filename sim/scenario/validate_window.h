// Check of sliding-window attention against the pipeline layout: with model.window_attn_skip_freq
// n > 1 and pp*vpp > 1 every chunk must hold a multiple of n layers, the same mix of windowed and
// full layers, because the plan prices one attention cost per block type (model/attention_window.h).
#pragma once

#include <functional>
#include <string>

#include "proto/scenario.pb.h"

namespace mofasim::scenario {

void check_window_chunks(const proto::Model& m, const proto::Parallelism& x,
                         const std::function<void(const std::string& path, const std::string& message)>& fail);

}  // namespace mofasim::scenario
