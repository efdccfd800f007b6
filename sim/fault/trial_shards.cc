// Monte Carlo shard documents and their merge (see trial_shards.h).
#include "sim/fault/trial_shards.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/fault/failure_sampler.h"

namespace mofasim::fault {
namespace {

constexpr const char* kKind = "mofasim.monte_carlo_shard";
constexpr std::size_t kFixedColumns = 7;  // wall_s ... failures, before the per-class counts
constexpr std::size_t kFailSlowColumns = 4;  // after them: slow_s, mitigation_s, episodes, mitigations

struct ParsedShard {
  std::int64_t first = 0;
  const nlohmann::json* rows = nullptr;
};

MonteCarloResult merge_checked(const std::vector<nlohmann::json>& shards, const model::RunSpec& run, bool fail_slow);

}  // namespace

std::pair<std::int64_t, std::int64_t> shard_range(std::int64_t items, int index, int count) {
  if (count < 1 || index < 0 || index >= count) {
    throw std::invalid_argument("shard " + std::to_string(index) + "/" + std::to_string(count) +
                                ": needs 0 <= i < n");
  }
  return {items * index / count, items * (index + 1) / count};
}

nlohmann::json trial_shard_json(const MonteCarloResult& shard, std::int64_t first_trial, std::int64_t trials,
                                std::uint64_t seed) {
  const std::size_t classes = shard.class_names.size();
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < shard.trials.size(); ++i) {
    const TrialResult& t = shard.trials[i];
    nlohmann::json row = {t.wall_s, t.ettr, t.lost_work_s, t.checkpoint_s, t.downtime_s, t.init_s, t.failures};
    for (std::size_t c = 0; c < classes; ++c) row.push_back(shard.failures_by_class[i * classes + c]);
    for (const nlohmann::json& x : {nlohmann::json(t.slow_s), nlohmann::json(t.mitigation_s), nlohmann::json(t.episodes),
                                    nlohmann::json(t.mitigations)}) {
      row.push_back(x);
    }
    rows.push_back(std::move(row));
  }
  return {{"kind", kKind},       {"trials", trials}, {"seed", seed}, {"first_trial", first_trial},
          {"class_names", shard.class_names}, {"rows", std::move(rows)}};
}

nlohmann::json run_trial_shard(const model::FaultSpec& spec, const model::RunSpec& run, MonteCarloOptions options,
                               int index, int count) {
  const auto [begin, end] = shard_range(options.trials, index, count);
  MonteCarloResult shard;
  if (begin < end) {
    options.first_trial = begin;
    options.end_trial = end;
    shard = run_monte_carlo(spec, run, options);
  } else {
    shard.class_names = FailureSampler(spec).class_names();
  }
  return trial_shard_json(shard, begin, options.trials, options.seed);
}

MonteCarloResult merge_trial_shards(const std::vector<nlohmann::json>& shards, const model::RunSpec& run,
                                    bool fail_slow) {
  try {
    return merge_checked(shards, run, fail_slow);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("a shard document is malformed: ") + e.what());
  }
}

namespace {

MonteCarloResult merge_checked(const std::vector<nlohmann::json>& shards, const model::RunSpec& run, bool fail_slow) {
  if (shards.empty()) throw std::invalid_argument("no shards given");
  std::int64_t trials = 0;
  std::uint64_t seed = 0;
  MonteCarloResult out;
  std::vector<ParsedShard> parsed;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const nlohmann::json& j = shards[s];
    if (!j.is_object() || j.value("kind", "") != kKind || !j.contains("rows") || !j.at("rows").is_array()) {
      throw std::invalid_argument("shard " + std::to_string(s + 1) + " is not a Monte Carlo shard document");
    }
    const auto names = j.at("class_names").get<std::vector<std::string>>();
    if (s == 0) {
      trials = j.at("trials").get<std::int64_t>();
      seed = j.at("seed").get<std::uint64_t>();
      out.class_names = names;
    } else if (j.at("trials").get<std::int64_t>() != trials || j.at("seed").get<std::uint64_t>() != seed ||
               names != out.class_names) {
      throw std::invalid_argument("shard " + std::to_string(s + 1) +
                                  " comes from a different run (trials, seed or failure classes differ)");
    }
    parsed.push_back({j.at("first_trial").get<std::int64_t>(), &j.at("rows")});
  }
  std::sort(parsed.begin(), parsed.end(), [](const ParsedShard& a, const ParsedShard& b) { return a.first < b.first; });
  const std::size_t classes = out.class_names.size();
  for (const ParsedShard& p : parsed) {
    const auto have = static_cast<std::int64_t>(out.trials.size());
    if (p.first != have) {
      throw std::invalid_argument(p.first < have ? "shards overlap at trial " + std::to_string(p.first)
                                                 : "trials " + std::to_string(have) + " to " +
                                                       std::to_string(p.first - 1) + " are in no shard");
    }
    for (const nlohmann::json& row : *p.rows) {
      // Shards written before fail-slow have no fail-slow columns: runs without it, zeros.
      const bool has_fail_slow = row.is_array() && row.size() == kFixedColumns + classes + kFailSlowColumns;
      if (!row.is_array() || (!has_fail_slow && row.size() != kFixedColumns + classes)) {
        throw std::invalid_argument("trial " + std::to_string(out.trials.size()) + " has the wrong columns");
      }
      if (fail_slow && !has_fail_slow) {
        throw std::invalid_argument("trial " + std::to_string(out.trials.size()) +
                                    " has no fail-slow columns (written before fail-slow), but this run has "
                                    "fault_tolerance.fail_slow: run that shard again");
      }
      out.trials.push_back({.wall_s = row[0].get<double>(),
                            .ettr = row[1].get<double>(),
                            .lost_work_s = row[2].get<double>(),
                            .checkpoint_s = row[3].get<double>(),
                            .downtime_s = row[4].get<double>(),
                            .init_s = row[5].get<double>(),
                            .failures = row[6].get<std::int64_t>()});
      if (has_fail_slow) {
        const std::size_t f = kFixedColumns + classes;
        out.trials.back().slow_s = row[f].get<double>();
        out.trials.back().mitigation_s = row[f + 1].get<double>();
        out.trials.back().episodes = row[f + 2].get<std::int64_t>();
        out.trials.back().mitigations = row[f + 3].get<std::int64_t>();
      }
      for (std::size_t c = 0; c < classes; ++c) out.failures_by_class.push_back(row[kFixedColumns + c].get<std::int64_t>());
    }
  }
  if (static_cast<std::int64_t>(out.trials.size()) != trials) {
    throw std::invalid_argument("the shards hold " + std::to_string(out.trials.size()) + " of " +
                                std::to_string(trials) + " trials (a shard is missing)");
  }
  out.summary = summarize_trials(out, run, seed);
  return out;
}

}  // namespace

}  // namespace mofasim::fault
