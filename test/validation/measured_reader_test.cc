// The measured-iteration CSV reader: default vTrain headers, column mappings, and errors that name
// file:line and the column.
#include "sim/analysis/measured_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace mofasim::analysis {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSingle =
    "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,tensor parallelism,"
    "data parallelism,pipeline parallelism,iteration time (ms)\n"
    "2,16,8,1024,16,24,1024,1,1,2,372.160408\n"
    "\n"
    "8,32,4,1024,16,24,1024,2,2,2,219.732754\n";

std::string error_of(const std::string& text, const ColumnMapping& mapping = ColumnMapping::vtrain_default()) {
  try {
    (void)parse_measured_csv(text, "runs.csv", mapping);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(MeasuredReader, ReadsTheVtrainSingleNodeFormat) {
  const auto rows = parse_measured_csv(kSingle, "single.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].source, "single.csv");
  EXPECT_EQ(rows[0].line, 2);
  EXPECT_EQ(rows[0].gpus, 2);
  EXPECT_EQ(rows[0].global_batch, 16);
  EXPECT_EQ(rows[0].micro_batch, 8);
  EXPECT_EQ(rows[0].hidden_size, 1024);
  EXPECT_EQ(rows[0].attention_heads, 16);
  EXPECT_EQ(rows[0].layers, 24);
  EXPECT_EQ(rows[0].seq_length, 1024);
  EXPECT_EQ(rows[0].tp, 1);
  EXPECT_EQ(rows[0].dp, 1);
  EXPECT_EQ(rows[0].pp, 2);
  EXPECT_DOUBLE_EQ(rows[0].iteration_time_s, 0.372160408);  // 372.160408 ms
  EXPECT_FALSE(rows[0].parameters_billion.has_value());
  EXPECT_EQ(rows[1].line, 4);  // the empty line 3 is skipped but counted
  EXPECT_EQ(rows[1].tp, 2);
}

TEST(MeasuredReader, ReadsTheOptionalParameterColumnOfTheMultiNodeFormat) {
  const auto rows = parse_measured_csv(
      "Parameters (billion),# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
      "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n"
      "3.6,64,512,8,3072,32,30,2048,1,64,1,3566.5\n",
      "multi.csv");
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_TRUE(rows[0].parameters_billion.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].parameters_billion, 3.6);
  EXPECT_EQ(rows[0].dp, 64);
  EXPECT_DOUBLE_EQ(rows[0].iteration_time_s, 3.5665);
}

TEST(MeasuredReader, AMappingReadsOtherHeadersAndSecondsAndQuotedCells) {
  const ColumnMapping m = ColumnMapping::with_overrides(
      {"GPUs=gpus", "GBS=global_batch", "MBS=micro_batch", "hidden=hidden_size", "heads=attention_heads",
       "L=layers", "seq=seq_length", "TP=tp", "DP=dp", "PP=pp", "step (s)=iteration_time_s"});
  const auto rows = parse_measured_csv(
      "note,GPUs,GBS,MBS,hidden,heads,L,seq,TP,DP,PP,step (s)\n"
      "\"a, b\",4,8,2,512,8,4,256,2,2,1,0.25\n",
      "mine.csv", m);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].gpus, 4);
  EXPECT_EQ(rows[0].global_batch, 8);
  EXPECT_EQ(rows[0].hidden_size, 512);
  EXPECT_DOUBLE_EQ(rows[0].iteration_time_s, 0.25);  // seconds stay seconds
}

TEST(MeasuredReader, MappingEntriesAreChecked) {
  EXPECT_THROW((void)ColumnMapping::with_overrides({"no equals sign"}), std::invalid_argument);
  EXPECT_THROW((void)ColumnMapping::with_overrides({"=gpus"}), std::invalid_argument);
  try {
    (void)ColumnMapping::with_overrides({"x=gpu_count"});
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown field 'gpu_count'"));
    EXPECT_THAT(e.what(), HasSubstr("iteration_time_ms"));  // lists what is allowed
  }
}

TEST(MeasuredReader, AMissingColumnNamesTheHeaderLineAndTheField) {
  const std::string text = "# GPUs,global batch\n2,16\n";
  const std::string e = error_of(text);
  EXPECT_THAT(e, HasSubstr("runs.csv:1:"));
  EXPECT_THAT(e, HasSubstr("'micro batch'"));
  EXPECT_THAT(e, HasSubstr("micro_batch"));
}

TEST(MeasuredReader, ABadCellNamesFileLineAndColumn) {
  std::string text = kSingle;
  text.replace(text.find("219.732754"), 10, "fast");
  const std::string e = error_of(text);
  EXPECT_THAT(e, HasSubstr("runs.csv:4:"));
  EXPECT_THAT(e, HasSubstr("'iteration time (ms)'"));
  EXPECT_THAT(e, HasSubstr("'fast'"));

  std::string fractional = kSingle;
  fractional.replace(fractional.find("2,16,8"), 6, "2,16,8.5");
  EXPECT_THAT(error_of(fractional), HasSubstr("'micro batch': expected a positive integer, got '8.5'"));
}

TEST(MeasuredReader, RowsMustBeConsistentLayouts) {
  std::string gpus = kSingle;
  gpus.replace(gpus.find("2,16,8"), 1, "4");  // 4 GPUs but tp*dp*pp = 1*1*2
  const std::string e = error_of(gpus);
  EXPECT_THAT(e, HasSubstr("runs.csv:2:"));
  EXPECT_THAT(e, HasSubstr("tp*dp*pp = 2 but gpus = 4"));

  std::string batch = kSingle;
  batch.replace(batch.find("8,32,4"), 6, "8,30,4");  // 30 % (4 * 2) != 0
  EXPECT_THAT(error_of(batch), HasSubstr("runs.csv:4: column 'global batch'"));

  EXPECT_THAT(error_of(""), HasSubstr("empty file"));
  EXPECT_THAT(error_of(std::string(kSingle) + "1,2\n"), HasSubstr("runs.csv:5: expected 11 columns"));
}

TEST(MeasuredReader, AnUnreadableFileIsNamed) {
  EXPECT_THROW((void)read_measured_csv("/nonexistent/runs.csv"), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::analysis
