// Reads docs/layering.rules and fails on any #include "..." in the sources that crosses from one
// part into a part it may not use; and checks that the rules reject the edges the layering exists
// to forbid (a synthetic include for each).
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

class Layering {
 public:
  // Throws std::invalid_argument "FILE:LINE: message" on a malformed line or an unknown part.
  Layering(std::istream& in, const std::string& name) {
    std::string line;
    int n = 0;
    std::vector<std::pair<int, std::string>> allow_lines;
    while (std::getline(in, line)) {
      ++n;
      line = line.substr(0, line.find('#'));
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      std::istringstream words(line);
      std::string first;
      words >> first;
      if (first == "part") {
        std::string part;
        words >> part;
        if (part.empty() || part.back() != ':') throw std::invalid_argument(where(name, n) + "expected 'part NAME: PREFIX...'");
        part.pop_back();
        std::string prefix;
        std::vector<std::string> prefixes;
        while (words >> prefix) prefixes.push_back(prefix);
        if (prefixes.empty()) throw std::invalid_argument(where(name, n) + "part " + part + " has no path prefix");
        parts_.emplace_back(part, prefixes);
        allowed_[part];
      } else {
        allow_lines.emplace_back(n, line);
      }
    }
    for (const auto& [ln, text] : allow_lines) {
      std::istringstream words(text);
      std::string from;
      std::string arrow;
      words >> from >> arrow;
      if (arrow != "->") throw std::invalid_argument(where(name, ln) + "expected 'NAME -> PART...'");
      if (!allowed_.contains(from)) throw std::invalid_argument(where(name, ln) + "unknown part '" + from + "'");
      std::string to;
      while (words >> to) {
        if (!allowed_.contains(to)) throw std::invalid_argument(where(name, ln) + "unknown part '" + to + "'");
        allowed_[from].insert(to);
      }
    }
  }

  [[nodiscard]] std::optional<std::string> part_of(const std::string& path) const {
    for (const auto& [part, prefixes] : parts_) {
      for (const std::string& p : prefixes) {
        if (path.rfind(p, 0) == 0) return part;
      }
    }
    return std::nullopt;
  }

  // The violation of `from` (a source path) including `included`, or nothing when allowed.
  [[nodiscard]] std::optional<std::string> check(const std::string& from, const std::string& included) const {
    const auto a = part_of(from);
    const auto b = part_of(included);
    if (!a || !b || *a == *b || allowed_.at(*a).contains(*b)) return std::nullopt;
    return from + ": part " + *a + " may not include " + included + " (part " + *b + ")";
  }

 private:
  static std::string where(const std::string& name, int line) { return name + ":" + std::to_string(line) + ": "; }

  std::vector<std::pair<std::string, std::vector<std::string>>> parts_;
  std::map<std::string, std::set<std::string>> allowed_;
};

Layering repository_rules() {
  const std::string path = std::string(MOFASIM_SOURCE_DIR) + "/docs/layering.rules";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return Layering(in, "docs/layering.rules");
}

TEST(Layering, EveryIncludeFollowsTheDeclaredLayering) {
  const Layering rules = repository_rules();
  const fs::path root(MOFASIM_SOURCE_DIR);
  const std::regex include(R"re(^\s*#\s*include\s+"([^"]+)")re");
  int files = 0;
  int includes = 0;
  std::vector<std::string> violations;
  for (const char* dir : {"model", "schedules", "topology", "sim", "proto"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      ASSERT_TRUE(rules.part_of(rel).has_value()) << rel << " belongs to no part of docs/layering.rules";
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      int n = 0;
      while (std::getline(in, line)) {
        ++n;
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        ++includes;
        if (auto v = rules.check(rel, m[1].str())) violations.push_back(*v + " (line " + std::to_string(n) + ")");
      }
    }
  }
  EXPECT_GT(files, 200);
  EXPECT_GT(includes, 400);  // 448 project includes when written: the scan sees the sources
  for (const std::string& v : violations) ADD_FAILURE() << v;
}

TEST(Layering, RejectsTheEdgesTheLayeringForbids) {
  const Layering rules = repository_rules();
  // The validation must not reach into the command line.
  EXPECT_TRUE(rules.check("sim/analysis/compare.cc", "sim/cli/scenario_specs.h"));
  EXPECT_FALSE(rules.check("sim/analysis/compare.cc", "sim/scenario/scenario_specs.h"));
  // The base cost model depends on units (and the schedule names) only.
  EXPECT_TRUE(rules.check("model/memory.cc", "schedules/factory.h"));
  EXPECT_TRUE(rules.check("model/op_table.cc", "topology/comm_group.h"));
  EXPECT_TRUE(rules.check("model/params.cc", "sim/executor/step_plan.h"));
  EXPECT_TRUE(rules.check("model/memory.cc", "model/analytic_model.h"));
  EXPECT_FALSE(rules.check("model/spec.h", "schedules/schedule_kind.h"));
  EXPECT_FALSE(rules.check("model/memory.cc", "sim/units/check.h"));
  // The analytic step model is its own part above model, schedules and topology.
  EXPECT_EQ(rules.part_of("model/analytic_model.cc"), "analytic");
  EXPECT_FALSE(rules.check("model/analytic_model.cc", "schedules/factory.h"));
  EXPECT_FALSE(rules.check("model/analytic_model.cc", "topology/comm_group.h"));
  EXPECT_TRUE(rules.check("model/analytic_model.cc", "sim/executor/replay.h"));
  // Schedules and topology sit below the simulator; units below everything.
  EXPECT_TRUE(rules.check("schedules/schedule.cc", "model/analytic_model.h"));
  EXPECT_TRUE(rules.check("topology/ring.cc", "model/spec.h"));
  EXPECT_TRUE(rules.check("sim/units/time.h", "model/spec.h"));
  // The scenario seal lives in sim/scenario; the loader under it knows no simulator part.
  EXPECT_EQ(rules.part_of("sim/scenario/scenario_specs.cc"), "scenario_specs");
  EXPECT_TRUE(rules.check("sim/scenario/loader.cc", "sim/executor/simulate_step.h"));
  EXPECT_TRUE(rules.check("sim/scenario/loader.cc", "sim/cli/cli_common.h"));
}

TEST(Layering, ScheduleKindLivesWithTheSchedules) {
  // schedules/schedule.h named ScheduleKind through model/spec.h, so model and schedules needed
  // each other; the kind now has its own header in schedules/.
  std::ifstream in(std::string(MOFASIM_SOURCE_DIR) + "/schedules/schedule.h");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().find("#include \"model/"), std::string::npos);
  EXPECT_NE(text.str().find("#include \"schedules/schedule_kind.h\""), std::string::npos);
}

TEST(Layering, MalformedRulesNameTheLine) {
  std::istringstream bad_part("part units sim/units/\n");
  EXPECT_THROW(
      {
        try {
          Layering(bad_part, "rules");
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "rules:1: expected 'part NAME: PREFIX...'");
          throw;
        }
      },
      std::invalid_argument);
  std::istringstream unknown("part units: sim/units/\n\nunits -> model\n");
  EXPECT_THROW(
      {
        try {
          Layering(unknown, "rules");
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "rules:3: unknown part 'model'");
          throw;
        }
      },
      std::invalid_argument);
}

}  // namespace
