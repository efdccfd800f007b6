// User-facing scenario errors: where a value came from (file:line:col), a map from field paths to
// those places, and the collector that turns every problem found in one load into one line each
// (`file:line:col: field.path: message`) before throwing them together as a ScenarioError
// (style.md S7/S8). Only the loader uses this; the engine never sees YAML.
#pragma once

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mofasim::scenario {

// A place in an input: a scenario file, an embedded preset file, or `--set` (line = the override's
// 1-based position on the command line, column = 1-based column inside "path=value").
struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 = unknown (then only the file is printed)
  int column = 0;  // 1-based
};

// "file:line:col" or just "file" when the line is unknown.
std::string format_location(const SourceLocation& at);

// Where each field of a loaded scenario was written, keyed by field path
// ("parallelism.tp", "fault_tolerance.failure_classes[1].weight"; "" is the document itself).
class SourceMap {
 public:
  void record(const std::string& path, SourceLocation at);
  // The location of `path`, else of its nearest recorded ancestor, else of the document.
  [[nodiscard]] SourceLocation find(std::string_view path) const;
  [[nodiscard]] bool contains(const std::string& path) const { return places_.contains(path); }

 private:
  std::map<std::string, SourceLocation, std::less<>> places_;
};

// Every user error of one load, as formatted lines, in the order found.
class ScenarioError : public std::runtime_error {
 public:
  explicit ScenarioError(std::vector<std::string> errors);
  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::vector<std::string> errors_;
};

// At most kMaxReportedErrors lines are kept; the rest are counted and summarised in one last line
// ("... and N more errors"), so a file full of mistakes costs bounded memory and output.
class Diagnostics {
 public:
  static constexpr std::size_t kMaxReportedErrors = 20;

  // Records `at: path: message` (the path part is left out when empty).
  void error(const SourceLocation& at, std::string_view path, std::string_view message);
  // Records an error a lower layer's validate() threw as "field.path: message", located at the
  // field (or its nearest written ancestor) in `sources`.
  void error_at_path(const SourceMap& sources, const std::string& what);
  [[nodiscard]] bool ok() const { return errors_.empty(); }
  // True once kMaxReportedErrors lines are kept: later errors are only counted.
  [[nodiscard]] bool full() const { return errors_.size() >= kMaxReportedErrors; }
  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }
  // Throws ScenarioError with every collected line when there is at least one.
  void throw_if_errors() const;

 private:
  std::vector<std::string> errors_;
  std::size_t dropped_ = 0;
};

}  // namespace mofasim::scenario
