// TraceFilter: stage selection and the option parsers.
#include "sim/executor/trace_filter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mofasim::executor {
namespace {

int parse_index(std::string_view s, std::string_view whole) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) {
    throw std::invalid_argument("expected a list of non-negative integers and ranges like 0,2,5-7, got '" +
                                std::string(whole) + "' ('" + std::string(s) + "' is not an index)");
  }
  return v;
}

std::int64_t parse_duration_ns(std::string_view s, std::string_view whole) {
  std::size_t unit_at = s.size();
  while (unit_at > 0 && std::isalpha(static_cast<unsigned char>(s[unit_at - 1]))) --unit_at;
  const std::string_view number = s.substr(0, unit_at);
  const std::string_view unit = s.substr(unit_at);
  double scale = 0;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  double v = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (scale == 0 || number.empty() || ec != std::errc() || end != number.data() + number.size() || !std::isfinite(v) ||
      v < 0 || v * scale > 9.2e18) {
    throw std::invalid_argument("expected START:END with durations like 120ms:0.5s (units ns, us, ms, s), got '" +
                                std::string(whole) + "' ('" + std::string(s) + "' is not a duration)");
  }
  return static_cast<std::int64_t>(std::llround(v * scale));
}

}  // namespace

std::vector<int> traced_stages(const TraceFilter& f, std::span<const int> stage_ranks) {
  const int stages = static_cast<int>(stage_ranks.size());
  for (int s : f.stages) {
    if (s >= stages) {
      throw TraceFilterError("stages", "stage " + std::to_string(s) + " does not exist (stages are 0-" +
                                  std::to_string(stages - 1) + ")");
    }
  }
  std::vector<int> out;
  for (int s = 0; s < stages; ++s) {
    if (!f.stages.empty() && !std::binary_search(f.stages.begin(), f.stages.end(), s)) continue;
    if (!f.ranks.empty() && !std::binary_search(f.ranks.begin(), f.ranks.end(), stage_ranks[static_cast<std::size_t>(s)])) continue;
    out.push_back(s);
  }
  for (int rank : f.ranks) {
    bool shown = false;
    for (int s = 0; s < stages && !shown; ++s) shown = stage_ranks[static_cast<std::size_t>(s)] == rank;
    if (!shown) {
      std::string ranks;
      for (int s = 0; s < stages; ++s) ranks += (s == 0 ? "" : ",") + std::to_string(stage_ranks[static_cast<std::size_t>(s)]);
      throw TraceFilterError("ranks", "rank " + std::to_string(rank) +
                                  " is not traced (the trace shows the replica-0 rank of each stage: " + ranks + ")");
    }
  }
  return out;
}

std::vector<int> parse_index_list(std::string_view text) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view part = text.substr(pos, comma - pos);
    const std::size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      out.push_back(parse_index(part, text));
    } else {
      const int lo = parse_index(part.substr(0, dash), text);
      const int hi = parse_index(part.substr(dash + 1), text);
      if (hi < lo) {
        throw std::invalid_argument("range '" + std::string(part) + "' in '" + std::string(text) + "' runs backwards");
      }
      if (hi - lo > 1'000'000) throw std::invalid_argument("range '" + std::string(part) + "' is too long");
      for (int i = lo; i <= hi; ++i) out.push_back(i);
    }
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::pair<std::int64_t, std::int64_t> parse_time_window(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos) {
    throw std::invalid_argument("expected START:END with durations like 120ms:0.5s, got '" + std::string(text) + "'");
  }
  const std::string_view a = text.substr(0, colon);
  const std::string_view b = text.substr(colon + 1);
  const std::int64_t from = a.empty() ? 0 : parse_duration_ns(a, text);
  const std::int64_t to = b.empty() ? std::numeric_limits<std::int64_t>::max() : parse_duration_ns(b, text);
  if (to <= from) throw std::invalid_argument("END must be after START, got '" + std::string(text) + "'");
  return {from, to};
}

}  // namespace mofasim::executor
