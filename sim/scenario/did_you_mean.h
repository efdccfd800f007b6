// Suggestions for misspelt names (unknown YAML keys, enum spellings, preset names, units):
// the closest candidate by edit distance, when it is close enough to be a plausible typo.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mofasim::scenario {

// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), case-insensitive.
int edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, if its distance is at most 1 for words of up to 3 letters,
// 2 up to 8 letters and 3 beyond; failing that, the first candidate that starts with `word`
// ("interleaved" -> "interleaved-1f1b"). Ties go to the earlier candidate, so the answer is stable.
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates);

// "a, b, c".
std::string join_names(std::span<const std::string> names);

// "unknown <what> 'x'; did you mean 'y'?" or "unknown <what> 'x'; expected one of a, b, c".
std::string unknown_name_message(std::string_view what, std::string_view word,
                                  std::span<const std::string> candidates);

}  // namespace mofasim::scenario
