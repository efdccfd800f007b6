// Accuracy against vTrain's 1,549 public A100 measurements (VIA-Research/vTrain, MICRO 2024), read
// from ../shared/validation/vtrain beside the source tree (or $MOFASIM_SHARED_DIR); skipped when
// that folder is absent. The device fit (measured_calibration.h) was made on the 720 single-node
// rows at even file lines; the 720 at odd lines and the 109 multi-node rows are held out. The bounds
// below are the figures docs/validation-measured.md
// reports plus a margin of 1 percentage point: a change that makes either step model less accurate
// on the held-out set fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/analysis/measured_calibration.h"
#include "sim/analysis/measured_compare.h"
#include "test/validation/shared_data_dir.h"

namespace mofasim::analysis {
namespace {

// Reported in docs/validation-measured.md (MAPE, percent).
constexpr double kSimulatedSingleMape = 6.94;
constexpr double kSimulatedMultiMape = 8.87;
constexpr double kAnalyticSingleMape = 6.92;
constexpr double kAnalyticMultiMape = 9.90;
constexpr double kMargin = 1.0;

const std::string kDataDir = shared_data_dir() + "/validation/vtrain";

class VtrainAccuracy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kDataDir + "/ground_truth_single.csv")) return;
    rows_ = new std::vector<MeasuredRow>(read_measured_csv(kDataDir + "/ground_truth_single.csv"));
    const auto multi = read_measured_csv(kDataDir + "/ground_truth_multi.csv");
    rows_->insert(rows_->end(), multi.begin(), multi.end());
  }
  static void TearDownTestSuite() {
    delete rows_;
    rows_ = nullptr;
  }
  void SetUp() override {
    if (rows_ == nullptr) GTEST_SKIP() << "vTrain's measurements are not at " << kDataDir << "; skipping";
  }
  static std::vector<MeasuredRow>* rows_;
};
std::vector<MeasuredRow>* VtrainAccuracy::rows_ = nullptr;

TEST_F(VtrainAccuracy, EveryRowIsReadAndSplitIntoTheSourcesSubsets) {
  ASSERT_EQ(rows_->size(), 1549u);  // README: 1,440 single-node + 109 multi-node runs
  const auto cmp = compare_measured(*rows_, vtrain_a100_calibrated_conditions(), analytic_step_predictor());
  const auto stats = subset_stats(cmp);
  EXPECT_EQ(find_subset(stats, "single-node").count, 1440);
  EXPECT_EQ(find_subset(stats, "multi-node").count, 109);
  // The four model sizes of the multi-node file.
  EXPECT_EQ(find_subset(stats, "multi-node 3.6B").count + find_subset(stats, "multi-node 18.4B").count +
                find_subset(stats, "multi-node 39.1B").count + find_subset(stats, "multi-node 175B").count,
            109);
}

TEST_F(VtrainAccuracy, TheSingleNodeFitBeatsTheShippedPresetOnTheSetItWasFittedOn) {
  const auto fitted = subset_stats(compare_measured(*rows_, vtrain_a100_calibrated_conditions(),
                                                    analytic_step_predictor()));
  const auto preset = subset_stats(compare_measured(
      *rows_, vtrain_a100_conditions(hardware_from_preset("a100-80gb")), analytic_step_predictor()));
  EXPECT_LT(find_subset(fitted, "single-node").mape, find_subset(preset, "single-node").mape);
}

TEST_F(VtrainAccuracy, AnalyticModelHeldOutMultiNodeMapeDoesNotRegress) {
  const auto stats = subset_stats(compare_measured(*rows_, vtrain_a100_calibrated_conditions(),
                                                   analytic_step_predictor()));
  EXPECT_LE(find_subset(stats, "single-node").mape, kAnalyticSingleMape + kMargin);
  EXPECT_LE(find_subset(stats, "multi-node").mape, kAnalyticMultiMape + kMargin);
}

TEST_F(VtrainAccuracy, StepSimulationHeldOutMultiNodeMapeDoesNotRegress) {
  const auto stats = subset_stats(compare_measured(*rows_, vtrain_a100_calibrated_conditions(),
                                                   simulated_step_predictor()));
  EXPECT_LE(find_subset(stats, "single-node").mape, kSimulatedSingleMape + kMargin);
  EXPECT_LE(find_subset(stats, "multi-node").mape, kSimulatedMultiMape + kMargin);
}

}  // namespace
}  // namespace mofasim::analysis
