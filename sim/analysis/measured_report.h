// Renderings of a predicted-versus-measured comparison: one CSV line per row, a Markdown table of
// the subset statistics, and a hand-written log-log SVG scatter (predicted against measured, the
// y = x line and ±10% bands, single-node and multi-node rows in two colours). Output is
// deterministic: fixed number formats, rows in input order.
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "sim/analysis/measured_stats.h"

namespace mofasim::analysis {

// Header: source,line,subset,gpus,global_batch,micro_batch,hidden_size,attention_heads,layers,
// seq_length,tp,dp,pp,parameters_billion,measured_ms,<predictor>_ms,error_percent,compute_ms,
// recompute_ms,tp_ms,cp_ms,ep_ms,pp_comm_ms,dp_ms,offload_ms,pp_bubble_ms,optimizer_ms
// (error_percent signed: positive when the prediction is slower than the measurement; then the
// predicted step's breakdown, step_prediction.h, which sums to <predictor>_ms; empty cells for a
// row predicted without one).
void write_comparison_csv(std::ostream& out, std::span<const MeasuredComparison> rows,
                          std::string_view predictor = "predicted");

// | subset | rows | MAPE % | median % | max % | bias % |  (one line per SubsetStats).
std::string subset_table_markdown(std::span<const SubsetStats> stats);

struct ScatterOptions {
  std::string title = "Predicted vs measured iteration time";
  std::string y_label = "predicted (ms)";
  int width = 640;
  int height = 600;
};

// The whole SVG document.
std::string scatter_svg(std::span<const MeasuredComparison> rows, const ScatterOptions& options = {});

}  // namespace mofasim::analysis
