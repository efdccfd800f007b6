// What a tuning run prints and writes: the top-K table in the shape of MoFa Table 6 (layout,
// features, memory and TFLOPS per GPU, step time and its key stages; with E2E the checkpoint
// interval, ETTR and total time), the pruning counts, a CSV of every evaluated configuration and
// a JSON document of the counts and the top K. CSV and JSON read back exactly (doubles are
// written with 17 significant digits), which is what merging shards relies on (merge.h).
#pragma once

#include <iosfwd>
#include <optional>
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

// A comment line with the run's counts ("# stats: " + to_json(stats)), so that merged shards keep
// them (CSV readers skip it as a comment, e.g. pandas comment='#'), the header line, then one
// line per row of result.rows (every evaluated configuration, by id).
inline constexpr std::string_view kCsvStatsPrefix = "# stats: ";
void write_csv(std::ostream& out, const TuneResult& result);
// Parses what write_csv wrote (lines starting with '#' are skipped). Throws std::invalid_argument
// naming the line on malformed input.
std::vector<Row> read_csv(std::string_view text);
// The counts of the stats comment line; nullopt when the file has none (written before it existed).
std::optional<TuneStats> read_csv_stats(std::string_view text);

// {"stats": {...}, "top": [rows of the ranking, best first, at most top_k]}.
nlohmann::json to_json(const TuneResult& result, int top_k);
nlohmann::json to_json(const TuneStats& stats);
nlohmann::json to_json(const Row& row);
// Inverses. Throw std::invalid_argument on a missing or mistyped field.
TuneStats stats_from_json(const nlohmann::json& j);
Row row_from_json(const nlohmann::json& j);

}  // namespace mofasim::tuner
