// MoFa citation tags: reads the equation table of docs/architecture.md and fails when a file it
// lists as implementing MoFa(N) carries no MoFa(N) tag or lacks the named function, when an
// equation has no row, and on any old-style citation (the abbreviation of "equation", singular or
// plural, followed by a number) in the sources. The checker is also run on synthetic tables and files to show each failure it reports.
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int kFirstEquation = 1;
constexpr int kLastEquation = 44;

// One `file:function` entry of a table cell.
struct Entry {
  std::string file;
  std::string function;
};

struct Row {
  int equation = 0;
  int line = 0;
  std::vector<Entry> entries;  // analytic and simulator columns together
  bool says_not_implemented = false;
};

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// The rows of the table: every line that starts with "| MoFa(". Throws std::invalid_argument
// "NAME:LINE: message" on a row that is not `| MoFa(N) | analytic | simulator | what |` or an
// entry that is not `file:function`.
std::vector<Row> parse_table(std::istream& in, const std::string& name) {
  static const std::regex tag(R"re(^MoFa\((\d+)\)$)re");
  static const std::regex entry(R"re(`([^`]*)`)re");
  std::vector<Row> rows;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("| MoFa(", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) cells.push_back(trim(cell));
    if (cells.size() != 4) {
      throw std::invalid_argument(name + ":" + std::to_string(n) + ": expected 4 cells, got " +
                                  std::to_string(cells.size()));
    }
    std::smatch m;
    if (!std::regex_match(cells[0], m, tag)) {
      throw std::invalid_argument(name + ":" + std::to_string(n) + ": first cell '" + cells[0] + "' is not MoFa(N)");
    }
    Row row;
    row.equation = std::stoi(m[1].str());
    row.line = n;
    for (int c = 1; c <= 2; ++c) {
      for (std::sregex_iterator it(cells[c].begin(), cells[c].end(), entry), end; it != end; ++it) {
        const std::string text = (*it)[1].str();
        const auto colon = text.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
          throw std::invalid_argument(name + ":" + std::to_string(n) + ": '" + text + "' is not file:function");
        }
        row.entries.push_back({text.substr(0, colon), text.substr(colon + 1)});
      }
      if (cells[c].find("not implemented") != std::string::npos) row.says_not_implemented = true;
    }
    rows.push_back(row);
  }
  return rows;
}

// Text of a repository file, or nothing when it does not exist.
using FileReader = std::function<std::optional<std::string>(const std::string&)>;

// Every way the table and the sources disagree, one line each.
std::vector<std::string> check_table(const std::vector<Row>& rows, const FileReader& read, int first, int last) {
  std::vector<std::string> problems;
  std::map<int, int> seen;
  for (const Row& r : rows) {
    const std::string tag = "MoFa(" + std::to_string(r.equation) + ")";
    if (!seen.emplace(r.equation, r.line).second) problems.push_back(tag + ": listed twice (line " + std::to_string(r.line) + ")");
    if (r.entries.empty() && !r.says_not_implemented) {
      problems.push_back(tag + ": names no file:function and does not say why it is not implemented");
    }
    for (const Entry& e : r.entries) {
      const std::optional<std::string> text = read(e.file);
      if (!text) {
        problems.push_back(tag + ": " + e.file + " does not exist");
        continue;
      }
      if (text->find(tag) == std::string::npos) problems.push_back(tag + ": " + e.file + " has no " + tag + " tag");
      if (text->find(e.function + "(") == std::string::npos) {
        problems.push_back(tag + ": " + e.file + " has no function " + e.function);
      }
    }
  }
  for (int n = first; n <= last; ++n) {
    if (!seen.contains(n)) problems.push_back("MoFa(" + std::to_string(n) + "): no row in the table");
  }
  return problems;
}

// 1-based numbers of the lines that cite an equation the old way: the abbreviation of "equation"
// (singular or plural, any case, with its period) followed by a number or a parenthesis, or the
// plural abbreviation on its own.
std::vector<int> old_style_citations(const std::string& text) {
  static const std::regex old(R"re(\b[Ee][Qq][Ss]?\.\s*\(?\d|\b[Ee][Qq][Ss]\.)re");
  std::vector<int> lines;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (std::regex_search(line, old)) lines.push_back(n);
  }
  return lines;
}

std::optional<std::string> read_repository_file(const std::string& rel) {
  std::ifstream in(fs::path(MOFASIM_SOURCE_DIR) / rel);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ------------------------------------------------------------------ the checker on synthetic input

// A two-equation table; the file contents are given per test.
const char* const kTable =
    "text before the table\n"
    "| Equation | Analytic model | Simulator | What it is |\n"
    "|---|---|---|---|\n"
    "| MoFa(1) | `a.cc:alpha` | `b.cc:beta` | both models |\n"
    "| MoFa(2) | not implemented: no data | - | neither |\n";

std::vector<std::string> check_synthetic(const std::map<std::string, std::string>& files) {
  std::istringstream in(kTable);
  const std::vector<Row> rows = parse_table(in, "table.md");
  const FileReader read = [&](const std::string& f) -> std::optional<std::string> {
    const auto it = files.find(f);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
  return check_table(rows, read, 1, 2);
}

TEST(MofaTagChecker, PassesWhenBothListedFilesCarryTheTagAndFunction) {
  EXPECT_THAT(check_synthetic({{"a.cc", "// MoFa(1)\ndouble alpha(double x);"}, {"b.cc", "void beta() {}  // MoFa(1)"}}),
              IsEmpty());
}

TEST(MofaTagChecker, FailsWhenTheSimulatorFileLacksTheTag) {
  // The analytic side is tagged; the simulator side cites MoFa(11) and MoFa(10), neither is MoFa(1).
  EXPECT_THAT(check_synthetic({{"a.cc", "// MoFa(1)\nalpha(1);"}, {"b.cc", "beta(); // MoFa(11) MoFa(10)"}}),
              ElementsAre("MoFa(1): b.cc has no MoFa(1) tag"));
}

TEST(MofaTagChecker, FailsOnAMissingFileOrFunction) {
  EXPECT_THAT(check_synthetic({{"a.cc", "// MoFa(1)\ngamma();"}}),
              ElementsAre("MoFa(1): a.cc has no function alpha", "MoFa(1): b.cc does not exist"));
}

TEST(MofaTagChecker, FailsOnAMissingRowAndOnARowWithoutReason) {
  std::istringstream in("| MoFa(1) | - | - | listed, but no file and no reason |\n");
  const std::vector<Row> rows = parse_table(in, "t.md");
  const FileReader none = [](const std::string&) { return std::nullopt; };
  EXPECT_THAT(check_table(rows, none, 1, 2),
              ElementsAre("MoFa(1): names no file:function and does not say why it is not implemented",
                          "MoFa(2): no row in the table"));
}

TEST(MofaTagChecker, MalformedRowsNameTheLine) {
  std::istringstream three("\n| MoFa(3) | `a.cc:f` | - |\n");
  EXPECT_THROW(
      {
        try {
          parse_table(three, "t.md");
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "t.md:2: expected 4 cells, got 3");
          throw;
        }
      },
      std::invalid_argument);
  std::istringstream no_function("| MoFa(3) | `a.cc` | - | x |\n");
  EXPECT_THROW(
      {
        try {
          parse_table(no_function, "t.md");
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "t.md:1: 'a.cc' is not file:function");
          throw;
        }
      },
      std::invalid_argument);
}

TEST(MofaTagChecker, FindsEachOldCitationFormAndNothingElse) {
  // The old forms are assembled from pieces so that this file itself holds none of them.
  const std::string e = "e";
  const std::string text = "// " + e + "q. (34)\n"               // 1
                           "// MoFa(34)\n"                        // 2
                           "// see " + e + "q. 22 here\n"         // 3
                           "// " + e + "qs. (29)-(35)\n"          // 4
                           "// " + e + "q. (33)\u2013(35)\n"      // 5
                           "// Daly (2006), equation 37\n"        // 6
                           "// ascending seq. numbers\n"          // 7
                           "// " + "E" + "q. (38): failures\n"    // 8
                           "// the " + e + "qs. above\n";         // 9
  EXPECT_THAT(old_style_citations(text), ElementsAre(1, 3, 4, 5, 8, 9));
}

// ------------------------------------------------------------------ the repository

TEST(MofaTags, EveryImplementedEquationIsTaggedWhereTheTableSaysItIs) {
  std::ifstream in(std::string(MOFASIM_SOURCE_DIR) + "/docs/architecture.md");
  ASSERT_TRUE(in) << "cannot read docs/architecture.md";
  const std::vector<Row> rows = parse_table(in, "docs/architecture.md");
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(kLastEquation - kFirstEquation + 1));
  int implemented = 0;
  for (const Row& r : rows) implemented += r.entries.empty() ? 0 : 1;
  EXPECT_EQ(implemented, 43);  // all but MoFa(16), which names the optimisation-aware model as a whole
  EXPECT_THAT(check_table(rows, read_repository_file, kFirstEquation, kLastEquation), IsEmpty());
}

TEST(MofaTags, NoSourceCitesAnEquationTheOldWay) {
  const fs::path root(MOFASIM_SOURCE_DIR);
  int files = 0;
  std::vector<std::string> found;
  for (const char* dir : {"model", "schedules", "topology", "sim", "test"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      const std::string file = entry.path().filename().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc" && ext != ".cmake" && file != "CMakeLists.txt")) {
        continue;
      }
      ++files;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      const std::optional<std::string> text = read_repository_file(rel);
      ASSERT_TRUE(text.has_value()) << rel;
      for (int line : old_style_citations(*text)) found.push_back(rel + ":" + std::to_string(line));
    }
  }
  EXPECT_GT(files, 100);
  EXPECT_THAT(found, IsEmpty()) << "cite MoFa equations as MoFa(N), one tag per equation";
}

}  // namespace
