// Mutation soak: from every shipped scenario, many scenarios with one or two fields changed
// (a number set to 0, -1, 1, 1e9, 1e-9, 2^31-1 or scaled by 10^k; an enum swapped for another
// value seen in the shipped files; a key deleted), each run through simulate, memory or ettr as a
// child process under limited_run.h's time and memory limits. The promise of the bad-input work:
// every run ends in time, and either exits 0 with no NaN or inf in its output, or exits 2 with a
// located first line. The seed is fixed, so a failure names a reproducible mutation.
// MOFASIM_SOAK_RUNS sets the number of runs (default 300, about 20 s on 2 cores) and
// MOFASIM_SOAK_SEED the seed, for a longer soak by hand.
#include <signal.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/scenario/limited_run.h"
#include "test/support/shipped_scenarios.h"

namespace mofasim::scenario {
namespace {

namespace fs = std::filesystem;
using testing::Outcome;
using testing::run_limited;
using testing::scratch;

std::vector<std::string> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The part of a line before its comment ('#' outside double quotes).
std::size_t content_end(const std::string& line) {
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (line[i] == '#' && !quoted && (i == 0 || line[i - 1] == ' ')) return i;
  }
  return line.size();
}

struct Slot {
  std::size_t line = 0;
  std::size_t pos = 0;
  std::size_t len = 0;
  std::string key;  // for enum slots: the key whose value this is
};

const std::regex& number_re() {
  static const std::regex re(R"((^|[\s\[,{:"])([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)(?=$|[\s,\]}"]))");
  return re;
}
const std::regex& enum_re() {
  static const std::regex re(R"(([A-Za-z_][A-Za-z0-9_]*):\s+([A-Za-z][A-Za-z0-9_.-]*)(?=\s*($|[,}])))");
  return re;
}
const std::regex& key_line_re() {
  static const std::regex re(R"(^\s*[A-Za-z_][A-Za-z0-9_]*:)");
  return re;
}

std::vector<Slot> number_slots(const std::vector<std::string>& lines) {
  std::vector<Slot> slots;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string content = lines[i].substr(0, content_end(lines[i]));
    for (auto it = std::sregex_iterator(content.begin(), content.end(), number_re()); it != std::sregex_iterator();
         ++it)
      slots.push_back({i, static_cast<std::size_t>(it->position(2)), static_cast<std::size_t>(it->length(2)), ""});
  }
  return slots;
}

std::vector<Slot> enum_slots(const std::vector<std::string>& lines) {
  std::vector<Slot> slots;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string content = lines[i].substr(0, content_end(lines[i]));
    for (auto it = std::sregex_iterator(content.begin(), content.end(), enum_re()); it != std::sregex_iterator(); ++it)
      slots.push_back({i, static_cast<std::size_t>(it->position(2)), static_cast<std::size_t>(it->length(2)),
                       (*it)[1].str()});
  }
  return slots;
}

using EnumValues = std::map<std::string, std::vector<std::string>>;

// For every key, the bare-word values the shipped scenarios give it (plus both booleans).
EnumValues collect_enum_values(const std::vector<fs::path>& files) {
  std::map<std::string, std::set<std::string>> seen;
  for (const auto& f : files) {
    const auto lines = read_lines(f);
    for (const auto& s : enum_slots(lines)) seen[s.key].insert(lines[s.line].substr(s.pos, s.len));
  }
  EnumValues values;
  for (auto& [key, set] : seen) {
    if (set.count("true") || set.count("false")) set.insert({"true", "false"});
    values[key].assign(set.begin(), set.end());
  }
  return values;
}

// A small deterministic generator (the same numbers on every platform and standard library).
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
};

std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string new_number(const std::string& old, Rng& rng) {
  static const char* const fixed[] = {"0", "-1", "1", "1e9", "1e-9", "2147483647", "9223372036854775807"};
  const std::size_t pick = rng.below(10);
  if (pick < 7) return fixed[pick];
  static const int exponents[] = {-9, -3, 3, 6, 9, 18};
  return format_number(std::strtod(old.c_str(), nullptr) * std::pow(10.0, exponents[rng.below(6)]));
}

// Applies one mutation in place and returns what it did, e.g. "line 14: '8' -> '1e9'".
std::string mutate_once(std::vector<std::string>& lines, const EnumValues& enums, Rng& rng) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    const std::size_t kind = rng.below(10);
    if (kind < 6) {
      const auto slots = number_slots(lines);
      if (slots.empty()) continue;
      const Slot& s = slots[rng.below(slots.size())];
      const std::string old = lines[s.line].substr(s.pos, s.len);
      const std::string now = new_number(old, rng);
      lines[s.line].replace(s.pos, s.len, now);
      return "line " + std::to_string(s.line + 1) + ": '" + old + "' -> '" + now + "'";
    }
    if (kind < 8) {
      const auto slots = enum_slots(lines);
      if (slots.empty()) continue;
      const Slot& s = slots[rng.below(slots.size())];
      const std::string old = lines[s.line].substr(s.pos, s.len);
      const auto it = enums.find(s.key);
      if (it == enums.end() || it->second.size() < 2) continue;
      std::string now = it->second[rng.below(it->second.size())];
      if (now == old) continue;
      lines[s.line].replace(s.pos, s.len, now);
      return "line " + std::to_string(s.line + 1) + ": " + s.key + " '" + old + "' -> '" + now + "'";
    }
    std::vector<std::size_t> keyed;
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (std::regex_search(lines[i], key_line_re())) keyed.push_back(i);
    if (keyed.empty()) continue;
    // A key and the block under it (the lines indented deeper, comments included); blanked, not
    // erased, so the rest keep their line numbers.
    const std::size_t i = keyed[rng.below(keyed.size())];
    const std::string gone = lines[i];
    const std::size_t indent = gone.find_first_not_of(' ');
    std::size_t end = i + 1;
    while (end < lines.size() &&
           (lines[end].find_first_not_of(' ') == std::string::npos || lines[end].find_first_not_of(' ') > indent))
      ++end;
    for (std::size_t k = i; k < end; ++k) lines[k] = "";
    return "lines " + std::to_string(i + 1) + "-" + std::to_string(end) + " deleted: '" +
           gone.substr(0, content_end(gone)) + "'";
  }
  return "unchanged";
}

bool has_nan_or_inf(const std::string& text) {
  static const std::regex re(R"((^|[^A-Za-z_])[-+]?(nan|inf|infinity)($|[^A-Za-z_]))", std::regex::icase);
  return std::regex_search(text, re);
}

bool is_located_refusal(const std::string& first_line) {
  static const std::regex located(R"(^(mut\.yaml|--set):[0-9]+:[0-9]+: [^:]+: .+)");
  static const std::regex option(R"(^mofasim (simulate|memory|ettr): (?!error: ).+)");  // not the catch-all
  return std::regex_match(first_line, located) || std::regex_match(first_line, option);
}

// The class of a broken promise, or "" when the run kept it.
std::string failure_class(const Outcome& run, const std::string& command) {
  if (!run.exited) return run.status == SIGALRM ? "time limit" : "signal " + std::to_string(run.status);
  if (run.status == 0) return has_nan_or_inf(run.out) || has_nan_or_inf(run.err) ? "nan or inf in output" : "";
  if (run.status == 2) return is_located_refusal(run.first_line) ? "" : "unlocated refusal";
  // `mofasim memory` exits 3 when a stage does not fit: a result, like 0.
  if (run.status == 3 && command == "memory") {
    return has_nan_or_inf(run.out) || has_nan_or_inf(run.err) ? "nan or inf in output" : "";
  }
  return "exit " + std::to_string(run.status);
}

// The soak's own judges, so a pass means the runs were looked at.
TEST(MutationSoakChecks, NanAndInfAreFoundAsWordsOnly) {
  EXPECT_TRUE(has_nan_or_inf("mfu             nan %"));
  EXPECT_TRUE(has_nan_or_inf("{\"e2e_s\": inf}"));
  EXPECT_TRUE(has_nan_or_inf("E2E -inf days"));
  EXPECT_TRUE(has_nan_or_inf("ETTR: NaN"));
  EXPECT_FALSE(has_nan_or_inf("inference infiniband information nano_batch"));
}

TEST(MutationSoakChecks, OnlyLocatedFirstLinesAreRefusals) {
  EXPECT_TRUE(is_located_refusal("mut.yaml:14:7: parallelism.tp: must be >= 1"));
  EXPECT_TRUE(is_located_refusal("--set:1:16: model.num_layers: over the limit"));
  EXPECT_TRUE(is_located_refusal("mofasim ettr: --trials: must be >= 1"));
  EXPECT_FALSE(is_located_refusal("mut.yaml: fault_tolerance: the scenario has no fault_tolerance section"));
  EXPECT_FALSE(is_located_refusal("mofasim ettr: error: training: not given"));
  EXPECT_FALSE(is_located_refusal("workload.cc:88: check op_names_.size() < 0xffff failed"));
}

TEST(MutationSoakChecks, AMutationChangesTheScenarioTheSameWayEveryTime) {
  const std::vector<std::string> original = {"parallelism:", "  tp: 8", "  schedule: 1f1b"};
  const EnumValues enums = {{"schedule", {"1f1b", "interleaved-1f1b"}}};
  std::vector<std::string> a = original, b = original;
  Rng ra{42}, rb{42};
  const std::string what = mutate_once(a, enums, ra);
  EXPECT_EQ(what, mutate_once(b, enums, rb));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, original) << what;
}

TEST(MutationSoak, EveryMutatedScenarioEndsCleanlyOrIsRefusedWithALocation) {
  const char* env = std::getenv("MOFASIM_SOAK_RUNS");
  const int runs = env != nullptr ? std::atoi(env) : 300;
  const auto files = test::shipped_scenario_paths();
  ASSERT_GE(files.size(), 10u);
  const EnumValues enums = collect_enum_values(files);
  static const std::vector<std::vector<std::string>> commands = {
      {"simulate"}, {"memory"}, {"ettr", "--step-time", "10", "--trials", "100"}};

  const char* seed = std::getenv("MOFASIM_SOAK_SEED");
  Rng rng{seed != nullptr ? std::strtoull(seed, nullptr, 10) : 20261123};
  std::map<std::string, int> failures_by_class;
  int refused = 0;
  for (int r = 0; r < runs; ++r) {
    const fs::path& source = files[static_cast<std::size_t>(r) % files.size()];
    std::vector<std::string> lines = read_lines(source);
    std::string what = mutate_once(lines, enums, rng);
    if (rng.below(3) == 0) what += "; " + mutate_once(lines, enums, rng);
    {
      std::ofstream out(scratch() / "mut.yaml");
      for (const auto& l : lines) out << l << '\n';
    }
    std::vector<std::string> args = commands[rng.below(commands.size())];
    args.insert(args.begin() + 1, "mut.yaml");
    if (rng.below(2) == 0) args.push_back("--json");
    const Outcome run = run_limited(args, /*keep_stdout=*/true);
    if (run.exited && run.status == 2) ++refused;
    const std::string failure = failure_class(run, args.front());
    if (failure.empty()) continue;
    ++failures_by_class[failure];
    std::string command;
    for (const auto& a : args) command += " " + a;
    ADD_FAILURE() << "run " << r << ": " << failure << "\n  " << source.filename().string() << ", " << what
                  << "\n  mofasim" << command << "\n  first line: " << run.first_line << " (" << run.seconds
                  << " s)";
  }
  std::string summary;
  for (const auto& [cls, n] : failures_by_class) summary += "  " + cls + ": " + std::to_string(n) + "\n";
  std::printf("mutation soak: %d runs, %d refused with a location, failures:\n%s", runs, refused,
              summary.empty() ? "  none\n" : summary.c_str());
  EXPECT_GT(refused, 0);  // the mutations do reach the validation
  EXPECT_LT(refused, runs);  // and some mutated scenarios still run
}

}  // namespace
}  // namespace mofasim::scenario
