// A predicted step's breakdown as JSON, one key per kBreakdownFields entry (seconds), for every
// `validate --measured --json` row (open set and vTrain) and the --shard documents.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/analysis/step_prediction.h"

namespace mofasim::analysis {

inline nlohmann::json breakdown_json(const PredictedBreakdown& b) {
  nlohmann::json j = nlohmann::json::object();
  for (const BreakdownField& f : kBreakdownFields) j[f.name] = b.*f.seconds;
  return j;
}

}  // namespace mofasim::analysis
