// The schema limits helpers and the derived budgets, against hand-worked values.
#include <string>

#include <gtest/gtest.h>

#include "proto/scenario.pb.h"
#include "sim/scenario/budgets.h"
#include "sim/scenario/limits.h"
#include "test/scenario/bad_input_cases.h"
#include "test/scenario/scenario_test_util.h"

namespace mofasim::scenario {
namespace {

const google::protobuf::FieldDescriptor& field(const google::protobuf::Descriptor& type, const std::string& name) {
  return *type.FindFieldByName(name);
}

TEST(Utf8, AcceptsWellFormedSequences) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9"));       // U+00E9
  EXPECT_TRUE(is_valid_utf8("\xe2\x82\xac"));      // U+20AC
  EXPECT_TRUE(is_valid_utf8("\xf0\x9f\x9a\x80"));  // U+1F680
  EXPECT_TRUE(is_valid_utf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF, the last code point
}

TEST(Utf8, RefusesMalformedSequences) {
  EXPECT_FALSE(is_valid_utf8("caf\xe9"));           // Latin-1 byte, no continuation
  EXPECT_FALSE(is_valid_utf8("\x80"));              // continuation byte first
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));      // overlong three-byte form
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // U+D800, a surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // U+110000, past the last code point
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));          // truncated at the end
  EXPECT_FALSE(is_valid_utf8("\xff"));              // never valid
}

TEST(Limits, MessagesNameTheBoundTheReasonAndTheValue) {
  const auto& layers = field(*proto::Model::descriptor(), "num_layers");
  EXPECT_FALSE(limit_violation(layers, std::int64_t{10000}).has_value());
  EXPECT_EQ(limit_violation(layers, std::int64_t{10001}).value(),
            "must be at most 10000 (bounds the per-layer op tables; the largest published models have under 200 "
            "layers), got 10001");
  const auto& bandwidth = field(*proto::LinkClass::descriptor(), "bandwidth");
  EXPECT_FALSE(limit_violation(bandwidth, 0.0).has_value());  // 0 is left to "must be greater than 0"
  EXPECT_EQ(
      limit_violation(bandwidth, 1e-310).value(),
      "must be at least 1e+06 B/s (below 1 MB/s is a unit typo; above 1e24 B/s a link is already free), got 1e-310 "
      "B/s");
  const auto& classes = field(*proto::FaultTolerance::descriptor(), "failure_classes");
  EXPECT_FALSE(entries_violation(classes, 256).has_value());
  EXPECT_EQ(entries_violation(classes, 257).value(),
            "has 257 entries, at most 256 allowed (keeps the simulator's tables and 64-bit arithmetic bounded)");
}

TEST(Limits, ReferenceCells) {
  EXPECT_EQ(limits_cell(field(*proto::Model::descriptor(), "num_layers")), "<= 10000");
  EXPECT_EQ(limits_cell(field(*proto::Hardware::descriptor(), "peak_bf16")),
            "<= 1e+18 FLOP/s; nonzero >= 1e+09 FLOP/s");
  EXPECT_EQ(limits_cell(field(*proto::Parallelism::descriptor(), "stage_layers")), "<= 10000; <= 65535 entries");
  EXPECT_EQ(limits_cell(field(*proto::Model::descriptor(), "name")), "");
}

TEST(Budgets, TasksPerStepOfTheBaseScenario) {
  // m = 16 / (1 * 2) = 8 micro-batches, 4 layers, 2 passes, 32 + 8 * 1 chunk = 40 ops per layer.
  const LoadedScenario base = load_scenario_from_string(testing::base(), "base.yaml", {}, testing::test_presets());
  EXPECT_EQ(estimated_tasks_per_step(base.proto), 8 * 4 * 2 * 40.0);
  // Four TP-overlap chunks: 32 + 8 * 4 = 64 ops per layer.
  const LoadedScenario chunked = load_scenario_from_string(
      testing::base(), "base.yaml", {"optimizations.tp_overlap.chunks=4"}, testing::test_presets());
  EXPECT_EQ(estimated_tasks_per_step(chunked.proto), 8 * 4 * 2 * 64.0);
}

}  // namespace
}  // namespace mofasim::scenario
