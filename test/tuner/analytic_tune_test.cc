// The tuner on the analytic MoFa model, small spaces (tiny-llama on 8 and 16 GPUs): the pruned
// search finds the brute-force best; every configuration a pruning rule removes is infeasible or
// no faster than what the search keeps (each removal evaluated); the memory pre-check agrees with
// the model's own verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "sim/tuner/analytic_evaluator.h"
#include "sim/tuner/report.h"
#include "sim/tuner/rerank.h"
#include "sim/tuner/simulated_evaluator.h"
#include "sim/tuner/tune.h"
#include "test/tuner/tuner_test_support.h"

namespace mofasim::tuner {
namespace {

// tiny-llama's 4 KV heads cap t at 4, so the TP-within-node rule acts only with 2 GPUs per node
// (the 16-GPU case). Capacity chosen so that some layouts do not fit: tiny-llama holds ~4.2M parameters
// (18 B each with the GPU optimizer: ~76 MB on one GPU).
TuneProblem small_problem(int gpus, int gpus_per_node, int global_batch, double capacity_bytes) {
  TuneProblem p = testing::tiny_problem(gpus, gpus_per_node, global_batch);
  p.hardware.gpu_memory_bytes = capacity_bytes;
  return p;
}

TuneOptions search_options() {
  TuneOptions o;
  o.space.max_vpp = 2;
  o.space.max_micro_batch = 4;
  o.space.schedules = {model::ScheduleKind::k1F1B, model::ScheduleKind::kInterleaved1F1B,
                       model::ScheduleKind::kZbH1};
  return o;
}

struct Case {
  int gpus;
  int gpus_per_node;
  int global_batch;
  double capacity;
};

class TunerOnAnalytic : public ::testing::TestWithParam<Case> {};

TEST_P(TunerOnAnalytic, PrunedSearchFindsTheBruteForceBest) {
  const Case c = GetParam();
  const TuneProblem problem = small_problem(c.gpus, c.gpus_per_node, c.global_batch, c.capacity);
  const Evaluator ev = analytic_evaluator(problem);
  TuneOptions pruned = search_options();
  TuneOptions brute = search_options();
  brute.rules = PruneRules::none();
  const TuneResult a = tune(problem, pruned, ev);
  const TuneResult b = tune(problem, brute, ev);
  ASSERT_FALSE(b.ranking.empty());
  ASSERT_FALSE(a.ranking.empty());
  EXPECT_LT(a.stats.evaluated, b.stats.evaluated);
  EXPECT_GT(b.stats.infeasible_memory(), 0u) << "capacity should make some layouts infeasible";
  // Same best step time; the configuration may differ only by an inert twin (same time).
  EXPECT_EQ(a.ranked(0).step.step_time_s, b.ranked(0).step.step_time_s)
      << "pruned best " << layout_label(a.ranked(0).candidate.layout) << " "
      << feature_label(a.ranked(0).candidate.features) << " vs brute force "
      << layout_label(b.ranked(0).candidate.layout) << " " << feature_label(b.ranked(0).candidate.features);
}

TEST_P(TunerOnAnalytic, EveryRuleRemovesOnlyInfeasibleOrNoFasterConfigurations) {
  const Case c = GetParam();
  const TuneProblem problem = small_problem(c.gpus, c.gpus_per_node, c.global_batch, c.capacity);
  const Evaluator ev = analytic_evaluator(problem);
  TuneOptions o = search_options();
  o.keep_pruned = true;
  const TuneResult r = tune(problem, o, ev);
  ASSERT_FALSE(r.ranking.empty());
  const double best = r.ranked(0).step.step_time_s;
  // Evaluated rows by id, to find the twins the feature rules compare against.
  std::map<std::uint64_t, const Row*> by_id;
  for (const Row& row : r.rows) by_id[row.candidate.id] = &row;
  std::map<Reason, int> checked;
  model::ParallelSpec parallel;
  for (const PrunedCandidate& p : r.pruned) {
    to_parallel_spec(p.candidate, problem, o, parallel);
    const model::FeatureSpec f = to_feature_spec(p.candidate.features, problem.base_features);
    const StepEvaluation e = ev.step(ConfigView{.candidate = p.candidate, .parallel = parallel, .features = f});
    checked[p.reason] += 1;
    const std::string what = std::string(to_string(p.reason)) + ": " + layout_label(p.candidate.layout) + " " +
                             feature_label(p.candidate.features);
    if (!e.fits) continue;  // infeasible: removing it loses nothing
    EXPECT_GE(e.step_time_s, best * (1 - 1e-12)) << what;
    if (p.reason == Reason::kInertFeature) {
      // The twin with the inert feature switched off takes exactly as long.
      FeatureChoice twin = p.candidate.features;
      const Layout& l = p.candidate.layout;
      if (l.tp == 1) twin.tp_overlap = false;
      if (l.cp == 1) twin.cp_overlap = false;
      if (l.pp == 1) twin.pp_overlap = false;
      twin.ep_overlap = false;  // dense model
      if (l.dp * l.cp == 1) {
        twin.dp_overlap = false;
        if (twin.optimizer == OptimizerMode::kDistributed) twin.optimizer = OptimizerMode::kGpu;
      }
      Candidate tc{.layout = l, .features = twin, .id = 0};
      const model::FeatureSpec tf = to_feature_spec(twin, problem.base_features);
      const StepEvaluation te = ev.step(ConfigView{.candidate = tc, .parallel = parallel, .features = tf});
      EXPECT_DOUBLE_EQ(e.step_time_s, te.step_time_s) << what;
    }
    if (p.reason == Reason::kOverlapDominates) {
      // Every overlap with something to hide switched on is no slower.
      const Layout& l = p.candidate.layout;
      FeatureChoice on = p.candidate.features;
      on.tp_overlap = on.tp_overlap || l.tp > 1;
      on.cp_overlap = on.cp_overlap || l.cp > 1;
      on.pp_overlap = on.pp_overlap || l.pp > 1;
      on.dp_overlap = on.dp_overlap || l.dp * l.cp > 1;
      Candidate oc{.layout = p.candidate.layout, .features = on, .id = 0};
      const model::FeatureSpec of = to_feature_spec(on, problem.base_features);
      const StepEvaluation oe = ev.step(ConfigView{.candidate = oc, .parallel = parallel, .features = of});
      EXPECT_LE(oe.step_time_s, e.step_time_s * (1 + 1e-12)) << what;
    }
  }
  // Every rule had something to remove in this space, so each claim above was exercised.
  for (Reason rule : {Reason::kMicrobatchesCoverPipeline, Reason::kVppNeedsPipeline,
                      Reason::kCpNeedsLongSequence, Reason::kInertFeature, Reason::kOverlapDominates,
                      Reason::kMemorySaverNotNeeded}) {
    EXPECT_GT(checked[rule], 0) << to_string(rule);
  }
  if (c.gpus_per_node < 4) {
    EXPECT_GT(checked[Reason::kTpWithinNode], 0);
  }
}

TEST_P(TunerOnAnalytic, MemoryPrecheckAgreesWithTheModel) {
  const Case c = GetParam();
  const TuneProblem problem = small_problem(c.gpus, c.gpus_per_node, c.global_batch, c.capacity);
  const Evaluator ev = analytic_evaluator(problem);
  Evaluator step_only;
  step_only.step = ev.step;
  TuneOptions o = search_options();
  o.rules = PruneRules::none();
  const TuneResult r = tune(problem, o, step_only);  // evaluates everything, OOM included
  model::ParallelSpec parallel;
  int fits = 0;
  int misses = 0;
  for (const Row& row : r.rows) {
    to_parallel_spec(row.candidate, problem, o, parallel);
    const model::FeatureSpec f = to_feature_spec(row.candidate.features, problem.base_features);
    const MemoryVerdict m = ev.memory(ConfigView{.candidate = row.candidate, .parallel = parallel, .features = f});
    EXPECT_EQ(m.fits, row.step.fits);
    EXPECT_DOUBLE_EQ(m.peak_memory_bytes, row.step.peak_memory_bytes);
    (m.fits ? fits : misses) += 1;
  }
  EXPECT_GT(fits, 0);
  EXPECT_GT(misses, 0);
}

// Re-ranking the analytic top 6 by the folded step simulation: every entry is simulated once, the
// simulated ranks are a permutation of 1..6 ordered by simulated step time. (How far the two
// models agree is the validation suite's business; on this millisecond-step toy they differ by
// up to a third, which is why re-ranking exists.)
TEST_P(TunerOnAnalytic, RerankBySimulation) {
  const Case c = GetParam();
  const TuneProblem problem = small_problem(c.gpus, c.gpus_per_node, c.global_batch, c.capacity);
  TuneOptions o = search_options();
  const TuneResult r = tune(problem, o, analytic_evaluator(problem));
  ASSERT_GE(r.ranking.size(), 6u);
  const RerankResult rr = rerank(r, problem, o, 6, simulated_step(problem));
  ASSERT_EQ(rr.entries.size(), 6u);
  std::vector<int> analytic_ranks;
  for (std::size_t k = 0; k < rr.entries.size(); ++k) {
    const RerankEntry& e = rr.entries[k];
    EXPECT_EQ(e.simulated_rank, static_cast<int>(k) + 1);
    analytic_ranks.push_back(e.analytic_rank);
    EXPECT_GT(e.simulated.step_time_s, 0);
    if (k > 0 && e.simulated.fits) {
      EXPECT_LE(rr.entries[k - 1].simulated.step_time_s, e.simulated.step_time_s);
    }
  }
  std::sort(analytic_ranks.begin(), analytic_ranks.end());
  EXPECT_EQ(analytic_ranks, (std::vector<int>{1, 2, 3, 4, 5, 6}));
  std::printf("%s", format_rerank(r, rr).c_str());
}

// The tuner's feasibility is the memory model's reserved total (model/memory_reserve.h): with the
// lazy CUDA context (287,047,680 B) a candidate allocating A needs A + context under expandable
// segments and A / 0.85 + context under the caching allocator; a capacity one byte above the first
// admits it only with expandable segments.
TEST(AnalyticMemoryVerdict, IsJudgedOnTheReservedTotal) {
  TuneProblem problem = small_problem(8, 8, 16, 60e6);
  TuneOptions o = search_options();
  o.rules = PruneRules::none();
  Evaluator step_only;
  step_only.step = analytic_evaluator(problem).step;
  const TuneResult r = tune(problem, o, step_only);
  ASSERT_FALSE(r.rows.empty());
  model::ParallelSpec parallel;
  to_parallel_spec(r.rows.front().candidate, problem, o, parallel);
  const ConfigView view{.candidate = r.rows.front().candidate,
                        .parallel = parallel,
                        .features = to_feature_spec(r.rows.front().candidate.features, problem.base_features)};
  const double allocated = analytic_memory(problem, view).peak_memory_bytes;  // context 0, no fragmentation
  problem.hardware.cuda_context_bytes = 287'047'680;
  problem.hardware.gpu_memory_bytes = allocated + 287'047'680 + 1;
  const MemoryVerdict expandable = analytic_memory(problem, view);
  EXPECT_DOUBLE_EQ(expandable.peak_memory_bytes, allocated + 287'047'680);
  EXPECT_TRUE(expandable.fits);
  problem.hardware.allocator = model::AllocatorKind::kCaching;
  const MemoryVerdict caching = analytic_memory(problem, view);
  EXPECT_DOUBLE_EQ(caching.peak_memory_bytes, allocated / 0.85 + 287'047'680);
  EXPECT_FALSE(caching.fits);
}

INSTANTIATE_TEST_SUITE_P(Tiny, TunerOnAnalytic,
                         ::testing::Values(Case{.gpus = 8, .gpus_per_node = 8, .global_batch = 16, .capacity = 60e6},
                                           Case{.gpus = 16, .gpus_per_node = 2, .global_batch = 32, .capacity = 40e6}));

}  // namespace
}  // namespace mofasim::tuner
