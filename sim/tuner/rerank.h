// Re-ranking the analytic model's best N with the step simulation (folded fidelity): the
// simulation is passed in as a StepFn (simulated_evaluator.h binds the executor; tests pass their
// own), each of the top N is simulated once, and the two orders are compared.
#pragma once

#include <string>
#include <vector>

#include "sim/tuner/evaluator.h"
#include "sim/tuner/tune.h"

namespace mofasim::tuner {

struct RerankEntry {
  std::size_t row = 0;         // index into TuneResult::rows
  int analytic_rank = 0;       // 1-based position in the analytic ranking
  int simulated_rank = 0;      // 1-based position among the re-ranked N
  StepEvaluation simulated;
  std::optional<E2EEstimate> simulated_e2e;  // with E2E settings: MoFa(43) MoFa(44) on the simulated step
  [[nodiscard]] double objective() const { return simulated_e2e ? simulated_e2e->total_s : simulated.step_time_s; }
};

struct RerankResult {
  std::vector<RerankEntry> entries;  // in simulated order, best first (infeasible ones last)
  int moved = 0;                     // entries whose simulated rank differs from the analytic one
};

// Simulates the best min(top_n, ranking size) configurations of `result`. Ties (and infeasible
// simulations, ranked last) break by analytic rank. Throws std::invalid_argument when top_n < 1
// or `simulate` is empty.
RerankResult rerank(const TuneResult& result, const TuneProblem& problem, const TuneOptions& options, int top_n,
                    const StepFn& simulate);

// One line per entry: simulated rank, analytic rank, the move ("=", "+2", "-1"), layout and
// features, analytic and simulated step time and their relative difference; with E2E settings
// also the analytic and the re-computed (simulated-step) end-to-end time in days, and the
// simulated step's optimal interval and ETTR.
std::string format_rerank(const TuneResult& result, const RerankResult& rerank);

}  // namespace mofasim::tuner
