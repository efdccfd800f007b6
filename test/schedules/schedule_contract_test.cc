// One contract suite over every ScheduleKind and several (p, m, v): the per-stage op lists are
// complete and ordered, and the evaluator's timeline honours every cross-stage dependency.
// The checks below re-derive the rules from schedule.h instead of calling validate(). 1F1B and
// interleaved 1F1B run both as planned and as their EP-overlap variant (pair_steady_passes).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "schedules/evaluate.h"
#include "schedules/factory.h"

namespace mofasim::schedules {
namespace {

struct Case {
  ScheduleKind kind;
  PipelineShape shape;
};

std::string label(const Case& c) {
  std::string kind = to_string(c.kind);
  for (char& ch : kind) {
    if (ch == '-') ch = '_';
  }
  std::string name = kind + "_p" + std::to_string(c.shape.stages) + "_m" + std::to_string(c.shape.microbatches);
  if (c.kind == ScheduleKind::kInterleaved1F1B) name += "_v" + std::to_string(c.shape.chunks);
  if (c.shape.pair_steady_passes) name += "_paired";
  return name;
}

std::string name_of(const ::testing::TestParamInfo<Case>& info) { return label(info.param); }

void PrintTo(const Case& c, std::ostream* os) { *os << label(c); }

bool supported(ScheduleKind kind, const PipelineShape& s) {
  switch (kind) {
    case ScheduleKind::kInterleaved1F1B: return s.chunks >= 2 && s.microbatches % s.stages == 0;
    case ScheduleKind::kDualPipe: return s.stages % 2 == 0 && s.microbatches % 2 == 0 && s.microbatches >= 2 * s.stages;
    default: return true;
  }
}

std::vector<Case> all_cases() {
  const std::vector<PipelineShape> shapes = {
      {.stages = 1, .microbatches = 3, .chunks = 2},  {.stages = 2, .microbatches = 4, .chunks = 2},
      {.stages = 4, .microbatches = 2, .chunks = 2},  {.stages = 4, .microbatches = 8, .chunks = 2},
      {.stages = 4, .microbatches = 16, .chunks = 3}, {.stages = 6, .microbatches = 12, .chunks = 2},
      {.stages = 8, .microbatches = 16, .chunks = 4}, {.stages = 8, .microbatches = 64, .chunks = 5},
      {.stages = 5, .microbatches = 7, .chunks = 2},
  };
  std::vector<Case> cases;
  for (ScheduleKind kind : {ScheduleKind::kGpipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved1F1B,
                            ScheduleKind::kZbH1, ScheduleKind::kDualPipe}) {
    for (PipelineShape s : shapes) {
      if (!supported(kind, s)) continue;
      if (kind != ScheduleKind::kInterleaved1F1B) s.chunks = 1;  // ignored by the other kinds
      const bool duplicate = std::any_of(cases.begin(), cases.end(), [&](const Case& c) {
        return c.kind == kind && c.shape.stages == s.stages && c.shape.microbatches == s.microbatches &&
               c.shape.chunks == s.chunks;
      });
      if (duplicate) continue;
      cases.push_back({kind, s});
      if (kind == ScheduleKind::k1F1B || kind == ScheduleKind::kInterleaved1F1B) {
        s.pair_steady_passes = true;
        cases.push_back({kind, s});
      }
    }
  }
  return cases;
}

class ScheduleContract : public ::testing::TestWithParam<Case> {
 protected:
  Schedule schedule_ = build_schedule(GetParam().kind, GetParam().shape);
};

// Each (micro-batch, chunk of its lane) appears on every stage as exactly one F followed by
// either one full B or one Bi and later one W; nothing for chunks of the other lane.
TEST_P(ScheduleContract, EachPassRunsOnceForwardBeforeBackwardBeforeWeight) {
  const Schedule& s = schedule_;
  for (int stage = 0; stage < s.stages(); ++stage) {
    // (mb, chunk) -> positions of F, B, Bi, W in the stage's list.
    std::map<std::pair<std::uint32_t, int>, std::vector<std::pair<Phase, std::size_t>>> seen;
    const auto ops = s.ops(stage);
    for (std::size_t i = 0; i < ops.size(); ++i) seen[{ops[i].microbatch, ops[i].chunk}].push_back({ops[i].phase, i});
    for (std::uint32_t mb = 0; mb < static_cast<std::uint32_t>(s.microbatches()); ++mb) {
      for (int c = 0; c < s.chunks(); ++c) {
        const auto it = seen.find({mb, c});
        const bool on_lane = s.slot(stage, c).lane == s.lane_of(mb);
        if (!on_lane) {
          EXPECT_EQ(it, seen.end()) << "stage " << stage << " runs mb " << mb << " on foreign chunk " << c;
          continue;
        }
        ASSERT_NE(it, seen.end()) << "stage " << stage << " never runs mb " << mb << " chunk " << c;
        const auto& passes = it->second;
        ASSERT_GE(passes.size(), 2u);
        EXPECT_EQ(passes[0].first, Phase::kForward) << "stage " << stage << " mb " << mb << " chunk " << c;
        if (passes[1].first == Phase::kBackward) {
          EXPECT_EQ(passes.size(), 2u);
        } else {
          ASSERT_EQ(passes.size(), 3u) << "stage " << stage << " mb " << mb << " chunk " << c;
          EXPECT_EQ(passes[1].first, Phase::kInputGrad);
          EXPECT_EQ(passes[2].first, Phase::kWeightGrad);
        }
        for (std::size_t k = 1; k < passes.size(); ++k) EXPECT_LT(passes[k - 1].second, passes[k].second);
      }
    }
  }
}

// Every chunk's micro-batch count matches m, so each stage runs m·v forwards in total (DualPipe:
// m/2 per lane on each of its two chunks).
TEST_P(ScheduleContract, EveryStageRunsAllItsForwards) {
  const Schedule& s = schedule_;
  const int expected = s.kind() == ScheduleKind::kDualPipe ? s.microbatches() : s.microbatches() * s.chunks();
  for (int stage = 0; stage < s.stages(); ++stage) {
    int forwards = 0;
    for (const Op& op : s.ops(stage)) forwards += op.phase == Phase::kForward ? 1 : 0;
    EXPECT_EQ(forwards, expected) << "stage " << stage;
  }
}

// The replay finishes (no deadlock), and every op starts no earlier than its stage predecessor
// ends and its cross-stage input (F of the previous virtual stage, B of the next) ends.
TEST_P(ScheduleContract, ReplayHonoursStageOrderAndCrossStageDependencies) {
  const Schedule& s = schedule_;
  // Distinct costs per phase so an ordering slip cannot hide behind equal numbers.
  const PassCosts costs{.forward = Duration{3}, .input_grad = Duration{5}, .weight_grad = Duration{2}};
  EvaluateResult r;
  ASSERT_NO_THROW(r = evaluate(s, CostTable::uniform(s.stages(), s.chunks(), costs), {.record_op_times = true}));

  // End time of each (mb, lane position, is_backward).
  std::map<std::tuple<std::uint32_t, std::uint32_t, bool>, Time> end;
  for (int stage = 0; stage < s.stages(); ++stage) {
    const auto ops = s.ops(stage);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.phase == Phase::kWeightGrad) continue;
      end[{op.microbatch, s.slot(stage, op.chunk).position, op.phase != Phase::kForward}] = r.op_end[stage][i];
    }
  }
  const auto last = static_cast<std::uint32_t>(s.positions_per_lane() - 1);
  Duration busy_expected{};
  for (int stage = 0; stage < s.stages(); ++stage) {
    const auto ops = s.ops(stage);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const std::uint32_t pos = s.slot(stage, op.chunk).position;
      if (i > 0) {
        EXPECT_GE(r.op_start[stage][i], r.op_end[stage][i - 1]) << "stage " << stage << " op " << i;
      }
      if (op.phase == Phase::kForward && pos > 0) {
        EXPECT_GE(r.op_start[stage][i], (end.at({op.microbatch, pos - 1, false})));
      }
      if ((op.phase == Phase::kBackward || op.phase == Phase::kInputGrad) && pos < last) {
        EXPECT_GE(r.op_start[stage][i], (end.at({op.microbatch, pos + 1, true})));
      }
      busy_expected += r.op_end[stage][i] - r.op_start[stage][i];
    }
  }
  // Busy time: each stage runs its passes once, so total busy = ops' durations = m·v·(F + Bi + W)
  // per stage, m·(F + Bi + W) for DualPipe's two half-lanes.
  const int passes_per_stage = s.kind() == ScheduleKind::kDualPipe ? s.microbatches() : s.microbatches() * s.chunks();
  for (const StageStats& st : r.stages) EXPECT_EQ(st.busy, passes_per_stage * Duration{3 + 5 + 2});
  EXPECT_EQ(busy_expected, s.stages() * passes_per_stage * Duration{3 + 5 + 2});
}

// Overlapped pairs (Op::overlaps_next) are a forward followed by a backward of another pass, and
// only where the schedule pairs: DualPipe, and the steady state of the paired 1F1B variants, which
// pair every forward after the warm-up: max(0, m·v − w_s) per stage with w_s = 2(p − s) − 1 for
// 1F1B and 2(p − s − 1) + (v − 1)·p + 1 for interleaved (one_f_one_b.h, interleaved_1f1b.h).
TEST_P(ScheduleContract, OverlappedPairsAreForwardThenBackwardOfAnotherPass) {
  const Schedule& s = schedule_;
  const bool paired_1f1b = GetParam().shape.pair_steady_passes;  // only 1F1B kinds get the flag
  EXPECT_EQ(s.pair_steady_passes(), paired_1f1b);
  for (int stage = 0; stage < s.stages(); ++stage) {
    const auto ops = s.ops(stage);
    int pairs = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!ops[i].overlaps_next) continue;
      ++pairs;
      ASSERT_LT(i + 1, ops.size()) << "stage " << stage << ": the last op cannot open a pair";
      EXPECT_EQ(ops[i].phase, Phase::kForward) << "stage " << stage << " op " << i;
      EXPECT_NE(ops[i + 1].phase, Phase::kForward) << "stage " << stage << " op " << i + 1;
      EXPECT_FALSE(ops[i + 1].overlaps_next) << "stage " << stage << ": pairs do not chain";
      EXPECT_FALSE(ops[i].microbatch == ops[i + 1].microbatch && ops[i].chunk == ops[i + 1].chunk)
          << "stage " << stage << " pairs a pass with itself";
    }
    if (s.kind() == ScheduleKind::kDualPipe) continue;
    const int p = s.stages();
    const int total = s.microbatches() * s.chunks();
    const int warmup = s.kind() == ScheduleKind::k1F1B ? 2 * (p - stage) - 1
                                                        : 2 * (p - stage - 1) + (s.chunks() - 1) * p + 1;
    const int expected = paired_1f1b ? std::max(0, total - warmup) : 0;
    EXPECT_EQ(pairs, expected) << "stage " << stage;
  }
}

// The evaluator's peak count of held forward activations equals the schedule's closed form.
TEST_P(ScheduleContract, PeakActivationsMatchClosedForm) {
  const Schedule& s = schedule_;
  const auto r = evaluate(s, CostTable::uniform(s.stages(), s.chunks(), {.forward = Duration{1},
                                                                         .input_grad = Duration{1},
                                                                         .weight_grad = Duration{1}}));
  for (int stage = 0; stage < s.stages(); ++stage) {
    EXPECT_EQ(r.stages[stage].peak_activations, in_flight_chunks(s.kind(), GetParam().shape, stage))
        << "stage " << stage;
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, ScheduleContract, ::testing::ValuesIn(all_cases()), name_of);

}  // namespace
}  // namespace mofasim::schedules
