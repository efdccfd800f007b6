// CSV, Markdown and SVG renderings of a comparison.
#include "sim/analysis/measured_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace mofasim::analysis {
namespace {

using ::testing::HasSubstr;

std::vector<MeasuredComparison> two_rows() {
  MeasuredRow a{.source = "s.csv", .line = 2, .gpus = 8, .global_batch = 16, .micro_batch = 2, .hidden_size = 1024,
                .attention_heads = 16, .layers = 24, .seq_length = 1024, .tp = 2, .dp = 2, .pp = 2,
                .iteration_time_s = 0.2};
  MeasuredRow b = a;
  b.line = 3;
  b.gpus = 64;
  b.dp = 16;
  b.global_batch = 512;
  b.iteration_time_s = 2.0;
  b.parameters_billion = 3.6;
  // The first with its breakdown (200 ms compute + 10 ms bubble), the second without one.
  return {{.row = a,
           .subset = measured_subset(a, 8),
           .predicted_s = 0.21,
           .breakdown = PredictedBreakdown{.compute = 0.2, .pp_bubble = 0.01}},
          {.row = b, .subset = measured_subset(b, 8), .predicted_s = 1.8}};
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(MeasuredReport, CsvHasOneLinePerRowWithSignedError) {
  std::ostringstream out;
  write_comparison_csv(out, two_rows(), "analytic");
  const std::string csv = out.str();
  EXPECT_THAT(csv, HasSubstr("measured_ms,analytic_ms,error_percent,compute_ms,recompute_ms,tp_ms,cp_ms,ep_ms,"
                             "pp_comm_ms,dp_ms,offload_ms,pp_bubble_ms,optimizer_ms\n"));
  // 210 ms against 200 ms = +5%, of which 200 ms compute and 10 ms bubble; 1800 against 2000 =
  // -10%, no breakdown (empty cells).
  EXPECT_THAT(csv, HasSubstr("s.csv,2,single-node,8,16,2,1024,16,24,1024,2,2,2,,200.000,210.000,5.00,"
                             "200.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,10.000,0.000\n"));
  EXPECT_THAT(csv, HasSubstr("s.csv,3,multi-node 3.6B,64,512,2,1024,16,24,1024,2,16,2,3.6,2000.000,1800.000,-10.00"
                             ",,,,,,,,,,\n"));
  EXPECT_EQ(count(csv, "\n"), 3);
}

TEST(MeasuredReport, MarkdownTableListsEverySubset) {
  const auto rows = two_rows();
  const std::string md = subset_table_markdown(subset_stats(rows));
  EXPECT_THAT(md, HasSubstr("| all | 2 | 7.50 | 7.50 | 10.00 | -2.50 |"));  // (5 + 10) / 2, bias (5 - 10) / 2
  EXPECT_THAT(md, HasSubstr("| multi-node 3.6B | 1 | 10.00 |"));
}

TEST(MeasuredReport, SvgPlotsEveryRowInItsColourOnLogAxes) {
  const std::string svg = scatter_svg(two_rows());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("</svg>\n"));
  // One data point per row plus one legend marker per colour.
  EXPECT_EQ(count(svg, "fill=\"#1f77b4\""), 2);
  EXPECT_EQ(count(svg, "fill=\"#d62728\""), 2);
  // Values span 180..2100 ms, so the axes run over whole decades 100..10000 ms.
  EXPECT_THAT(svg, HasSubstr(">100</text>"));
  EXPECT_THAT(svg, HasSubstr(">10000</text>"));
  EXPECT_THROW((void)scatter_svg(two_rows(), {.width = 10}), std::invalid_argument);
}

}  // namespace
}  // namespace mofasim::analysis
