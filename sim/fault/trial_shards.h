// Monte Carlo runs split over machines (`mofasim ettr --shard i/n`, Slurm job arrays, MPI ranks).
// Shard i of n runs the trial indices [i*T/n, (i+1)*T/n); trial k always draws from Rng(seed, k),
// so the shards together hold exactly the trials of the single-process run. A shard is written as
// a JSON document holding its raw trial results (doubles printed round-trip exact), and merging
// puts them back in index order, so every statistic computed from the merged run is bit-identical
// to the single-process one.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fault/monte_carlo.h"

namespace mofasim::fault {

// [begin, end) of shard `index` of `count` over `items` (a contiguous, balanced split; a shard may
// be empty when count > items). Throws std::invalid_argument unless 0 <= index < count.
std::pair<std::int64_t, std::int64_t> shard_range(std::int64_t items, int index, int count);

// The shard document: {"kind": "mofasim.monte_carlo_shard", trials, seed, first_trial,
// class_names, "rows": [[wall_s, ettr, lost_work_s, checkpoint_s, downtime_s, init_s, failures,
// failures by class..., slow_s, mitigation_s, episodes, mitigations], ...]}. `shard` is a run with
// options.first_trial = first_trial. Rows written before fail-slow end at the failures by class;
// the merge reads them as trials without fail-slow (those four columns 0).
nlohmann::json trial_shard_json(const MonteCarloResult& shard, std::int64_t first_trial, std::int64_t trials,
                                std::uint64_t seed);

// Runs shard `index` of `count` of the `options.trials` trials (options.first_trial/end_trial are
// set from the shard; an empty shard runs nothing) and returns its document.
nlohmann::json run_trial_shard(const model::FaultSpec& spec, const model::RunSpec& run, MonteCarloOptions options,
                               int index, int count);

// Rebuilds the whole run from its shard documents (any order), with the statistics recomputed by
// summarize_trials. Throws std::invalid_argument naming the problem: not a shard document, shards
// of different runs (trials, seed, failure classes), overlapping shards, missing trials, a row
// of neither column count, or, when `fail_slow` (the run being merged has fail-slow on), a row
// written without the fail-slow columns (by a release before fail-slow, which ran none).
MonteCarloResult merge_trial_shards(const std::vector<nlohmann::json>& shards, const model::RunSpec& run,
                                    bool fail_slow);

}  // namespace mofasim::fault
