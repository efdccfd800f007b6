// Sweep shard documents and their merge (see sweep_shards.h).
#include "sim/fault/sweep_shards.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace mofasim::fault {
namespace {

constexpr const char* kKind = "mofasim.sweep_shard";
constexpr std::size_t kColumns = 11;

// JSON has no NaN or infinity: they travel as strings so a merge gives back the same doubles.
nlohmann::json exact(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

double from_exact(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  throw std::invalid_argument("'" + s + "' is not a number");
}

struct Part {
  std::size_t first = 0;
  const nlohmann::json* rows = nullptr;
};

EttrSweep merge_checked(const std::vector<nlohmann::json>& shards) {
  if (shards.empty()) throw std::invalid_argument("no shards given");
  EttrSweep out;
  std::size_t points = 0;
  std::vector<Part> parts;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const nlohmann::json& j = shards[s];
    if (!j.is_object() || j.value("kind", "") != kKind) {
      throw std::invalid_argument("shard " + std::to_string(s + 1) + " is not a sweep shard document");
    }
    const auto parameter = j.at("parameter").get<std::string>();
    const auto n = j.at("points").get<std::size_t>();
    if (s == 0) {
      out.parameter = parameter;
      points = n;
    } else if (parameter != out.parameter || n != points) {
      throw std::invalid_argument("shard " + std::to_string(s + 1) + " comes from a different sweep");
    }
    parts.push_back({j.at("first_point").get<std::size_t>(), &j.at("rows")});
  }
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.first < b.first; });
  for (const Part& p : parts) {
    if (p.first != out.points.size()) {
      throw std::invalid_argument(p.first < out.points.size() ? "shards overlap at point " + std::to_string(p.first)
                                                              : "point " + std::to_string(out.points.size()) +
                                                                    " is in no shard");
    }
    for (const nlohmann::json& r : *p.rows) {
      if (!r.is_array() || r.size() != kColumns) throw std::invalid_argument("a sweep row has the wrong columns");
      out.points.push_back({.value = from_exact(r[0]),
                            .analytic_ettr = from_exact(r[1]),
                            .analytic_e2e_s = from_exact(r[2]),
                            .renewal_ettr = from_exact(r[3]),
                            .mc_ettr_mean = from_exact(r[4]),
                            .mc_ettr_std_error = from_exact(r[5]),
                            .mc_ettr_ci95 = {from_exact(r[6]), from_exact(r[7])},
                            .mc_ettr_pooled = from_exact(r[8]),
                            .mc_e2e_mean_s = from_exact(r[9]),
                            .mc_e2e_p90_s = from_exact(r[10])});
    }
  }
  if (out.points.size() != points) {
    throw std::invalid_argument("the shards hold " + std::to_string(out.points.size()) + " of " +
                                std::to_string(points) + " points (a shard is missing)");
  }
  for (std::size_t i = 1; i < out.points.size(); ++i) {
    if (out.points[i].analytic_ettr > out.points[out.best_analytic].analytic_ettr) out.best_analytic = i;
  }
  return out;
}

}  // namespace

nlohmann::json sweep_shard_json(const EttrSweep& shard, std::size_t first_point, std::size_t points) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SweepPoint& p : shard.points) {
    rows.push_back({exact(p.value), exact(p.analytic_ettr), exact(p.analytic_e2e_s), exact(p.renewal_ettr),
                    exact(p.mc_ettr_mean), exact(p.mc_ettr_std_error), exact(p.mc_ettr_ci95[0]),
                    exact(p.mc_ettr_ci95[1]), exact(p.mc_ettr_pooled), exact(p.mc_e2e_mean_s), exact(p.mc_e2e_p90_s)});
  }
  return {{"kind", kKind},
          {"parameter", shard.parameter},
          {"points", points},
          {"first_point", first_point},
          {"rows", std::move(rows)}};
}

EttrSweep merge_sweep_shards(const std::vector<nlohmann::json>& shards) {
  try {
    return merge_checked(shards);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("a shard document is malformed: ") + e.what());
  }
}

}  // namespace mofasim::fault
