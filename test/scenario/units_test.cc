// Unit strings convert exactly to base SI, and malformed ones are rejected with a reason;
// plus the did-you-mean distance used by every "unknown ..." message.
#include <gtest/gtest.h>

#include "sim/scenario/did_you_mean.h"
#include "sim/scenario/units.h"

namespace mofasim::scenario {
namespace {

double parse(const char* text, proto::Unit unit) {
  const QuantityParse parsed = parse_quantity(text, unit);
  EXPECT_TRUE(parsed.value.has_value()) << text << ": " << parsed.error;
  return parsed.value.value_or(-1);
}

TEST(ParseQuantity, BandwidthDecimalAndBits) {
  EXPECT_EQ(parse("400 GB/s", proto::UNIT_BYTES_PER_SECOND), 4e11);    // 400 * 1e9
  EXPECT_EQ(parse("200 Gb/s", proto::UNIT_BYTES_PER_SECOND), 2.5e10);  // 200e9 bits / 8
  EXPECT_EQ(parse("400 Gbps", proto::UNIT_BYTES_PER_SECOND), 5e10);    // 400e9 / 8
  EXPECT_EQ(parse("32 GiB/s", proto::UNIT_BYTES_PER_SECOND), 34359738368.0);  // 32 * 2^30
  EXPECT_EQ(parse("3.35 TB/s", proto::UNIT_BYTES_PER_SECOND), 3.35e12);
  EXPECT_EQ(parse("100Mb/s", proto::UNIT_BYTES_PER_SECOND), 1.25e7);  // no space needed
}

TEST(ParseQuantity, BytesDecimalAndBinary) {
  EXPECT_EQ(parse("80 GiB", proto::UNIT_BYTES), 85899345920.0);  // 80 * 2^30
  EXPECT_EQ(parse("80 GB", proto::UNIT_BYTES), 8e10);
  EXPECT_EQ(parse("512 MiB", proto::UNIT_BYTES), 536870912.0);  // 2^29
  EXPECT_EQ(parse("1.5e9 B", proto::UNIT_BYTES), 1.5e9);
  EXPECT_EQ(parse("1e3 MB", proto::UNIT_BYTES), 1e9);  // exponent and prefix add: 10^(3+6)
}

TEST(ParseQuantity, DurationsRoundOnce) {
  // Decimal prefixes are folded into the literal, so the result equals the written literal.
  EXPECT_EQ(parse("1.5 us", proto::UNIT_SECONDS), 1.5e-6);
  EXPECT_EQ(parse("2 ms", proto::UNIT_SECONDS), 2e-3);
  EXPECT_EQ(parse("4.19 s", proto::UNIT_SECONDS), 4.19);
  EXPECT_EQ(parse("700 ns", proto::UNIT_SECONDS), 7e-7);
  EXPECT_EQ(parse("3 min", proto::UNIT_SECONDS), 180.0);
  EXPECT_EQ(parse("2 h", proto::UNIT_SECONDS), 7200.0);
  EXPECT_EQ(parse("1 d", proto::UNIT_SECONDS), 86400.0);
}

TEST(ParseQuantity, FlopRates) {
  EXPECT_EQ(parse("989 TFLOPS", proto::UNIT_FLOPS_PER_SECOND), 9.89e14);
  EXPECT_EQ(parse("1.2 PFLOPS", proto::UNIT_FLOPS_PER_SECOND), 1.2e15);
  EXPECT_EQ(parse("312 TFLOP/s", proto::UNIT_FLOPS_PER_SECOND), 3.12e14);
  EXPECT_EQ(parse("2EFLOPS", proto::UNIT_FLOPS_PER_SECOND), 2e18);  // 'E' is the prefix, not an exponent
}

TEST(ParseQuantity, RejectsWithReasons) {
  EXPECT_EQ(parse_quantity("400", proto::UNIT_BYTES_PER_SECOND).error,
            "expected a bandwidth with a unit, such as \"400 GB/s\", got '400'");
  EXPECT_EQ(parse_quantity("fast", proto::UNIT_BYTES_PER_SECOND).error,
            "expected a bandwidth such as \"400 GB/s\", got 'fast'");
  EXPECT_EQ(parse_quantity("80 GiBs", proto::UNIT_BYTES).error, "unknown size unit 'GiBs'; did you mean 'GiB'?");
  EXPECT_EQ(parse_quantity("-1 s", proto::UNIT_SECONDS).error, "must not be negative, got '-1 s'");
  EXPECT_EQ(parse_quantity("1e999 s", proto::UNIT_SECONDS).error, "out of range: '1e999 s'");
  EXPECT_EQ(parse_quantity("1e9999999 s", proto::UNIT_SECONDS).error, "out of range: '1e9999999 s'");
  EXPECT_FALSE(parse_quantity("nan s", proto::UNIT_SECONDS).value.has_value());
  EXPECT_FALSE(parse_quantity("inf s", proto::UNIT_SECONDS).value.has_value());
}

TEST(DidYouMean, EditDistanceCountsTranspositionsOnce) {
  EXPECT_EQ(edit_distance("tp", "tp"), 0);
  EXPECT_EQ(edit_distance("tpp", "tp"), 1);          // one deletion
  EXPECT_EQ(edit_distance("gloabl", "global"), 1);   // one transposition
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);  // the textbook Levenshtein example
  EXPECT_EQ(edit_distance("MODEL", "model"), 0);     // case-insensitive
}

TEST(DidYouMean, SuggestsOnlyPlausibleTypos) {
  const std::vector<std::string> names = {"tp", "cp", "pp", "global_batch", "interleaved-1f1b"};
  EXPECT_EQ(closest_match("tpp", names), "tp");
  EXPECT_EQ(closest_match("globl_batch", names), "global_batch");
  EXPECT_EQ(closest_match("interleaved", names), "interleaved-1f1b");  // a clipped name: prefix
  EXPECT_EQ(closest_match("switches", names), std::nullopt);
}

}  // namespace
}  // namespace mofasim::scenario
