// The tuner's enumeration: axes, feature decoding, layer splits, and the per-reason counts of a
// tiny space worked out by hand.
#include "sim/tuner/enumerate.h"

#include <gtest/gtest.h>

#include "model/memory.h"
#include "sim/tuner/tune.h"
#include "topology/placement.h"
#include "test/tuner/tuner_test_support.h"

namespace mofasim::tuner {
namespace {

using testing::tiny_problem;

TEST(TunerStageLayers, UniformSplitIsEmpty) { EXPECT_TRUE(stage_layers(126, 7, 2, LayerSplit::kUniform).empty()); }

TEST(TunerStageLayers, LlamaThreeSplitsWithLighterEnds) {
  // 126 layers over 8 stages: ceil(126/8) = 16, 8*16 - 126 = 2 lighter chunks, first and last.
  EXPECT_EQ(stage_layers(126, 8, 1, LayerSplit::kLighterEnds), (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  // 126 over 16 chunks (p 8, v 2): 8 each, 16*8 - 126 = 2 lighter.
  const std::vector<int> v2 = stage_layers(126, 8, 2, LayerSplit::kLighterEnds);
  ASSERT_EQ(v2.size(), 16u);
  EXPECT_EQ(v2.front(), 7);
  EXPECT_EQ(v2.back(), 7);
  EXPECT_EQ(v2[1], 8);
  // 125 over 8: 16*8 - 125 = 3 lighter chunks: not allowed.
  EXPECT_THROW(stage_layers(125, 8, 1, LayerSplit::kLighterEnds), std::invalid_argument);
  EXPECT_THROW(stage_layers(126, 8, 1, LayerSplit::kUniform), std::invalid_argument);
  // 63 over 2: 32 + 31, one lighter chunk (the first).
  EXPECT_EQ(stage_layers(63, 2, 1, LayerSplit::kLighterEnds), (std::vector<int>{31, 32}));
}

TEST(TunerFeatureDecoding, MixedRadixOptimizerOutermostDpInnermost) {
  FeatureSearch fs;  // 3 optimizers x 3 recompute x 2 offload x 2^5 overlaps
  EXPECT_EQ(feature_variants(fs), 3 * 3 * 2 * 32);
  const FeatureChoice first = decode_features(0, fs);
  EXPECT_FALSE(first.dp_overlap);
  EXPECT_EQ(first.optimizer, OptimizerMode::kGpu);
  EXPECT_TRUE(decode_features(1, fs).dp_overlap);     // digit 0 is DP overlap
  EXPECT_TRUE(decode_features(16, fs).tp_overlap);    // digit 4 (weight 2^4) is TP overlap
  EXPECT_TRUE(decode_features(32, fs).activation_offload);
  EXPECT_EQ(decode_features(64, fs).recompute, model::RecomputeKind::kSelective);
  const FeatureChoice last = decode_features(3 * 3 * 2 * 32 - 1, fs);
  EXPECT_EQ(last.optimizer, OptimizerMode::kCpu);
  EXPECT_EQ(last.recompute, model::RecomputeKind::kFull);
  EXPECT_TRUE(last.tp_overlap && last.cp_overlap && last.ep_overlap && last.pp_overlap && last.dp_overlap);
  fs.tp_overlap = Toggle::kOn;  // a fixed toggle is one value, not a digit
  fs.dp_overlap = Toggle::kOff;
  EXPECT_EQ(feature_variants(fs), 3 * 3 * 2 * 8);
  EXPECT_TRUE(decode_features(0, fs).tp_overlap);
  EXPECT_FALSE(decode_features(1, fs).dp_overlap);
  EXPECT_TRUE(decode_features(1, fs).pp_overlap);
}

// HSDP on a folded MoE layout. The tuner places experts with etp = 1, so a candidate t4 d2 e2 has
// the expert-DP group tp*cp*dp/(ep*etp) = 4*1*2/(2*1) = 4 (the placement's edp), not
// dp*cp/ep = 1. Two optimizer instances divide dp*cp = 2 and edp = 4: the tuner keeps them, and
// the memory model's shard groups are then 1 dense and 2 expert ranks. t1 d2 e2 has edp = 1, which
// 2 does not divide: that candidate shards over its whole DP group (1 instance).
TEST(TunerHsdp, ExpertDpSizeIsThePlacementsWithTheTunersEtp) {
  const TuneProblem problem = tiny_problem(8, 8, 8);
  const TuneOptions options;
  FeatureChoice distributed;
  distributed.optimizer = OptimizerMode::kDistributed;
  model::FeatureSpec base;
  base.dist_opt_instances = 2;
  const auto candidate = [](int tp, int ep, int dp) {
    Candidate c;
    c.layout.tp = tp;
    c.layout.ep = ep;
    c.layout.dp = dp;
    return c;
  };
  model::ParallelSpec parallel;
  to_parallel_spec(candidate(4, 2, 2), problem, options, parallel);
  EXPECT_EQ(parallel.etp, 1);
  const topology::ParallelSizes placed{.tp = 4, .cp = 1, .ep = 2, .dp = 2, .pp = 1, .etp = parallel.etp, .dist_opt_instances = 1};
  EXPECT_EQ(placed.expert_dp(), 4);
  const model::FeatureSpec kept = to_feature_spec(distributed, base, parallel);
  EXPECT_EQ(kept.dist_opt_instances, 2);
  const model::ShardGroups shards = model::hsdp_shard_groups(parallel, kept);
  EXPECT_EQ(shards.dense_dp, 1);
  EXPECT_EQ(shards.expert_dp, 2);
  to_parallel_spec(candidate(1, 2, 2), problem, options, parallel);
  EXPECT_EQ(to_feature_spec(distributed, base, parallel).dist_opt_instances, 1);
  // Without a sharded optimizer there is nothing to cut into instances.
  to_parallel_spec(candidate(4, 2, 2), problem, options, parallel);
  EXPECT_EQ(to_feature_spec(FeatureChoice{}, base, parallel).dist_opt_instances, 1);
}

TEST(TunerAxes, DefaultsAreDivisors) {
  const TuneProblem p = tiny_problem(8, 8, 12);
  TuneOptions o;
  o.space.max_micro_batch = 4;
  const Axes a = build_axes(p, o);
  EXPECT_EQ(a.tp, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(a.micro_batch, (std::vector<int>{1, 2, 3, 4}));  // divisors of 12 up to 4
  EXPECT_EQ(a.ep, (std::vector<int>{1}));                     // dense model
  ASSERT_EQ(a.schedule_vpp.size(), 1u + 7u);                  // 1F1B, interleaved v = 2..8
  // t·c·p·d = 8 with each a divisor: compositions of 2^3 into 4 factors = C(3+3, 3) = 20.
  EXPECT_EQ(factorisations(a, 8).size(), 20u);
}

TEST(TunerAxes, DivisorsOfLargeCountsAreFoundBySquareRoot) {
  // 2^31 - 1 is prime: two divisors (counting up to n took seconds and overflowed int at the end).
  const Axes prime = build_axes(tiny_problem(2147483647, 8, 12), TuneOptions{});
  EXPECT_EQ(prime.tp, (std::vector<int>{1, 2147483647}));
  // 36 = 6^2: the square root is listed once.
  const Axes square = build_axes(tiny_problem(36, 8, 12), TuneOptions{});
  EXPECT_EQ(square.pp, (std::vector<int>{1, 2, 3, 4, 6, 9, 12, 18, 36}));
  EXPECT_EQ(factorisations(prime, 2147483647).size(), 4u);  // the prime in one of the four places
}

// The hand-worked case (derivation in the comments): tiny-llama (a 8, g 4, L 4) on 8 GPUs, 2 per
// node, B 8; c = 1, b in {1, 2}, schedules 1F1B and interleaved with v = 2; TP and PP overlap
// searched, everything else fixed. Memory fits iff t·p >= 2.
TEST(TunerTuneCounts, TinySpaceCountsMatchTheHandDerivation) {
  const TuneProblem problem = tiny_problem(8, 2, 8);
  TuneOptions o;
  o.space.cp = {1};
  o.space.micro_batch = {1, 2};
  o.space.max_vpp = 2;
  o.features = FeatureSearch{.tp_overlap = Toggle::kSearch,
                             .cp_overlap = Toggle::kOff,
                             .ep_overlap = Toggle::kOff,
                             .pp_overlap = Toggle::kSearch,
                             .dp_overlap = Toggle::kOff,
                             .activation_offload = Toggle::kOff,
                             .recompute = {model::RecomputeKind::kNone},
                             .optimizer = {OptimizerMode::kGpu}};
  Evaluator ev;
  ev.memory = [](const ConfigView& v) {
    return MemoryVerdict{.peak_memory_bytes = 0, .fits = v.parallel.tp * v.parallel.pp >= 2};
  };
  ev.step = [](const ConfigView& v) { return testing::synthetic_step(v); };
  const TuneResult r = tune(problem, o, ev);
  const TuneStats& s = r.stats;
  auto layouts = [&s](Reason x) { return s.removed_layouts[static_cast<std::size_t>(x)]; };
  auto configs = [&s](Reason x) { return s.removed_configs[static_cast<std::size_t>(x)]; };
  // (t, p, d) with t·p·d = 8: t=1: p 1,2,4,8; t=2: p 1,2,4; t=4: p 1,2; t=8: p 1 -> 10,
  // times 2 (schedule, v) times 1 (e) times 2 (b) = 40 layouts; 2 x 2 feature variants each.
  EXPECT_EQ(s.raw_layouts, 40u);
  EXPECT_EQ(s.feature_variants, 4);
  EXPECT_EQ(s.raw_configs, 160u);
  // t = 8 does not divide g = 4: the one factorisation's 4 layouts.
  EXPECT_EQ(layouts(Reason::kTpDividesHeads), 4u);
  EXPECT_EQ(configs(Reason::kTpDividesHeads), 16u);
  // 4 layers over p·v chunks: p = 8 (both schedules, 2 b: 4) and p = 4 interleaved (t 1 and 2, 2 b: 4).
  EXPECT_EQ(layouts(Reason::kLayerSplit), 8u);
  EXPECT_EQ(layouts(Reason::kExpertPlacement), 0u);
  // B % (b·d): only d = 8 (t 1, p 1) with b = 2, both schedules.
  EXPECT_EQ(layouts(Reason::kBatchDivides), 2u);
  // Interleaved needs m % p == 0: t1 p2 d4 b2 has m = 1.
  EXPECT_EQ(layouts(Reason::kScheduleShape), 1u);
  // t = 4 > 2 GPUs per node: t4 p1 d2 and t4 p2 d1, 2 schedules x 2 b.
  EXPECT_EQ(layouts(Reason::kTpWithinNode), 8u);
  // m < p: t1 p2 d4 b2 (m 1) and t1 p4 d2 b2 (m 2), 1F1B.
  EXPECT_EQ(layouts(Reason::kMicrobatchesCoverPipeline), 2u);
  // Interleaved at p = 1: t1 p1 d8 b1, t2 p1 d4 b1 and b2.
  EXPECT_EQ(layouts(Reason::kVppNeedsPipeline), 3u);
  EXPECT_EQ(layouts(Reason::kCpNeedsLongSequence), 0u);
  // 40 - (4+8+2+1+8+2+3) = 12 layouts remain, 48 configurations. Per layout (TP-ov, PP-ov):
  //   t1 p1 (1 layout): inert TP-on (2) and PP-on (1) = 3, keeps off/off;
  //   t1 p>1 (3 layouts): inert TP-on 2, dominated PP-off 1, keeps off/on;
  //   t2 p1 (2 layouts): inert PP-on 2, dominated TP-off 1;
  //   t2 p>1 (6 layouts): dominated: the three with an overlap off.
  EXPECT_EQ(configs(Reason::kInertFeature), 3u + 3 * 2 + 2 * 2);
  EXPECT_EQ(configs(Reason::kOverlapDominates), 3u * 1 + 2 * 1 + 6 * 3);
  EXPECT_EQ(configs(Reason::kMemorySaverNotNeeded), 0u);
  // One configuration per layout is left; t1 p1 does not fit.
  EXPECT_EQ(s.memory_checks, 12u);
  EXPECT_EQ(s.memory_pruned, 1u);
  EXPECT_EQ(s.evaluated, 11u);
  EXPECT_EQ(s.feasible, 11u);
  EXPECT_EQ(r.rows.size(), 11u);
  EXPECT_EQ(r.ranking.size(), 11u);
}

TEST(TunerTuneCounts, ConstraintsStayWhenEveryRuleIsOff) {
  const TuneProblem problem = tiny_problem(8, 2, 8);
  TuneOptions o;
  o.space.cp = {1};
  o.space.micro_batch = {1, 2};
  o.space.max_vpp = 2;
  o.rules = PruneRules::none();
  o.features = FeatureSearch{.tp_overlap = Toggle::kSearch, .cp_overlap = Toggle::kOff, .ep_overlap = Toggle::kOff,
                             .pp_overlap = Toggle::kSearch, .dp_overlap = Toggle::kOff,
                             .activation_offload = Toggle::kOff, .recompute = {model::RecomputeKind::kNone},
                             .optimizer = {OptimizerMode::kGpu}};
  Evaluator ev;
  ev.step = [](const ConfigView& v) { return testing::synthetic_step(v); };
  const TuneResult r = tune(problem, o, ev);
  // Same constraint counts as above (4 + 8 + 2 + 1 = 15 layouts), plus the interleaved layouts at
  // p = 1, which the step simulation cannot run, as schedule-shape constraints: t1 p1 d8 b1, t2 p1
  // d4 b1 and b2, t4 p1 d2 b1 and b2 (5; t1 p1 d8 b2 already fails B % (b d)). The 20 others, x 4
  // variants, are all evaluated (no memory check given).
  EXPECT_EQ(r.stats.removed_layouts[static_cast<std::size_t>(Reason::kScheduleShape)], 1u + 5);
  EXPECT_EQ(r.stats.removed_total(), 20u * 4);
  EXPECT_EQ(r.stats.evaluated, 20u * 4);
  EXPECT_EQ(r.stats.memory_checks, 0u);
  for (const Row& row : r.rows) {
    EXPECT_FALSE(row.candidate.layout.schedule == model::ScheduleKind::kInterleaved1F1B && row.candidate.layout.pp == 1)
        << layout_label(row.candidate.layout);
  }
}

TEST(TunerTuneValidation, BadInputsNameTheField) {
  const TuneProblem problem = tiny_problem(8, 2, 8);
  Evaluator ev;
  ev.step = [](const ConfigView& v) { return testing::synthetic_step(v); };
  TuneOptions o;
  o.shard = Shard{.index = 3, .count = 3};
  EXPECT_THROW(tune(problem, o, ev), std::invalid_argument);
  o = TuneOptions{};
  o.space.tp = {0};
  EXPECT_THROW(tune(problem, o, ev), std::invalid_argument);
  o = TuneOptions{};
  o.features.optimizer.clear();
  EXPECT_THROW(tune(problem, o, ev), std::invalid_argument);
  EXPECT_THROW(tune(problem, TuneOptions{}, Evaluator{}), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::tuner
