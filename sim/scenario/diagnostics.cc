// Formatting and collection of scenario errors (see diagnostics.h).
#include "sim/scenario/diagnostics.h"

#include <utility>

namespace mofasim::scenario {
namespace {

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) {
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}

// "a.b[2].c" -> "a.b[2]" -> "a.b" -> "a" -> "".
std::string_view parent_path(std::string_view path) {
  const auto cut = path.find_last_of(".[");
  if (cut == std::string_view::npos) return {};
  return path.substr(0, cut);
}

}  // namespace

std::string format_location(const SourceLocation& at) {
  if (at.line <= 0) return at.file;
  return at.file + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

void SourceMap::record(const std::string& path, SourceLocation at) { places_[path] = std::move(at); }

SourceLocation SourceMap::find(std::string_view path) const {
  for (;;) {
    if (auto it = places_.find(path); it != places_.end()) return it->second;
    if (path.empty()) return {};
    path = parent_path(path);
  }
}

ScenarioError::ScenarioError(std::vector<std::string> errors)
    : std::runtime_error(join_lines(errors)), errors_(std::move(errors)) {}

void Diagnostics::error_at_path(const SourceMap& sources, const std::string& what) {
  const std::size_t colon = what.find(": ");
  const std::string path = what.substr(0, colon);
  error(sources.find(path), path, colon == std::string::npos ? what : what.substr(colon + 2));
}

void Diagnostics::error(const SourceLocation& at, std::string_view path, std::string_view message) {
  if (full()) {
    ++dropped_;
    return;
  }
  std::string line = format_location(at);
  line += ": ";
  if (!path.empty()) {
    line += path;
    line += ": ";
  }
  line += message;
  errors_.push_back(std::move(line));
}

void Diagnostics::throw_if_errors() const {
  if (errors_.empty()) return;
  if (dropped_ == 0) throw ScenarioError(errors_);
  std::vector<std::string> lines = errors_;
  lines.push_back("... and " + std::to_string(dropped_) + " more error" + (dropped_ == 1 ? "" : "s"));
  throw ScenarioError(std::move(lines));
}

}  // namespace mofasim::scenario
