// Case-insensitive word search in a row's text columns (measured_open_text.h).
#include "sim/analysis/measured_open_text.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace mofasim::analysis {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has(const std::string& text, const std::string& needle) { return lower(text).find(lower(needle)) != std::string::npos; }

bool has_any(const std::string& text, std::initializer_list<const char*> needles) {
  return std::any_of(needles.begin(), needles.end(), [&](const char* n) { return has(text, n); });
}

bool names_fsdp_on(const std::string& text) {
  static const std::regex kOff(R"(fsdp\s?[=:]\s?(0|false|off))", std::regex::icase);
  return has_any(text, {"fsdp", "fully_shard"}) && !std::regex_search(text, kOff);
}

}  // namespace mofasim::analysis
