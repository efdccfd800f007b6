// Edit distance and did-you-mean messages (see did_you_mean.h).
#include "sim/scenario/did_you_mean.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace mofasim::scenario {
namespace {

char fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

int allowed_distance(std::size_t length) {
  if (length <= 3) return 1;
  if (length <= 8) return 2;
  return 3;
}

}  // namespace

int edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  // d[i][j] = distance between a[0, i) and b[0, j), kept as three rolling rows.
  std::vector<int> before(m + 1), previous(m + 1), current(m + 1);
  for (std::size_t j = 0; j <= m; ++j) previous[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= n; ++i) {
    current[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= m; ++j) {
      const int cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1])) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[m];
}

std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates) {
  std::optional<std::string> best;
  int best_distance = allowed_distance(word.size()) + 1;
  for (const auto& candidate : candidates) {
    // The distance is at least the length difference: skip the O(n*m) table when that already
    // rules the candidate out, so a megabyte-long unknown key costs no more than a short one.
    const auto gap = word.size() > candidate.size() ? word.size() - candidate.size() : candidate.size() - word.size();
    if (gap >= static_cast<std::size_t>(best_distance)) continue;
    const int d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  if (best || word.empty()) return best;
  // A clipped name ("interleaved" for "interleaved-1f1b", "TB" for "TB/s") is a prefix.
  for (const auto& candidate : candidates) {
    if (candidate.size() > word.size() && candidate.compare(0, word.size(), word) == 0) return candidate;
  }
  return best;
}

std::string join_names(std::span<const std::string> names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::string unknown_name_message(std::string_view what, std::string_view word,
                                 std::span<const std::string> candidates) {
  constexpr std::size_t kMaxShown = 60;  // a runaway key is shown clipped, not in full
  std::string shown(word.substr(0, kMaxShown));
  if (word.size() > kMaxShown) shown += "...";
  std::string message = "unknown " + std::string(what) + " '" + shown + "'; ";
  if (auto near = closest_match(word, candidates)) return message + "did you mean '" + *near + "'?";
  if (candidates.empty()) return message + "none are defined";
  return message + "expected one of " + join_names(candidates);
}

}  // namespace mofasim::scenario
