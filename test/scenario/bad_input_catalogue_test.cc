// The bad-input catalogue (bad_input_cases.h) loaded in process: each case is refused with a
// ScenarioError whose first line is exactly the expected one. The same table runs through the
// CLI in bad_input_cli_test.cc; this half also runs in the sanitizer build (test/sanitize).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/scenario/bad_input_cases.h"
#include "test/scenario/scenario_test_util.h"

namespace mofasim::scenario {
namespace {

using testing::BadInput;

class BadInputCatalogue : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputCatalogue, RefusedWithTheExpectedFirstLine) {
  const BadInput& c = GetParam();
  const std::vector<std::string> errors = testing::errors_of(c.yaml, c.overrides);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.front(), c.first_line);
}

INSTANTIATE_TEST_SUITE_P(Scenario, BadInputCatalogue, ::testing::ValuesIn(testing::bad_inputs()),
                         [](const ::testing::TestParamInfo<BadInput>& param_info) { return param_info.param.name; });

TEST(BadInputCatalogueSize, HasAtLeastOneHundredCases) {
  EXPECT_GE(testing::bad_inputs().size(), 100U);
}

TEST(BadInputErrors, AtMostTwentyLinesThenACount) {
  std::string text = testing::base();
  for (int i = 0; i < 25; ++i) text += "unknown_" + std::to_string(i) + ": 1\n";
  const std::vector<std::string> errors = testing::errors_of(text);
  ASSERT_EQ(errors.size(), 21U);
  EXPECT_EQ(errors[0],
            "bad.yaml:7:1: (top level): unknown field 'unknown_0'; expected one of name, description, "
            "model, hardware, topology, parallelism, optimizations, fault_tolerance, training, perturbations");
  EXPECT_EQ(errors[20], "... and 5 more errors");
}

TEST(BadInputErrors, ARunawayKeyIsShownClippedAndFound) {
  // A 1000-character key (yaml-cpp refuses longer plain keys): the did-you-mean search skips every
  // candidate on length alone, and the message shows the first 60 characters.
  const std::string key(1000, 'k');
  const std::vector<std::string> errors = testing::errors_of(testing::base() + key + ": 1\n");
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0], "bad.yaml:7:1: (top level): unknown field '" + std::string(60, 'k') +
                           "...'; expected one of name, description, model, hardware, topology, parallelism, "
                           "optimizations, fault_tolerance, training, perturbations");
}

TEST(BadInputErrors, ValidUtf8IsAccepted) {
  // Two-, three- and four-byte sequences in a free-text field load.
  const std::string text = testing::base_with(
      "training", "training: {steps: 100}\ndescription: \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\"");
  EXPECT_EQ(testing::errors_of(text), std::vector<std::string>{"(loaded)"});
}

}  // namespace
}  // namespace mofasim::scenario
