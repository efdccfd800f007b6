// Re-ranking by the step simulation (see rerank.h).
#include "sim/tuner/rerank.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "sim/units/format.h"

namespace mofasim::tuner {

RerankResult rerank(const TuneResult& result, const TuneProblem& problem, const TuneOptions& options, int top_n,
                    const StepFn& simulate) {
  if (top_n < 1) throw std::invalid_argument("rerank: top_n must be >= 1, got " + std::to_string(top_n));
  if (!simulate) throw std::invalid_argument("rerank: no simulation function given");
  RerankResult out;
  const std::size_t n = std::min(result.ranking.size(), static_cast<std::size_t>(top_n));
  model::ParallelSpec parallel;
  for (std::size_t k = 0; k < n; ++k) {
    const Row& row = result.ranked(k);
    to_parallel_spec(row.candidate, problem, options, parallel);
    const model::FeatureSpec features = to_feature_spec(row.candidate.features, problem.base_features, parallel);
    RerankEntry e;
    e.row = result.ranking[k];
    e.analytic_rank = static_cast<int>(k) + 1;
    e.simulated = simulate(ConfigView{.candidate = row.candidate, .parallel = parallel, .features = features});
    if (options.e2e && e.simulated.fits) {
      e.simulated_e2e = estimate_e2e(*options.e2e, row.candidate.layout, e.simulated.step_time_s, problem.topology);
    }
    out.entries.push_back(e);
  }
  std::stable_sort(out.entries.begin(), out.entries.end(), [](const RerankEntry& a, const RerankEntry& b) {
    if (a.simulated.fits != b.simulated.fits) return a.simulated.fits;
    if (a.simulated.fits && a.objective() != b.objective()) return a.objective() < b.objective();
    return a.analytic_rank < b.analytic_rank;
  });
  for (std::size_t k = 0; k < out.entries.size(); ++k) {
    out.entries[k].simulated_rank = static_cast<int>(k) + 1;
    if (out.entries[k].simulated_rank != out.entries[k].analytic_rank) ++out.moved;
  }
  return out;
}

std::string format_rerank(const TuneResult& result, const RerankResult& rerank) {
  // With E2E settings the re-rank orders by the end-to-end time recomputed from the simulated
  // step (MoFa(43) MoFa(44) again: a different step gives a different optimal interval), so that is
  // what is shown beside the analytic value, with the simulated ETTR.
  bool e2e = false;
  for (const RerankEntry& e : rerank.entries) e2e = e2e || e.simulated_e2e.has_value();
  std::string out = "sim analytic  move  layout                                   features                                    analytic_s  simulated_s   diff";
  if (e2e) out += "    analytic_E2E   simulated_E2E  sim_N_ckpt sim_ETTR";
  out += '\n';
  for (const RerankEntry& e : rerank.entries) {
    const Row& row = result.rows[e.row];
    const int move = e.analytic_rank - e.simulated_rank;
    const std::string moved = move == 0 ? "=" : (move > 0 ? "+" : "") + std::to_string(move);
    const double diff = row.step.step_time_s > 0
                            ? (e.simulated.step_time_s - row.step.step_time_s) / row.step.step_time_s * 100
                            : 0;
    std::array<char, 512> buf{};
    std::snprintf(buf.data(), buf.size(), "%3d %8d %5s  %-40s %-43s %10.4g %12.4g %+6.1f%%", e.simulated_rank,
                  e.analytic_rank, moved.c_str(), layout_label(row.candidate.layout).c_str(),
                  feature_label(row.candidate.features).c_str(), row.step.step_time_s, e.simulated.step_time_s, diff);
    out += buf.data();
    if (e2e && e.simulated_e2e) {
      std::snprintf(buf.data(), buf.size(), "  %14s %15s %11lld %7.2f%%",
                    row.e2e ? format_duration(row.e2e->total_s).c_str() : "-",
                    format_duration(e.simulated_e2e->total_s).c_str(), static_cast<long long>(e.simulated_e2e->interval_steps),
                    100 * e.simulated_e2e->ettr);
      out += buf.data();
    }
    if (!e.simulated.fits) out += "  (out of memory in simulation)";
    out += '\n';
  }
  return out;
}

}  // namespace mofasim::tuner
