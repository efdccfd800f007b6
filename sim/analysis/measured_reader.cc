// The measured-iteration CSV reader: header lookup through the column mapping, strict numeric
// parsing, and per-row consistency checks, each error naming file:line and the column.
#include "sim/analysis/measured_reader.h"

#include "model/spec.h"
#include "sim/analysis/input_file.h"

#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace mofasim::analysis {
namespace {

struct FieldInfo {
  MeasuredField field;
  std::string_view name;
  std::string_view default_column;  // empty: no default header
};

constexpr std::array<FieldInfo, kMeasuredFieldCount> kFields{{
    {MeasuredField::kGpus, "gpus", "# GPUs"},
    {MeasuredField::kGlobalBatch, "global_batch", "global batch"},
    {MeasuredField::kMicroBatch, "micro_batch", "micro batch"},
    {MeasuredField::kHiddenSize, "hidden_size", "hidden size"},
    {MeasuredField::kAttentionHeads, "attention_heads", "attention heads"},
    {MeasuredField::kLayers, "layers", "# layers"},
    {MeasuredField::kSeqLength, "seq_length", "sequence length"},
    {MeasuredField::kTp, "tp", "tensor parallelism"},
    {MeasuredField::kDp, "dp", "data parallelism"},
    {MeasuredField::kPp, "pp", "pipeline parallelism"},
    {MeasuredField::kIterationTimeMs, "iteration_time_ms", "iteration time (ms)"},
    {MeasuredField::kIterationTimeS, "iteration_time_s", ""},
    {MeasuredField::kParametersBillion, "parameters_billion", "Parameters (billion)"},
}};

std::string field_list() {
  std::string out;
  for (const auto& f : kFields) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

}  // namespace

std::vector<std::string> split_measured_csv_line(std::string_view line, const std::string& where) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  bool was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"' && trim_csv_space(cur).empty()) {
      quoted = true;
      was_quoted = true;
      cur.clear();
    } else if (c == ',') {
      out.emplace_back(was_quoted ? cur : std::string(trim_csv_space(cur)));
      cur.clear();
      was_quoted = false;
    } else {
      cur += c;
    }
  }
  if (quoted) throw std::invalid_argument(where + ": unterminated double quote");
  out.emplace_back(was_quoted ? cur : std::string(trim_csv_space(cur)));
  return out;
}

namespace {

double parse_number(std::string_view text, const std::string& where, std::string_view column) {
  const std::string_view t = trim_csv_space(text);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(value)) {
    throw std::invalid_argument(where + ": column '" + std::string(column) + "': expected a number, got '" +
                                std::string(t) + "'");
  }
  return value;
}

int parse_positive_int(std::string_view text, const std::string& where, std::string_view column) {
  const double v = parse_number(text, where, column);
  if (v < 1 || v != std::floor(v) || v > 1e9) {
    throw std::invalid_argument(where + ": column '" + std::string(column) + "': expected a positive integer, got '" +
                                std::string(trim_csv_space(text)) + "'");
  }
  return static_cast<int>(v);
}

}  // namespace

std::string_view measured_field_name(MeasuredField field) { return kFields[static_cast<std::size_t>(field)].name; }

ColumnMapping ColumnMapping::vtrain_default() {
  ColumnMapping m;
  for (const auto& f : kFields) {
    if (!f.default_column.empty()) m.entries.push_back({.column = std::string(f.default_column), .field = f.field});
  }
  return m;
}

ColumnMapping ColumnMapping::with_overrides(const std::vector<std::string>& overrides) {
  try {
    return with_overrides_unchecked(overrides);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--mapping: ") + e.what());
  }
}

ColumnMapping ColumnMapping::with_overrides_unchecked(const std::vector<std::string>& overrides) {
  ColumnMapping m = vtrain_default();
  for (const std::string& entry : overrides) {
    const auto eq = entry.rfind('=');
    if (eq == std::string::npos) {
      throw std::invalid_argument("'" + entry + "': expected column=field, field one of: " + field_list());
    }
    const std::string column(trim_csv_space(std::string_view(entry).substr(0, eq)));
    const std::string_view name = trim_csv_space(std::string_view(entry).substr(eq + 1));
    if (column.empty()) throw std::invalid_argument("'" + entry + "': the column name is empty");
    const FieldInfo* info = nullptr;
    for (const auto& f : kFields) {
      if (f.name == name) info = &f;
    }
    if (info == nullptr) {
      throw std::invalid_argument("'" + entry + "': unknown field '" + std::string(name) +
                                  "'; allowed: " + field_list());
    }
    std::erase_if(m.entries, [&](const Entry& e) { return e.field == info->field || e.column == column; });
    // Giving one of the two time fields replaces the other one's default.
    if (info->field == MeasuredField::kIterationTimeS || info->field == MeasuredField::kIterationTimeMs) {
      const MeasuredField other = info->field == MeasuredField::kIterationTimeS ? MeasuredField::kIterationTimeMs
                                                                                : MeasuredField::kIterationTimeS;
      std::erase_if(m.entries, [&](const Entry& e) {
        return e.field == other && e.column == kFields[static_cast<std::size_t>(other)].default_column;
      });
    }
    m.entries.push_back({.column = column, .field = info->field});
  }
  return m;
}

std::vector<MeasuredRow> parse_measured_csv(std::string_view text, const std::string& name,
                                            const ColumnMapping& mapping) {
  std::vector<MeasuredRow> rows;
  std::array<int, kMeasuredFieldCount> index{};  // column index of each field, -1 when absent
  index.fill(-1);
  bool have_header = false;
  std::size_t header_columns = 0;
  for_each_nonblank_line(text, [&](int line_no, std::string_view line) {
    const std::string where = name + ":" + std::to_string(line_no);
    const std::vector<std::string> cells = split_measured_csv_line(line, where);
    if (!have_header) {
      have_header = true;
      header_columns = cells.size();
      for (const auto& entry : mapping.entries) {
        for (std::size_t c = 0; c < cells.size(); ++c) {
          if (cells[c] == entry.column) index[static_cast<std::size_t>(entry.field)] = static_cast<int>(c);
        }
      }
      for (const auto& f : kFields) {
        const bool optional = f.field == MeasuredField::kParametersBillion ||
                              f.field == MeasuredField::kIterationTimeMs || f.field == MeasuredField::kIterationTimeS;
        if (!optional && index[static_cast<std::size_t>(f.field)] < 0) {
          std::string column = "?";
          for (const auto& entry : mapping.entries) {
            if (entry.field == f.field) column = entry.column;
          }
          throw std::invalid_argument(where + ": no column '" + column + "' for field " + std::string(f.name) +
                                      "; give a mapping column=" + std::string(f.name));
        }
      }
      const bool ms = index[static_cast<std::size_t>(MeasuredField::kIterationTimeMs)] >= 0;
      const bool s = index[static_cast<std::size_t>(MeasuredField::kIterationTimeS)] >= 0;
      if (ms == s) {
        throw std::invalid_argument(where + ": " +
                                    (ms ? std::string("both iteration_time_ms and iteration_time_s have a column; "
                                                      "map only one")
                                        : std::string("no column for iteration_time_ms (default 'iteration time "
                                                      "(ms)') or iteration_time_s; give a mapping")));
      }
      return true;
    }
    if (cells.size() != header_columns) {
      throw std::invalid_argument(where + ": expected " + std::to_string(header_columns) + " columns as in the header, got " +
                                  std::to_string(cells.size()));
    }
    auto column_name = [&](MeasuredField f) {
      for (const auto& entry : mapping.entries) {
        if (entry.field == f) return entry.column;
      }
      return std::string(measured_field_name(f));
    };
    auto cell = [&](MeasuredField f) -> const std::string& {
      return cells[static_cast<std::size_t>(index[static_cast<std::size_t>(f)])];
    };
    auto integer = [&](MeasuredField f) { return parse_positive_int(cell(f), where, column_name(f)); };
    MeasuredRow row{.source = name,
                    .line = line_no,
                    .gpus = integer(MeasuredField::kGpus),
                    .global_batch = integer(MeasuredField::kGlobalBatch),
                    .micro_batch = integer(MeasuredField::kMicroBatch),
                    .hidden_size = integer(MeasuredField::kHiddenSize),
                    .attention_heads = integer(MeasuredField::kAttentionHeads),
                    .layers = integer(MeasuredField::kLayers),
                    .seq_length = integer(MeasuredField::kSeqLength),
                    .tp = integer(MeasuredField::kTp),
                    .dp = integer(MeasuredField::kDp),
                    .pp = integer(MeasuredField::kPp)};
    const MeasuredField time_field = index[static_cast<std::size_t>(MeasuredField::kIterationTimeMs)] >= 0
                                         ? MeasuredField::kIterationTimeMs
                                         : MeasuredField::kIterationTimeS;
    const double t = parse_number(cell(time_field), where, column_name(time_field));
    if (t <= 0) {
      throw std::invalid_argument(where + ": column '" + column_name(time_field) + "': expected a positive time, got '" +
                                  cell(time_field) + "'");
    }
    row.iteration_time_s = time_field == MeasuredField::kIterationTimeMs ? t * 1e-3 : t;
    if (index[static_cast<std::size_t>(MeasuredField::kParametersBillion)] >= 0) {
      const std::string& p = cell(MeasuredField::kParametersBillion);
      if (!trim_csv_space(p).empty()) {
        const double billions = parse_number(p, where, column_name(MeasuredField::kParametersBillion));
        if (billions <= 0) {
          throw std::invalid_argument(where + ": column '" + column_name(MeasuredField::kParametersBillion) +
                                      "': expected a positive parameter count, got '" + p + "'");
        }
        row.parameters_billion = billions;
      }
    }
    if (static_cast<long long>(row.tp) * row.dp * row.pp != row.gpus) {
      throw std::invalid_argument(where + ": column '" + column_name(MeasuredField::kGpus) + "': tp*dp*pp = " +
                                  std::to_string(static_cast<long long>(row.tp) * row.dp * row.pp) + " but gpus = " +
                                  std::to_string(row.gpus));
    }
    if (!model::batch_divides(row.global_batch, row.micro_batch, row.dp)) {
      throw std::invalid_argument(where + ": column '" + column_name(MeasuredField::kGlobalBatch) + "': global batch " +
                                  std::to_string(row.global_batch) + " is not a multiple of micro batch * dp = " +
                                  std::to_string(row.micro_batch * row.dp));
    }
    rows.push_back(std::move(row));
      return true;
  });
  if (!have_header) throw std::invalid_argument(name + ":1: empty file, expected a header line");
  return rows;
}

std::vector<MeasuredRow> read_measured_csv(const std::string& path, const ColumnMapping& mapping) {
  const std::string text = read_input_file(path, "measured-iteration file");
  try {
    return parse_measured_csv(text, path, mapping);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());  // already located at path:line
  }
}

}  // namespace mofasim::analysis
