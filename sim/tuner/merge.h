// Combining sharded tuning runs (TuneOptions::shard i/n). Each shard evaluates a disjoint slice
// of the same enumeration, and candidate ids are positions in the unsharded enumeration, so the
// union of the shards' rows ranked by (objective, id) is exactly the unsharded ranking: from the
// CSVs (every evaluated row) the whole ranking, from the JSONs (each shard's top K plus counts)
// the top K and the summed counts.
#pragma once

#include <string>
#include <vector>

#include "sim/tuner/tune.h"

namespace mofasim::tuner {

// Rows of every shard CSV (report.h write_csv), ranked, and the shards' counts summed from their
// stats lines (equal to the unsharded counts when every shard is merged). If any shard has no
// stats line (an older file), only evaluated / feasible / infeasible_after_evaluation are known,
// recounted from the rows, and the rest stays zero. Throws std::invalid_argument on malformed
// input, on shards of different spaces, on a stats line that disagrees with its rows, or when
// shards overlap (a repeated candidate id, or more layouts than the space).
TuneResult merge_csv(const std::vector<std::string>& shard_csvs);

// The shards' JSON documents (report.h to_json(result, K)): their top rows ranked and their
// counts summed. The merged top K equals the unsharded top K when every shard wrote at least K.
// Throws std::invalid_argument on malformed input, on shards of different spaces, or on
// overlapping shards (more layouts than the space holds, or a repeated id).
TuneResult merge_json(const std::vector<std::string>& shard_jsons);

}  // namespace mofasim::tuner
