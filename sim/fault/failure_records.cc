// Parsing of historical failure records and the fit of rate, class mix and recovery samples.
#include "sim/fault/failure_records.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mofasim::fault {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

bool parse_double(std::string_view s, double& out) {
  if (s.empty()) return false;
  // std::from_chars for double is in libstdc++ 11+.
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(out);
}

bool parse_int(std::string_view s, int& out) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "YYYY-MM-DDTHH:MM:SS[.fff][Z]" or with a space instead of T.
bool parse_iso8601(std::string_view s, double& out) {
  if (!s.empty() && s.back() == 'Z') s.remove_suffix(1);
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' ||
      s[16] != ':') {
    return false;
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double sec = 0;
  if (!parse_int(s.substr(0, 4), y) || !parse_int(s.substr(5, 2), mo) || !parse_int(s.substr(8, 2), d) ||
      !parse_int(s.substr(11, 2), h) || !parse_int(s.substr(14, 2), mi) || !parse_double(s.substr(17), sec)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec < 0 || sec >= 61) return false;
  out = static_cast<double>(days_from_civil(y, mo, d)) * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
  return true;
}

}  // namespace

std::vector<FailureRecord> parse_failure_records(std::istream& in, const std::string& source_name) {
  std::vector<FailureRecord> records;
  std::string line;
  int line_no = 0;
  int col_time = -1, col_class = -1, col_recovery = -1;
  std::size_t header_fields = 0;
  auto fail = [&](const std::string& message) {
    throw std::invalid_argument(source_name + ":" + std::to_string(line_no) + ": " + message);
  };
  while (std::getline(in, line)) {
    ++line_no;
    const std::string_view view = trim(line);
    if (view.empty() || view.front() == '#') continue;
    const std::vector<std::string_view> fields = split_commas(view);
    if (col_time < 0) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i] == "timestamp") col_time = static_cast<int>(i);
        if (fields[i] == "class") col_class = static_cast<int>(i);
        if (fields[i] == "recovery_seconds") col_recovery = static_cast<int>(i);
      }
      if (col_time < 0 || col_class < 0 || col_recovery < 0) {
        fail("header must name the columns timestamp, class and recovery_seconds");
      }
      header_fields = fields.size();
      continue;
    }
    if (fields.size() != header_fields) {
      fail("expected " + std::to_string(header_fields) + " fields, got " + std::to_string(fields.size()));
    }
    FailureRecord r;
    const std::string_view ts = fields[static_cast<std::size_t>(col_time)];
    if (!parse_double(ts, r.timestamp_s) && !parse_iso8601(ts, r.timestamp_s)) {
      fail("timestamp: expected seconds or YYYY-MM-DDTHH:MM:SSZ, got \"" + std::string(ts) + "\"");
    }
    r.failure_class = std::string(fields[static_cast<std::size_t>(col_class)]);
    if (r.failure_class.empty()) fail("class must not be empty");
    const std::string_view rec = fields[static_cast<std::size_t>(col_recovery)];
    if (!parse_double(rec, r.recovery_s) || r.recovery_s < 0) {
      fail("recovery_seconds: expected a number >= 0, got \"" + std::string(rec) + "\"");
    }
    records.push_back(std::move(r));
  }
  if (col_time < 0) {
    line_no = std::max(line_no, 1);
    fail("no header line (timestamp,class,recovery_seconds)");
  }
  return records;
}

std::vector<FailureRecord> load_failure_records(const std::string& path) {
  // Only a regular file of bounded size: /dev/zero or a FIFO would read forever.
  constexpr std::uintmax_t kMaxBytes = std::uintmax_t{64} << 20;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw std::invalid_argument(path + ": cannot open failure records");
  if (!std::filesystem::is_regular_file(status)) {
    throw std::invalid_argument(path + ": failure records must be a regular file");
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxBytes) {
    throw std::invalid_argument(path + ": failure records file is over the limit of " + std::to_string(kMaxBytes) +
                                " bytes");
  }
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot open failure records");
  return parse_failure_records(in, path);
}

FailureHistoryFit fit_failure_history(const std::vector<FailureRecord>& records, std::int64_t recorded_units) {
  if (recorded_units < 1) throw std::invalid_argument("failure history: recorded_units must be >= 1");
  if (records.size() < 2) throw std::invalid_argument("failure history: at least two records are needed");
  std::vector<double> times;
  times.reserve(records.size());
  for (const FailureRecord& r : records) times.push_back(r.timestamp_s);
  std::sort(times.begin(), times.end());
  const double span = times.back() - times.front();
  if (!(span > 0)) throw std::invalid_argument("failure history: all records have the same timestamp");
  FailureHistoryFit fit;
  const double gaps = static_cast<double>(records.size() - 1);
  fit.node_failure_rate_per_day = gaps / span * 86400.0 / static_cast<double>(recorded_units);
  fit.process.kind = model::FailureProcessKind::kEmpirical;
  fit.process.recorded_units = recorded_units;
  for (std::size_t i = 1; i < times.size(); ++i) fit.process.inter_arrival_s.push_back(times[i] - times[i - 1]);
  std::map<std::string, std::size_t> index;  // class name -> position in fit.classes
  for (const FailureRecord& r : records) {
    auto [it, inserted] = index.try_emplace(r.failure_class, fit.classes.size());
    if (inserted) {
      fit.classes.push_back({.name = r.failure_class, .weight = 0, .recovery = {.kind = model::RecoveryKind::kEmpirical}});
    }
    model::FailureClass& c = fit.classes[it->second];
    c.weight += 1;
    c.recovery.samples_s.push_back(r.recovery_s);
  }
  return fit;
}

void apply_failure_history(model::FaultSpec& spec, const FailureHistoryFit& fit) {
  spec.node_failure_rate_per_day = fit.node_failure_rate_per_day;
  spec.classes = fit.classes;
  spec.process = fit.process;
}

}  // namespace mofasim::fault
