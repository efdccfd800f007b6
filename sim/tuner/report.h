// What a tuning run prints and writes: the top-K table in the shape of MoFa Table 6 (layout,
// features, memory and TFLOPS per GPU, step time and its key stages; with E2E the checkpoint
// interval, ETTR and total time), the pruning counts, a CSV of every evaluated configuration and
// a JSON document of the counts and the top K. CSV and JSON read back exactly (doubles are
// written with 17 significant digits), which is what merging shards relies on (merge.h).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/tuner/tune.h"

namespace mofasim::tuner {

// Top-K table; gpus and global_batch head the first row as in the paper.
std::string format_table(const TuneResult& result, const TuneProblem& problem, int top_k);

// "removed by <rule>: N configurations (L layouts)" lines, memory, evaluated, feasible.
std::string format_stats(const TuneStats& stats);

// Header line plus one line per row of result.rows (every evaluated configuration, by id).
void write_csv(std::ostream& out, const TuneResult& result);
// Parses what write_csv wrote. Throws std::invalid_argument naming the line on malformed input.
std::vector<Row> read_csv(std::string_view text);

// {"stats": {...}, "top": [rows of the ranking, best first, at most top_k]}.
nlohmann::json to_json(const TuneResult& result, int top_k);
nlohmann::json to_json(const TuneStats& stats);
nlohmann::json to_json(const Row& row);
// Inverses. Throw std::invalid_argument on a missing or mistyped field.
TuneStats stats_from_json(const nlohmann::json& j);
Row row_from_json(const nlohmann::json& j);

}  // namespace mofasim::tuner
