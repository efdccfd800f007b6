// Reading the open validation set (../shared/validation/open/runs.csv): one published training run
// per row, with the model shape, GPU, interconnect, layout, batch, recompute, precision, optimizer
// sharding, the measured quantity (step_s, tokens_per_s_per_gpu, tflops_per_gpu or mfu) and the
// source's FLOP convention, read as the file is (no column mapping). The text columns (gpu,
// interconnect, recompute, ...) are kept verbatim; measured_open_mapping.h interprets them.
//
// Every error is a std::invalid_argument of one line naming `file:line`, the column and the value.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mofasim::analysis {

enum class OpenQuantity { kStepSeconds, kTokensPerSecondPerGpu, kTflopsPerGpu, kMfu };

// The CSV spelling: "step_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu".
std::string_view open_quantity_name(OpenQuantity q);

struct OpenRun {
  std::string file{};  // file name given to the reader
  int line = 0;        // 1-based line in that file
  std::string id{};    // "O-ILM-01"
  std::string source{};  // the repository or results set the row cites (measured_open_framework.h)
  std::string gpu{};
  int gpus = 0;
  int gpus_per_node = 0;
  std::string interconnect{};
  std::string model{};
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  std::optional<int> kv_heads{};       // empty for MLA models
  std::optional<int> ffn_hidden{};     // dense FFN width; empty for all-MoE models
  int vocab = 0;
  int seq = 0;
  std::optional<int> moe_experts{};    // all four empty for dense models
  std::optional<int> moe_topk{};
  std::optional<int> moe_ffn_hidden{};
  std::optional<int> shared_experts{};  // may be 0
  int tp = 0;
  int pp = 0;
  int vpp = 0;
  int cp = 0;
  int ep = 0;
  int dp = 0;
  int micro_batch = 0;
  int global_batch = 0;
  std::string recompute{};
  std::string precision{};
  std::string optimizer_sharding{};
  OpenQuantity quantity = OpenQuantity::kStepSeconds;
  double measured_value = 0;
  std::string flops_convention{};
  std::string notes{};  // the source's secondary figures (published MFU, TFLOPS, derived step_s)
  // Why the row could not be read ("runs.csv:17: column 'vpp': expected an integer ..."), empty when
  // it was: a bad row is listed with this, the other rows are still read and compared.
  std::string unreadable{};

  [[nodiscard]] bool is_moe() const { return moe_experts.has_value() && *moe_experts > 0; }
  // The id without its number: "O-ILM" for "O-ILM-01" (the source a row comes from).
  [[nodiscard]] std::string source_group() const;
};

// The columns every open-set file has (runs.csv's header).
const std::vector<std::string>& open_run_columns();

// True when the first non-empty line of `text` has the open-set columns id, gpu, measured_quantity
// and measured_value (how `validate --measured` tells this format from vTrain's).
bool is_open_runs_csv(std::string_view text);

// Longest cell a row may have (the open set's longest, a notes cell, has 916 characters).
inline constexpr std::size_t kMaxOpenCellChars = 4096;

// Parses the whole file. Checks per row: as many cells as the header, the numeric columns are
// positive integers (the optional ones may be empty; shared_experts may be 0), tp*pp*cp*dp == gpus,
// global_batch divisible by dp*micro_batch, a known measured_quantity and a positive finite
// measured_value, a non-empty id, and no cell longer than kMaxOpenCellChars. A row that fails one
// comes back with OpenRun::unreadable set (file:line, column, what is allowed) and only its id (or
// "line N"), file and line; the file's other rows are read as usual. Throws std::invalid_argument
// for the file as a whole: no header line, or a header without the open-set columns.
std::vector<OpenRun> parse_open_runs_csv(std::string_view text, const std::string& name);

}  // namespace mofasim::analysis
