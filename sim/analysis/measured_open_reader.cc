// The open-set CSV reader: header lookup by the file's own column names, strict numbers, and the
// per-row consistency checks the set's README promises, each error naming file:line and the column.
#include "sim/analysis/measured_open_reader.h"

#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>
#include <system_error>

#include "sim/analysis/measured_reader.h"

namespace mofasim::analysis {
namespace {

double number(const std::string& cell, const std::string& where, const std::string& column) {
  const std::string_view t = trim_csv_space(cell);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(value)) {
    throw std::invalid_argument(where + ": column '" + column + "': expected a number, got '" + cell + "'");
  }
  return value;
}

// The largest value of each count column: the scenario schema's limit for the same field
// (proto/scenario.proto (max)), so a row holds nothing a scenario file could not.
int column_max(const std::string& column) {
  static const std::map<std::string, int> kMax = {
      {"gpus", 1048576},        {"gpus_per_node", 1024},     {"layers", 10000},       {"hidden", 1048576},
      {"heads", 65536},         {"kv_heads", 65536},         {"ffn_hidden", 16777216}, {"vocab", 16777216},
      {"seq", 16777216},        {"moe_experts", 16384},      {"moe_topk", 16384},     {"moe_ffn_hidden", 16777216},
      {"shared_experts", 16384}, {"tp", 1024},               {"pp", 1024},            {"vpp", 1024},
      {"cp", 1024},             {"ep", 16384},               {"dp", 1048576},         {"micro_batch", 65536},
      {"global_batch", 16777216}};
  return kMax.at(column);
}

int count(const std::string& cell, const std::string& where, const std::string& column, int minimum) {
  const double v = number(cell, where, column);
  const int maximum = column_max(column);
  if (v < minimum || v != std::floor(v) || v > maximum) {
    throw std::invalid_argument(where + ": column '" + column + "': expected an integer in [" + std::to_string(minimum) +
                                ", " + std::to_string(maximum) + "], got '" + cell + "'");
  }
  return static_cast<int>(v);
}

// One data row of the file (parse_open_runs_csv's row checks); throws std::invalid_argument naming
// where:column and what is allowed.
OpenRun read_row(const std::vector<std::string>& cells, std::size_t header_columns,
                 const std::map<std::string, std::size_t>& index, const std::string& where, const std::string& name,
                 int line_no) {
  if (cells.size() != header_columns) {
    throw std::invalid_argument(where + ": expected " + std::to_string(header_columns) +
                                " columns as in the header, got " + std::to_string(cells.size()));
  }
  // The text columns are read by pattern (measured_open_mapping.cc, measured_open_stack.cc); a cell
  // of megabytes would only be a broken file, and the patterns' cost grows with the text.
  for (const auto& [column, c] : index) {
    if (c < cells.size() && cells[c].size() > kMaxOpenCellChars) {
      throw std::invalid_argument(where + ": column '" + column + "': a cell of " + std::to_string(cells[c].size()) +
                                  " characters, at most " + std::to_string(kMaxOpenCellChars) + " allowed");
    }
  }
  auto cell = [&](const char* column) -> const std::string& { return cells[index.at(column)]; };
  auto integer = [&](const char* column) { return count(cell(column), where, column, 1); };
  auto optional_integer = [&](const char* column, int minimum) -> std::optional<int> {
    if (trim_csv_space(cell(column)).empty()) return std::nullopt;
    return count(cell(column), where, column, minimum);
  };
  OpenRun r{.file = name,
            .line = line_no,
            .id = cell("id"),
            .source = cell("source"),
            .gpu = cell("gpu"),
            .gpus = integer("gpus"),
            .gpus_per_node = integer("gpus_per_node"),
            .interconnect = cell("interconnect"),
            .model = cell("model"),
            .layers = integer("layers"),
            .hidden = integer("hidden"),
            .heads = integer("heads"),
            .kv_heads = optional_integer("kv_heads", 1),
            .ffn_hidden = optional_integer("ffn_hidden", 1),
            .vocab = integer("vocab"),
            .seq = integer("seq"),
            .moe_experts = optional_integer("moe_experts", 1),
            .moe_topk = optional_integer("moe_topk", 1),
            .moe_ffn_hidden = optional_integer("moe_ffn_hidden", 1),
            .shared_experts = optional_integer("shared_experts", 0),
            .tp = integer("tp"),
            .pp = integer("pp"),
            .vpp = integer("vpp"),
            .cp = integer("cp"),
            .ep = integer("ep"),
            .dp = integer("dp"),
            .micro_batch = integer("micro_batch"),
            .global_batch = integer("global_batch"),
            .recompute = cell("recompute"),
            .precision = cell("precision"),
            .optimizer_sharding = cell("optimizer_sharding"),
            .flops_convention = cell("flops_convention"),
            .notes = cell("notes")};
  if (r.id.empty()) throw std::invalid_argument(where + ": column 'id': empty");
  const std::string& q = cell("measured_quantity");
  bool known = false;
  for (OpenQuantity k : {OpenQuantity::kStepSeconds, OpenQuantity::kTokensPerSecondPerGpu, OpenQuantity::kTflopsPerGpu,
                         OpenQuantity::kMfu}) {
    if (q == open_quantity_name(k)) {
      r.quantity = k;
      known = true;
    }
  }
  if (!known) {
    throw std::invalid_argument(where + ": column 'measured_quantity': expected step_s, tokens_per_s_per_gpu, "
                                "tflops_per_gpu or mfu, got '" + q + "'");
  }
  r.measured_value = number(cell("measured_value"), where, "measured_value");
  if (r.measured_value <= 0) {
    throw std::invalid_argument(where + ": column 'measured_value': expected a positive value, got '" +
                                cell("measured_value") + "'");
  }
  const long long product = static_cast<long long>(r.tp) * r.pp * r.cp * r.dp;
  if (product != r.gpus) {
    throw std::invalid_argument(where + ": column 'gpus': tp*pp*cp*dp = " + std::to_string(product) +
                                " but gpus = " + std::to_string(r.gpus));
  }
  const long long per_step = static_cast<long long>(r.dp) * r.micro_batch;
  if (r.global_batch % per_step != 0) {
    throw std::invalid_argument(where + ": column 'global_batch': " + std::to_string(r.global_batch) +
                                " is not a multiple of dp * micro_batch = " + std::to_string(per_step));
  }
  return r;
}

}  // namespace

std::string_view open_quantity_name(OpenQuantity q) {
  switch (q) {
    case OpenQuantity::kStepSeconds: return "step_s";
    case OpenQuantity::kTokensPerSecondPerGpu: return "tokens_per_s_per_gpu";
    case OpenQuantity::kTflopsPerGpu: return "tflops_per_gpu";
    case OpenQuantity::kMfu: return "mfu";
  }
  return "?";
}

std::string OpenRun::source_group() const {
  const auto dash = id.rfind('-');
  return dash == std::string::npos || dash == 0 ? id : id.substr(0, dash);
}

const std::vector<std::string>& open_run_columns() {
  static const std::vector<std::string> kColumns = {
      "id",          "source",       "gpu",           "gpus",           "gpus_per_node",      "interconnect",
      "model",       "layers",       "hidden",        "heads",          "kv_heads",           "ffn_hidden",
      "vocab",       "seq",          "moe_experts",   "moe_topk",       "moe_ffn_hidden",     "shared_experts",
      "tp",          "pp",           "vpp",           "cp",             "ep",                 "dp",
      "micro_batch", "global_batch", "recompute",     "precision",      "optimizer_sharding", "measured_quantity",
      "measured_value", "flops_convention", "notes"};
  return kColumns;
}

bool is_open_runs_csv(std::string_view text) {
  bool open = false;
  for_each_nonblank_line(text, [&](int, std::string_view line) {
    std::vector<std::string> cells;
    try {
      cells = split_measured_csv_line(line, "header");
    } catch (const std::invalid_argument&) {
      return false;
    }
    int found = 0;
    for (const std::string& c : cells) {
      if (c == "id" || c == "gpu" || c == "measured_quantity" || c == "measured_value") ++found;
    }
    open = found == 4;
    return false;  // only the header decides
  });
  return open;
}

std::vector<OpenRun> parse_open_runs_csv(std::string_view text, const std::string& name) {
  std::vector<OpenRun> rows;
  std::map<std::string, std::size_t> index;
  std::size_t header_columns = 0;
  bool have_header = false;
  for_each_nonblank_line(text, [&](int line_no, std::string_view line) {
    const std::string where = name + ":" + std::to_string(line_no);
    if (!have_header) {
      const std::vector<std::string> cells = split_measured_csv_line(line, where);
      have_header = true;
      header_columns = cells.size();
      for (std::size_t c = 0; c < cells.size(); ++c) index.emplace(cells[c], c);
      for (const std::string& column : open_run_columns()) {
        if (!index.contains(column)) {
          throw std::invalid_argument(where + ": no column '" + column + "' (the open-set format has: id, source, gpu, "
                                      "..., measured_quantity, measured_value, flops_convention, notes)");
        }
      }
      return true;
    }
    std::vector<std::string> cells;
    try {
      cells = split_measured_csv_line(line, where);
      rows.push_back(read_row(cells, header_columns, index, where, name, line_no));
    } catch (const std::invalid_argument& e) {
      // A bad row is listed with its reason; the file's other rows are still compared.
      OpenRun bad{.file = name, .line = line_no, .unreadable = e.what()};
      const std::size_t id = index.at("id");
      const bool has_id = id < cells.size() && !cells[id].empty() && cells[id].size() <= kMaxOpenCellChars;
      bad.id = has_id ? cells[id] : "line " + std::to_string(line_no);
      rows.push_back(std::move(bad));
    }
    return true;
  });
  if (!have_header) throw std::invalid_argument(name + ":1: empty file, expected a header line");
  return rows;
}

}  // namespace mofasim::analysis
