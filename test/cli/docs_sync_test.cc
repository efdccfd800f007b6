// The docs show what the commands print. Every fenced block in docs/getting-started.md preceded by
// `<!-- checked: the output of the command below -->` starts with "$ ./build/mofasim ARGS"; the
// rest of the block must be exactly what that command prints (stdout, then stderr), with nothing
// tolerated but trailing whitespace. The README's run command must be one of the checked commands.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

constexpr const char* kMarker = "<!-- checked: the output of the command below -->";
constexpr const char* kPrompt = "$ ./build/mofasim ";

struct CheckedBlock {
  int line = 0;          // of the marker, 1-based
  std::string args;      // after "./build/mofasim "
  std::string expected;  // the block's lines after the command
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// Each line without trailing whitespace, and no trailing empty lines.
std::string normalised(const std::string& text) {
  std::vector<std::string> lines = lines_of(text);
  for (std::string& l : lines) l.erase(l.find_last_not_of(" \t\r") + 1);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

std::vector<CheckedBlock> checked_blocks(const std::string& doc) {
  const std::vector<std::string> lines = lines_of(doc);
  std::vector<CheckedBlock> blocks;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != kMarker) continue;
    CheckedBlock b{.line = static_cast<int>(i + 1), .args = {}, .expected = {}};
    std::size_t j = i + 1;
    if (j + 1 >= lines.size() || lines[j] != "```" || !lines[j + 1].starts_with(kPrompt)) {
      ADD_FAILURE() << "getting-started.md:" << b.line << ": the marker must precede ``` and a line \""
                    << kPrompt << "...\"";
      continue;
    }
    b.args = lines[j + 1].substr(std::string(kPrompt).size());
    for (j += 2; j < lines.size() && lines[j] != "```"; ++j) b.expected += lines[j] + "\n";
    blocks.push_back(b);
  }
  return blocks;
}

TEST(DocsSync, GettingStartedOutputsMatchTheCommands) {
  const std::string doc = read_file(std::string(MOFASIM_SOURCE_DIR) + "/docs/getting-started.md");
  const std::vector<CheckedBlock> blocks = checked_blocks(doc);
  ASSERT_GE(blocks.size(), 3u) << "expected the run command, --set and a bad-input example to be checked";
  for (const CheckedBlock& b : blocks) {
    const CliRun run = run_mofasim(b.args);
    EXPECT_EQ(normalised(b.expected), normalised(run.out + run.err))
        << "docs/getting-started.md:" << b.line << ": `mofasim " << b.args << "` prints otherwise (exit "
        << run.exit_code << ")";
  }
}

TEST(DocsSync, ReadmeRunCommandIsCheckedInGettingStarted) {
  const std::string readme = read_file(std::string(MOFASIM_SOURCE_DIR) + "/README.md");
  const std::string doc = read_file(std::string(MOFASIM_SOURCE_DIR) + "/docs/getting-started.md");
  const std::string run_prefix = "bash setup.sh && ./build/mofasim ";
  const auto at = readme.find(run_prefix);
  ASSERT_NE(at, std::string::npos) << "README.md has no run command \"" << run_prefix << "...\"";
  const std::string args = readme.substr(at + run_prefix.size(), readme.find('\n', at) - at - run_prefix.size());
  bool found = false;
  for (const CheckedBlock& b : checked_blocks(doc)) found = found || b.args == args;
  EXPECT_TRUE(found) << "the README runs `mofasim " << args << "` but getting-started.md checks no such block";
}

TEST(DocsSync, NormalisingToleratesOnlyTrailingWhitespace) {
  EXPECT_EQ(normalised("a  \nb\t\n\n\n"), "a\nb\n");
  EXPECT_NE(normalised(" a\n"), normalised("a\n"));   // leading space counts
  EXPECT_NE(normalised("a b\n"), normalised("a  b\n"));  // inner space counts
}

}  // namespace
}  // namespace mofasim::test
