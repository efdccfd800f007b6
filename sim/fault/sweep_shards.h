// ETTR sweeps split over machines (`mofasim sweep --shard i/n`): shard i of n evaluates the sweep
// points [i*P/n, (i+1)*P/n). Every point is evaluated on its own (same seed for every point), so
// the shards' points put back in order are exactly the single-process sweep.
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fault/ettr_sweep.h"

namespace mofasim::fault {

// {"kind": "mofasim.sweep_shard", parameter, points (in the whole sweep), first_point,
// "rows": [[value, analytic_ettr, analytic_e2e_s, renewal_ettr, mc_ettr_mean, mc_ettr_std_error,
// mc_ettr_ci95 lo, hi, mc_ettr_pooled, mc_e2e_mean_s, mc_e2e_p90_s], ...]}; doubles round-trip
// exact, non-finite ones as "nan" / "inf" / "-inf".
nlohmann::json sweep_shard_json(const EttrSweep& shard, std::size_t first_point, std::size_t points);

// The whole sweep from its shards (any order), best_analytic recomputed as run_ettr_sweep does.
// Throws std::invalid_argument on a malformed document, shards of different sweeps, overlapping
// shards or missing points.
EttrSweep merge_sweep_shards(const std::vector<nlohmann::json>& shards);

}  // namespace mofasim::fault
