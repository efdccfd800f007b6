// E2E tuning for one configuration (MoFa §4.2, MoFa(43) MoFa(44)): the optimal checkpoint interval
// for its step time, and the ETTR and total wall time of MoFa(40) at that interval, from the
// analytic fault model (model/fault_analytic.h).
#pragma once

#include <cstdint>

#include "sim/tuner/search_space.h"

namespace mofasim::tuner {

struct E2EEstimate {
  std::int64_t interval_steps = 0;  // N_ckpt*, MoFa(44) rounded both ways, the better kept
  double save_time_s = 0;           // t_save used
  double ettr = 0;                  // MoFa(36) at N_ckpt*
  double total_s = 0;               // T_total, MoFa(40) at N_ckpt*; +infinity if it cannot converge
};

// Throws std::invalid_argument (from the fault model) when the settings are invalid.
E2EEstimate estimate_e2e(const E2ESettings& settings, const Layout& layout, double step_time_s,
                         const topology::TopologySpec& topology);

}  // namespace mofasim::tuner
