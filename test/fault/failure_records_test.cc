// Tests of historical failure records: parsing (numbers and ISO-8601 timestamps, file:line errors)
// and the fit of rate, class mix, recovery samples and the empirical failure process.
#include <sstream>
#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/fault/failure_records.h"

namespace mofasim::fault {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(FailureRecords, ParsesNumbersAndIsoTimestamps) {
  std::istringstream in(
      "# cluster A\n"
      "timestamp,class,recovery_seconds\n"
      "0,pod,262\n"
      "\n"
      "1970-01-01T01:00:00Z,process,141\n"
      "1970-01-01 02:00:00,pod,250\n"
      "14400.0,job,307\n");
  const auto records = parse_failure_records(in, "hist.csv");
  ASSERT_EQ(records.size(), 4u);
  EXPECT_DOUBLE_EQ(records[1].timestamp_s, 3600);  // 01:00:00 on the epoch day
  EXPECT_DOUBLE_EQ(records[2].timestamp_s, 7200);
  EXPECT_EQ(records[3].failure_class, "job");
  // 2024-03-01 is day 19783 since 1970-01-01 (54 years incl. 13 leap days: 54*365 + 13 = 19723,
  // plus 31 + 29 days of Jan and Feb 2024 = 19783).
  std::istringstream in2("class,recovery_seconds,timestamp\nx,1,2024-03-01T00:00:00\n");
  EXPECT_DOUBLE_EQ(parse_failure_records(in2, "b.csv")[0].timestamp_s, 19783.0 * 86400);
}

TEST(FailureRecords, ErrorsNameFileAndLine) {
  std::istringstream bad_number("timestamp,class,recovery_seconds\n0,pod,262\n10,pod,soon\n");
  EXPECT_THAT([&] { parse_failure_records(bad_number, "hist.csv"); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("hist.csv:3: recovery_seconds")));
  std::istringstream bad_fields("timestamp,class,recovery_seconds\n0,pod\n");
  EXPECT_THAT([&] { parse_failure_records(bad_fields, "h.csv"); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("h.csv:2: expected 3 fields")));
  std::istringstream bad_header("time,class,recovery\n");
  EXPECT_THAT([&] { parse_failure_records(bad_header, "h.csv"); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("h.csv:1: header")));
  EXPECT_THAT([] { load_failure_records("/nonexistent/records.csv"); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("/nonexistent/records.csv")));
  // Only regular files are read: a device would never end.
  EXPECT_THAT([] { load_failure_records("/dev/zero"); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  ::testing::StrEq("/dev/zero: failure records must be a regular file")));
  EXPECT_THAT([] { load_failure_records("/tmp"); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::StrEq("/tmp: failure records must be a regular file")));
}

TEST(FailureRecords, FitsRateMixAndGaps) {
  // Failures at 0, 3600, 7200 and 14400 s on 2 units: 3 gaps over 14400 s = 3 / 14400 per second
  // = 18 per day for the cluster = 9 per unit per day.
  const std::vector<FailureRecord> records = {
      {.timestamp_s = 7200, .failure_class = "pod", .recovery_s = 250},
      {.timestamp_s = 0, .failure_class = "pod", .recovery_s = 262},
      {.timestamp_s = 3600, .failure_class = "process", .recovery_s = 141},
      {.timestamp_s = 14400, .failure_class = "pod", .recovery_s = 270},
  };
  const FailureHistoryFit fit = fit_failure_history(records, 2);
  EXPECT_DOUBLE_EQ(fit.node_failure_rate_per_day, 9);
  ASSERT_EQ(fit.classes.size(), 2u);
  EXPECT_EQ(fit.classes[0].name, "pod");  // first appearance in the file
  EXPECT_DOUBLE_EQ(fit.classes[0].weight, 3);
  EXPECT_THAT(fit.classes[0].recovery.samples_s, ElementsAre(250, 262, 270));
  EXPECT_DOUBLE_EQ(fit.classes[1].weight, 1);
  EXPECT_EQ(fit.process.kind, model::FailureProcessKind::kEmpirical);
  EXPECT_THAT(fit.process.inter_arrival_s, ElementsAre(3600, 3600, 7200));  // sorted timestamps
  EXPECT_EQ(fit.process.recorded_units, 2);
  EXPECT_THROW(fit_failure_history({records[0]}, 2), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::fault
