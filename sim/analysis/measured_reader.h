// Reading measured training-iteration times from a CSV file: one row per run (model shape,
// parallel layout, batch sizes and the measured time of one iteration), with a column mapping so
// that files whose headers differ can be read without editing them.
//
// Fields (the names a mapping uses) and the default header of each, which is the format of
// vTrain's public ground-truth files (VIA-Research/vTrain, data/ground_truth_*.csv):
//   gpus                "# GPUs"                  global_batch     "global batch"
//   micro_batch         "micro batch"             hidden_size      "hidden size"
//   attention_heads     "attention heads"         layers           "# layers"
//   seq_length          "sequence length"         tp               "tensor parallelism"
//   dp                  "data parallelism"        pp               "pipeline parallelism"
//   iteration_time_ms   "iteration time (ms)"     parameters_billion "Parameters (billion)" (optional)
//   iteration_time_s    (no default; a file gives either iteration_time_ms or iteration_time_s)
// A mapping entry "column=field" says that the header `column` holds `field` (it replaces that
// field's default header), e.g. {"iter_ms=iteration_time_ms", "GPUs=gpus"}. Columns that map to
// no field are ignored. Header names are matched exactly after trimming surrounding spaces.
//
// Every error is a std::invalid_argument of one line naming `file:line`, the column and the value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mofasim::analysis {

enum class MeasuredField {
  kGpus,
  kGlobalBatch,
  kMicroBatch,
  kHiddenSize,
  kAttentionHeads,
  kLayers,
  kSeqLength,
  kTp,
  kDp,
  kPp,
  kIterationTimeMs,
  kIterationTimeS,
  kParametersBillion,
};
inline constexpr int kMeasuredFieldCount = 13;

// The mapping field name ("gpus", "iteration_time_ms", ...).
std::string_view measured_field_name(MeasuredField field);

// Header -> field, one entry per field that has a column.
struct ColumnMapping {
  struct Entry {
    std::string column;
    MeasuredField field = MeasuredField::kGpus;
  };
  std::vector<Entry> entries;

  // The default mapping described above.
  static ColumnMapping vtrain_default();
  // vtrain_default() with each "column=field" entry replacing that field's column. Throws an
  // InputError (sim/analysis/input_file.h) starting "--mapping: " on an entry without '=', an
  // empty column or an unknown field name.
  static ColumnMapping with_overrides(const std::vector<std::string>& overrides);

 private:
  static ColumnMapping with_overrides_unchecked(const std::vector<std::string>& overrides);
};

// One measured run, as read (no model assumptions applied yet).
struct MeasuredRow {
  std::string source{};  // file name given to the reader
  int line = 0;        // 1-based line in that file
  int gpus = 0;
  int global_batch = 0;
  int micro_batch = 0;
  int hidden_size = 0;
  int attention_heads = 0;
  int layers = 0;
  int seq_length = 0;
  int tp = 0;
  int dp = 0;
  int pp = 0;
  double iteration_time_s = 0;
  std::optional<double> parameters_billion{};
};

// Splits one CSV line into cells (surrounding spaces trimmed); a cell may be wrapped in double
// quotes ("" inside is one quote). Throws std::invalid_argument "<where>: unterminated double quote".
std::vector<std::string> split_measured_csv_line(std::string_view line, const std::string& where);

// `s` without leading and trailing spaces, tabs and carriage returns.
inline std::string_view trim_csv_space(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// Calls `each(line_number, line)` (1-based) for every line of `text` that is not blank; stops when
// `each` returns false. Both CSV readers (vTrain and the open set) walk their text with it.
template <typename F>
void for_each_nonblank_line(std::string_view text, F each) {
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto end = text.find('\n', pos);
    const std::string_view line = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? text.size() + 1 : end + 1;
    ++line_no;
    if (trim_csv_space(line).empty()) continue;
    if (!each(line_no, line)) return;
  }
}

// Parses CSV text (first non-empty line is the header; empty lines are skipped; fields may be
// double-quoted). `name` stands for the file in error messages. Checks per row: every required
// field present and positive, gpus == tp * dp * pp, global_batch divisible by micro_batch * dp.
std::vector<MeasuredRow> parse_measured_csv(std::string_view text, const std::string& name,
                                            const ColumnMapping& mapping = ColumnMapping::vtrain_default());

// Reads the file at `path` (a regular file of at most kMaxInputFileBytes) and parses it; every
// error is an InputError naming `path` (and the line).
std::vector<MeasuredRow> read_measured_csv(const std::string& path,
                                           const ColumnMapping& mapping = ColumnMapping::vtrain_default());

}  // namespace mofasim::analysis
