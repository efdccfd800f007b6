// Merging shard outputs into one ranking (see merge.h).
#include "sim/tuner/merge.h"

#include <algorithm>
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

}  // namespace

TuneResult merge_csv(const std::vector<std::string>& shard_csvs) {
  TuneResult out;
  for (const std::string& text : shard_csvs) {
    std::vector<Row> rows = read_csv(text);
    out.rows.insert(out.rows.end(), rows.begin(), rows.end());
  }
  sort_and_check_ids(out.rows);
  for (const Row& r : out.rows) {
    out.stats.evaluated += 1;
    (r.step.fits ? out.stats.feasible : out.stats.infeasible_after_evaluation) += 1;
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
    const TuneStats stats = stats_from_json(j.at("stats"));
    if (first) {
      out.stats = stats;
      first = false;
    } else {
      if (stats.raw_layouts != out.stats.raw_layouts || stats.feature_variants != out.stats.feature_variants) {
        throw std::invalid_argument("tuner merge: shards come from different search spaces");
      }
      out.stats.merge(stats);
    }
    for (const nlohmann::json& row : j.at("top")) out.rows.push_back(row_from_json(row));
  }
  if (out.stats.shard_layouts > out.stats.raw_layouts) {
    throw std::invalid_argument("tuner merge: the shards hold more layouts than the space (overlapping shards?)");
  }
  sort_and_check_ids(out.rows);
  rank_rows(out);
  return out;
}

}  // namespace mofasim::tuner
