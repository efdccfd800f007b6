// The points of `mofasim sweep` (sim/cli/sweep_points.h): an over-budget point is refused, with
// the event budget's located error, before fail-slow's pricing simulates anything; points within
// their budget are priced once each.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/cli/sweep_points.h"
#include "sim/scenario/diagnostics.h"

namespace mofasim::cli {
namespace {

const std::string kSmall = std::string(MOFASIM_SOURCE_DIR) + "/scenarios/small.yaml";

// small.yaml with one slow GPU at 2x, 4 episodes per GPU per day of 1 h, and the given overrides.
std::vector<std::string> slow_gpu(std::vector<std::string> extra) {
  std::vector<std::string> sets = {"fault_tolerance.fail_slow.scope=gpu", "fault_tolerance.fail_slow.slowdown=2",
                                   "fault_tolerance.fail_slow.duration=1h", "fault_tolerance.fail_slow.rate_per_day=4"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return sets;
}

EttrOptions one_second_steps() {
  EttrOptions ettr;  // 10,000 trials, the default budget of 1e8 events
  ettr.step_time = 1.0;
  return ettr;
}

// Counts its calls and marks the spec, standing in for the step simulations of price_fail_slow.
struct CountingPricer {
  int calls = 0;
  FailSlowPricer pricer() {
    return [this](const scenario::LoadedScenario&, model::FailSlowSpec& spec) {
      ++calls;
      spec.slow_step_factor = {1.25, 1.5};
    };
  }
};

TEST(SweepPoints, AnOverBudgetPointIsRefusedBeforeAnyPricing) {
  // 1000 failures per node per day (mean time between failures 86.4 s) against 1e5 s checkpoint
  // segments: 1.86e50 failures a trial at the second point. The first point (rate 1, 3.1 failures
  // a trial) is within its budget; the sweep used to price each point before checking it, so both
  // points' pricing had run (2 calls) when the second was refused.
  CountingPricer counting;
  const SweepRange range{.path = "fault_tolerance.node_failure_rate_per_day", .unit = "", .values = {1, 1000}};
  try {
    (void)load_sweep_points(kSmall, slow_gpu({"fault_tolerance.checkpoint.interval_steps=100000"}), range,
                            one_second_steps(), counting.pricer());
    FAIL() << "expected the budget error";
  } catch (const scenario::ScenarioError& e) {
    ASSERT_EQ(e.errors().size(), 1U);
    EXPECT_EQ(e.errors()[0],
              "--set:5:43: fault_tolerance.checkpoint.interval_steps: monte carlo: a trial is expected to meet "
              "1.86e+50 failures (a checkpoint segment is 1e+05 s of exposed time against a mean time between "
              "failures of 86.4 s), so 10000 trials need 1.86e+54 failure events, over the budget of 100000000; "
              "shorten fault_tolerance.checkpoint.interval_steps or the run, lower the failure rate, or use fewer "
              "--trials or a larger --max-events");
  }
  EXPECT_EQ(counting.calls, 0);
}

TEST(SweepPoints, PointsWithinTheirBudgetArePricedOnceEach) {
  CountingPricer counting;
  const SweepRange range{.path = "fault_tolerance.checkpoint.interval_steps", .unit = "", .values = {50, 100, 200}};
  const SweepPoints points = load_sweep_points(kSmall, slow_gpu({}), range, one_second_steps(), counting.pricer());
  EXPECT_EQ(counting.calls, 3);
  ASSERT_EQ(points.inputs.size(), 3U);
  ASSERT_TRUE(points.first.has_value());
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(points.inputs[i].spec.checkpoint.interval_steps, static_cast<std::int64_t>(range.values[i]));
    EXPECT_EQ(points.inputs[i].spec.fail_slow.slow_step_factor, (std::vector<double>{1.25, 1.5}));
    EXPECT_EQ(points.inputs[i].run.step_time_s, 1.0);
    EXPECT_EQ(points.inputs[i].run.n_steps, 10000);
  }
}

}  // namespace
}  // namespace mofasim::cli
