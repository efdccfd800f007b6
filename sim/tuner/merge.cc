// Merging shard outputs into one ranking (see merge.h).
#include "sim/tuner/merge.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sim/tuner/report.h"

namespace mofasim::tuner {
namespace {

void sort_and_check_ids(std::vector<Row>& rows) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.candidate.id < b.candidate.id; });
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].candidate.id == rows[i - 1].candidate.id) {
      throw std::invalid_argument("tuner merge: candidate " + std::to_string(rows[i].candidate.id) +
                                  " appears in two shards (overlapping shards?)");
    }
  }
}

// Sums the shards' counts into out.stats, checking they come from one space and do not overlap.
void merge_stats(TuneResult& out, const TuneStats& stats, bool first) {
  if (first) {
    out.stats = stats;
    return;
  }
  if (stats.raw_layouts != out.stats.raw_layouts || stats.feature_variants != out.stats.feature_variants) {
    throw std::invalid_argument("tuner merge: shards come from different search spaces");
  }
  out.stats.merge(stats);
}

void check_not_overlapping(const TuneStats& stats) {
  if (stats.shard_layouts > stats.raw_layouts) {
    throw std::invalid_argument("tuner merge: the shards hold more layouts than the space (overlapping shards?)");
  }
}

}  // namespace

TuneResult merge_csv(const std::vector<std::string>& shard_csvs) {
  TuneResult out;
  bool all_counted = true;
  for (std::size_t i = 0; i < shard_csvs.size(); ++i) {
    std::vector<Row> rows = read_csv(shard_csvs[i]);
    const std::optional<TuneStats> stats = read_csv_stats(shard_csvs[i]);
    if (stats && stats->evaluated != rows.size()) {
      throw std::invalid_argument("tuner merge: shard " + std::to_string(i + 1) + " says " +
                                  std::to_string(stats->evaluated) + " evaluated but holds " +
                                  std::to_string(rows.size()) + " rows");
    }
    if (stats && all_counted) merge_stats(out, *stats, i == 0);
    all_counted = all_counted && stats.has_value();
    out.rows.insert(out.rows.end(), rows.begin(), rows.end());
  }
  sort_and_check_ids(out.rows);
  if (all_counted && !shard_csvs.empty()) {
    check_not_overlapping(out.stats);
  } else {
    out.stats = TuneStats{};  // some shard has no counts: recount what the rows show
    for (const Row& r : out.rows) {
      out.stats.evaluated += 1;
      (r.step.fits ? out.stats.feasible : out.stats.infeasible_after_evaluation) += 1;
    }
  }
  rank_rows(out);
  return out;
}

TuneResult merge_json(const std::vector<std::string>& shard_jsons) {
  TuneResult out;
  bool first = true;
  for (const std::string& text : shard_jsons) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw std::invalid_argument(std::string("tuner merge: not JSON: ") + e.what());
    }
    if (!j.contains("stats") || !j.contains("top")) throw std::invalid_argument("tuner merge: JSON needs 'stats' and 'top'");
    merge_stats(out, stats_from_json(j.at("stats")), first);
    first = false;
    for (const nlohmann::json& row : j.at("top")) out.rows.push_back(row_from_json(row));
  }
  check_not_overlapping(out.stats);
  sort_and_check_ids(out.rows);
  rank_rows(out);
  return out;
}

}  // namespace mofasim::tuner
