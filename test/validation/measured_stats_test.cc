// Error statistics and subsets of predicted-versus-measured rows.
#include "sim/analysis/measured_stats.h"

#include <gtest/gtest.h>

#include <vector>

namespace mofasim::analysis {
namespace {

MeasuredComparison cmp(int gpus, double measured_ms, double predicted_ms, std::optional<double> billions = {}) {
  MeasuredRow r{.source = "x.csv", .gpus = gpus, .iteration_time_s = measured_ms * 1e-3,
                .parameters_billion = billions};
  return {.row = r, .subset = measured_subset(r, 8), .predicted_s = predicted_ms * 1e-3};
}

TEST(MeasuredStats, MapeMedianMaxAndBiasOfThreeRows) {
  // Errors: 110 vs 100 = +10%, 180 vs 200 = -10%, 51 vs 50 = +2%.
  // MAPE = (10 + 10 + 2) / 3 = 7.333; median of {2, 10, 10} = 10; max 10; bias = 2 / 3 = 0.667.
  const std::vector<MeasuredComparison> rows{cmp(8, 100, 110), cmp(8, 200, 180), cmp(8, 50, 51)};
  const ErrorStats s = error_stats(rows);
  EXPECT_EQ(s.count, 3);
  EXPECT_NEAR(s.mape, 22.0 / 3, 1e-9);
  EXPECT_NEAR(s.median_ape, 10, 1e-9);
  EXPECT_NEAR(s.max_ape, 10, 1e-9);
  EXPECT_NEAR(s.mean_signed, 2.0 / 3, 1e-9);
  EXPECT_NEAR(rows[1].signed_percent_error(), -10, 1e-9);
}

TEST(MeasuredStats, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  const std::vector<double> ape{4, 1, 3, 2};  // sorted 1 2 3 4: (2 + 3) / 2
  const std::vector<double> spe{4, -1, 3, -2};
  const ErrorStats s = error_stats(ape, spe);
  EXPECT_DOUBLE_EQ(s.median_ape, 2.5);
  EXPECT_DOUBLE_EQ(s.mape, 2.5);
  EXPECT_DOUBLE_EQ(s.mean_signed, 1.0);
  EXPECT_EQ(error_stats(std::vector<double>{}, std::vector<double>{}).count, 0);
}

TEST(MeasuredStats, SubsetsAreSingleNodeAndMultiNodeByModelSize) {
  EXPECT_EQ(measured_subset(MeasuredRow{.gpus = 8}, 8), "single-node");
  EXPECT_EQ(measured_subset(MeasuredRow{.gpus = 2}, 8), "single-node");
  EXPECT_EQ(measured_subset(MeasuredRow{.gpus = 64, .parameters_billion = 3.6}, 8), "multi-node 3.6B");
  EXPECT_EQ(measured_subset(MeasuredRow{.gpus = 512, .parameters_billion = 175}, 8), "multi-node 175B");
  EXPECT_EQ(measured_subset(MeasuredRow{.gpus = 256, .parameters_billion = 39.1}, 8), "multi-node 39.1B");
  EXPECT_EQ(measured_subset(MeasuredRow{.gpus = 16}, 8), "multi-node");
}

TEST(MeasuredStats, SubsetStatsComeInAFixedOrder) {
  // 175B first in the input; sizes print by increasing size after the totals.
  const std::vector<MeasuredComparison> rows{cmp(512, 100, 120, 175), cmp(4, 100, 95), cmp(64, 100, 104, 3.6),
                                             cmp(64, 100, 98, 3.6)};
  const auto s = subset_stats(rows);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].name, "all");
  EXPECT_EQ(s[0].stats.count, 4);
  EXPECT_EQ(s[1].name, "single-node");
  EXPECT_NEAR(s[1].stats.mape, 5, 1e-9);
  EXPECT_EQ(s[2].name, "multi-node");
  EXPECT_NEAR(s[2].stats.mape, (20.0 + 4 + 2) / 3, 1e-9);
  EXPECT_EQ(s[3].name, "multi-node 3.6B");
  EXPECT_NEAR(s[3].stats.mape, 3, 1e-9);  // (4 + 2) / 2
  EXPECT_EQ(s[4].name, "multi-node 175B");
  EXPECT_NEAR(find_subset(s, "multi-node 175B").max_ape, 20, 1e-9);
  EXPECT_EQ(find_subset(s, "nothing").count, 0);
}

}  // namespace
}  // namespace mofasim::analysis
