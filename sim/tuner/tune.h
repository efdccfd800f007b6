// Step-level and E2E tuning (MoFa §4, MoFa(42) MoFa(43) MoFa(44)): enumerate the configurations of one shard,
// drop what a constraint or an enabled pruning rule removes (counted per reason), drop what does
// not fit in memory, evaluate the rest with the evaluator, and rank the feasible ones by step
// time (or by T_total at the optimal checkpoint interval when E2E settings are given).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/tuner/e2e.h"
#include "sim/tuner/evaluator.h"
#include "sim/tuner/search_space.h"

namespace mofasim::tuner {

struct TuneStats {
  std::uint64_t raw_layouts = 0;       // layouts of the whole raw space (every shard)
  int feature_variants = 0;            // feature choices per layout
  std::uint64_t raw_configs = 0;       // raw_layouts * feature_variants
  std::uint64_t shard_layouts = 0;     // layouts this shard enumerated
  std::uint64_t shard_configs = 0;     // shard_layouts * feature_variants
  // Removed per reason: whole layouts (each worth feature_variants configurations) and
  // configurations. configs[r] = layouts[r] * feature_variants for layout reasons.
  std::array<std::uint64_t, kReasonCount> removed_layouts{};
  std::array<std::uint64_t, kReasonCount> removed_configs{};
  std::uint64_t memory_checks = 0;     // calls of Evaluator::memory
  std::uint64_t memory_pruned = 0;     // configurations out of memory, never evaluated
  std::uint64_t evaluated = 0;         // calls of Evaluator::step
  std::uint64_t infeasible_after_evaluation = 0;  // evaluated but out of memory (no memory check, or it disagreed)
  std::uint64_t feasible = 0;

  // shard_configs == sum(removed_configs) + memory_pruned + evaluated (checked by tune()).
  [[nodiscard]] std::uint64_t removed_total() const;
  [[nodiscard]] std::uint64_t infeasible_memory() const { return memory_pruned + infeasible_after_evaluation; }
  // Adds another shard's counts (raw_* and feature_variants must agree).
  void merge(const TuneStats& other);
};

struct Row {
  Candidate candidate;
  StepEvaluation step;
  std::optional<E2EEstimate> e2e;
  // What ranks: T_total with E2E settings, else the step time.
  [[nodiscard]] double objective() const { return e2e ? e2e->total_s : step.step_time_s; }
};

struct PrunedCandidate {
  Candidate candidate;
  Reason reason = Reason::kCount;
};

struct TuneResult {
  TuneStats stats;
  std::vector<Row> rows;              // every evaluated configuration, by candidate id
  std::vector<std::size_t> ranking;   // indices into rows of the feasible ones, best first
  std::vector<PrunedCandidate> pruned;  // with TuneOptions::keep_pruned: rule-removed ones, by id

  [[nodiscard]] const Row& ranked(std::size_t k) const { return rows[ranking[k]]; }
};

// Throws std::invalid_argument on an invalid problem or options (validate()), or when
// evaluator.step is empty.
TuneResult tune(const TuneProblem& problem, const TuneOptions& options, const Evaluator& evaluator);

// Orders feasible rows by (objective, candidate id) into result.ranking. tune() and the shard
// merge both use it, so ties break identically.
void rank_rows(TuneResult& result);

}  // namespace mofasim::tuner
