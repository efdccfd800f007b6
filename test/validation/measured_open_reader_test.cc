// The open-set reader on small CSV texts: the columns as the file names them, optional cells, the
// row checks with their file:line errors, and the header test that tells the format from vTrain's.
#include "sim/analysis/measured_open_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/analysis/measured_open_mapping.h"
#include "test/validation/open_rows_for_test.h"

namespace mofasim::analysis {
namespace {

using test::open_csv;
using test::open_row;
using ::testing::HasSubstr;

// The file's error, or the first bad row's reason (a bad row is listed, not fatal).
std::string error_of(const std::string& text) {
  try {
    for (const OpenRun& r : parse_open_runs_csv(text, "runs.csv")) {
      if (!r.unreadable.empty()) return r.unreadable;
    }
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(OpenReader, ReadsEveryColumnOfARow) {
  const OpenRun r = open_row();
  EXPECT_EQ(r.file, "runs.csv");
  EXPECT_EQ(r.line, 2);
  EXPECT_EQ(r.id, "O-ILM-02");
  EXPECT_EQ(r.source_group(), "O-ILM");
  EXPECT_EQ(r.gpu, "A100-SXM4-80GB");
  EXPECT_EQ(r.gpus, 16);
  EXPECT_EQ(r.gpus_per_node, 8);
  EXPECT_EQ(r.layers, 32);
  EXPECT_EQ(r.hidden, 4096);
  EXPECT_EQ(r.heads, 32);
  EXPECT_EQ(r.kv_heads, 32);
  EXPECT_EQ(r.ffn_hidden, 11008);
  EXPECT_EQ(r.vocab, 103168);
  EXPECT_EQ(r.seq, 2048);
  EXPECT_FALSE(r.moe_experts.has_value());
  EXPECT_FALSE(r.is_moe());
  EXPECT_EQ(r.dp, 16);
  EXPECT_EQ(r.micro_batch, 2);
  EXPECT_EQ(r.global_batch, 128);
  EXPECT_EQ(r.quantity, OpenQuantity::kTokensPerSecondPerGpu);
  EXPECT_DOUBLE_EQ(r.measured_value, 3842);
  EXPECT_EQ(r.interconnect, "8x A100-SXM4-80GB per node (NVLink/NVSwitch); inter-node 4x 100 Gb RoCE per node");
}

TEST(OpenReader, ReadsMoeColumnsAndEmptyOptionalCells) {
  const OpenRun r = open_row({{"kv_heads", ""}, {"ffn_hidden", ""}, {"moe_experts", "128"}, {"moe_topk", "8"},
                              {"moe_ffn_hidden", "768"}, {"shared_experts", "0"}, {"measured_quantity", "step_s"}});
  EXPECT_FALSE(r.kv_heads.has_value());
  EXPECT_FALSE(r.ffn_hidden.has_value());
  EXPECT_TRUE(r.is_moe());
  EXPECT_EQ(r.moe_topk, 8);
  EXPECT_EQ(r.shared_experts, 0);
  EXPECT_EQ(r.quantity, OpenQuantity::kStepSeconds);
}

TEST(OpenReader, ErrorsNameTheLineTheColumnAndTheValue) {
  EXPECT_EQ(error_of(open_csv({{{"gpus", "24"}}})), "runs.csv:2: column 'gpus': tp*pp*cp*dp = 16 but gpus = 24");
  EXPECT_EQ(error_of(open_csv({{}, {{"global_batch", "100"}}})),
            "runs.csv:3: column 'global_batch': 100 is not a multiple of dp * micro_batch = 32");
  EXPECT_EQ(error_of(open_csv({{{"measured_quantity", "mfu_percent"}}})),
            "runs.csv:2: column 'measured_quantity': expected step_s, tokens_per_s_per_gpu, tflops_per_gpu or mfu, "
            "got 'mfu_percent'");
  EXPECT_EQ(error_of(open_csv({{{"layers", "3.5"}}})),
            "runs.csv:2: column 'layers': expected an integer in [1, 10000], got '3.5'");
  // The scenario schema's limits: a row holds nothing a scenario file could not.
  EXPECT_EQ(error_of(open_csv({{{"layers", "100000000"}}})),
            "runs.csv:2: column 'layers': expected an integer in [1, 10000], got '100000000'");
  EXPECT_EQ(error_of(open_csv({{{"seq", "16777217"}}})),
            "runs.csv:2: column 'seq': expected an integer in [1, 16777216], got '16777217'");
  EXPECT_EQ(error_of(open_csv({{{"shared_experts", "-1"}}})),
            "runs.csv:2: column 'shared_experts': expected an integer in [0, 16384], got '-1'");
  EXPECT_EQ(error_of(open_csv({{{"measured_value", "0"}}})),
            "runs.csv:2: column 'measured_value': expected a positive value, got '0'");
  EXPECT_EQ(error_of(open_csv({{{"measured_value", "nan"}}})),
            "runs.csv:2: column 'measured_value': expected a number, got 'nan'");
  EXPECT_EQ(error_of(open_csv({{{"id", ""}}})), "runs.csv:2: column 'id': empty");
  EXPECT_EQ(error_of(""), "runs.csv:1: empty file, expected a header line");
  EXPECT_THAT(error_of("id,gpu,measured_quantity,measured_value\n"), HasSubstr("runs.csv:1: no column 'source'"));
  std::string short_row = open_csv({{}});
  short_row.insert(short_row.find('\n') + 1, "O-X-1,only,three\n");
  EXPECT_EQ(error_of(short_row), "runs.csv:2: expected 33 columns as in the header, got 3");
  // Free text is read by pattern: a cell longer than the limit is a broken file, not a row.
  EXPECT_EQ(error_of(open_csv({{{"notes", std::string(4097, 'x')}}})),
            "runs.csv:2: column 'notes': a cell of 4097 characters, at most 4096 allowed");
  EXPECT_EQ(parse_open_runs_csv(open_csv({{{"notes", std::string(4096, 'x')}}}), "runs.csv").at(0).notes.size(), 4096u);
}

// A bad row does not stop the file: it comes back with its reason and its id, the rows around it
// are read, and the mapping lists it with that reason.
TEST(OpenReader, ABadRowIsListedAndTheOthersAreRead) {
  const std::vector<OpenRun> rows =
      parse_open_runs_csv(open_csv({{{"id", "X-1"}}, {{"id", "X-2"}, {"vpp", "n/a"}}, {{"id", "X-3"}}}), "runs.csv");
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_TRUE(rows[0].unreadable.empty());
  EXPECT_EQ(rows[1].id, "X-2");
  EXPECT_EQ(rows[1].line, 3);
  EXPECT_EQ(rows[1].unreadable, "runs.csv:3: column 'vpp': expected a number, got 'n/a'");
  EXPECT_TRUE(rows[2].unreadable.empty());
  EXPECT_EQ(rows[2].vpp, 1);
  EXPECT_THAT(map_open_run(rows[1]).reasons, ::testing::ElementsAre(rows[1].unreadable));
  // A row without an id is named by its line.
  EXPECT_EQ(parse_open_runs_csv(open_csv({{{"id", ""}}}), "runs.csv").at(0).id, "line 2");
}

TEST(OpenReader, TheHeaderTellsTheOpenFormatFromVtrains) {
  EXPECT_TRUE(is_open_runs_csv(open_csv({})));
  EXPECT_TRUE(is_open_runs_csv("\n\nid,gpu,measured_quantity,measured_value\n"));
  EXPECT_FALSE(is_open_runs_csv("# GPUs,global batch,micro batch,iteration time (ms)\n2,16,8,372.1\n"));
  EXPECT_FALSE(is_open_runs_csv("id,gpu,measured_value\n"));
  EXPECT_FALSE(is_open_runs_csv(""));
}

}  // namespace
}  // namespace mofasim::analysis
