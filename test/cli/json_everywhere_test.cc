// --json on every sub-command: each command the usage lists runs on a shipped scenario with --json
// and prints one JSON document on stdout; import-megatron (which writes YAML) refuses it in one
// line. `schema --json` is the same descriptor walk as docs/scenario-reference.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test/cli/run_cli.h"

namespace mofasim::test {
namespace {

namespace fs = std::filesystem;

// The sub-commands `mofasim --help` lists (the lines under "commands:").
std::vector<std::string> listed_commands() {
  std::istringstream help(run_mofasim("--help").out);
  std::vector<std::string> names;
  std::string line;
  bool in_list = false;
  while (std::getline(help, line)) {
    if (line == "commands:") {
      in_list = true;
    } else if (in_list && line.empty()) {
      break;
    } else if (in_list) {
      std::istringstream words(line);
      std::string name;
      words >> name;
      names.push_back(name);
    }
  }
  return names;
}

TEST(JsonEverywhere, EverySubCommandPrintsJson) {
  const std::string tmp = (fs::temp_directory_path() / ("mofasim_json_all_" + std::to_string(::getpid()))).string();
  {
    std::ofstream csv(tmp + "_measured.csv");  // not tmp.csv: the sweep writes that
    csv << "scenario_path,step_time_s\n" << MOFASIM_SOURCE_DIR << "/scenarios/small.yaml,1.0\n";
  }
  const std::string s = "scenarios/small.yaml";
  const std::map<std::string, std::string> args = {
      {"simulate", s + " -q"},
      {"memory", s},
      {"ettr", s + " -q --trials 20"},
      {"sweep", s + " -q --trials 20 --out '" + tmp + "' --param fault_tolerance.checkpoint.interval_steps=50:150:50"},
      {"tune", s + " -q --rerank 0 --top 1"},
      {"validate", s + " -q"},
      {"calibrate", "'" + tmp + "_measured.csv' -q"},
      {"schema", ""},
  };
  const std::vector<std::string> commands = listed_commands();
  ASSERT_EQ(commands.size(), 10u);  // the 9 commands of main.cc, and `version`
  int checked = 0;
  for (const std::string& c : commands) {
    if (c == "version" || c == "import-megatron") continue;
    ASSERT_TRUE(args.contains(c)) << "new sub-command '" << c << "': give it --json and a case here";
    const CliRun run = run_mofasim(c + " " + args.at(c) + " --json");
    ASSERT_EQ(run.exit_code, 0) << c << ": " << run.err;
    const auto j = nlohmann::json::parse(run.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << c << " --json printed:\n" << run.out.substr(0, 400);
    EXPECT_TRUE(j.is_object()) << c;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
  for (const char* ext : {".csv", ".svg", "_measured.csv"}) fs::remove(tmp + ext);

  const CliRun yaml = run_mofasim("import-megatron --json");
  EXPECT_EQ(yaml.exit_code, 2);
  EXPECT_EQ(yaml.err,
            "mofasim import-megatron: --json: not offered: import-megatron writes scenario YAML, which is already "
            "machine-readable\n");
  EXPECT_NE(run_mofasim("import-megatron --help").out.find("takes no --json"), std::string::npos);
}

// The JSON schema has what the Markdown reference has: one entry per `## Message` section and per
// field row, with units, defaults and limits in the stored unit.
TEST(JsonEverywhere, SchemaJsonMatchesTheReference) {
  const CliRun run = run_mofasim("schema --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  std::istringstream md(read_file(fs::path(MOFASIM_SOURCE_DIR) / "docs/scenario-reference.md"));
  std::size_t sections = 0, rows = 0;
  std::string line;
  while (std::getline(md, line)) {
    if (line.starts_with("## ")) ++sections;
    if (line.starts_with("| `")) ++rows;
  }
  std::size_t fields = 0;
  std::map<std::string, nlohmann::json> by_key;
  for (const auto& m : j.at("messages")) {
    fields += m.at("fields").size();
    for (const auto& f : m.at("fields")) by_key[m.at("name").get<std::string>() + "." + f.at("key").get<std::string>()] = f;
  }
  EXPECT_EQ(j.at("messages").size(), sections - 4);  // less Limits, Units, Derived defaults, Validation rules
  EXPECT_EQ(fields, rows);
  EXPECT_EQ(j.at("messages").at(0).at("name"), "Scenario");
  EXPECT_EQ(j.at("messages").at(1).at("used_at"), nlohmann::json::array({"model"}));

  // dp_bucket_size: `40000000 B` and `<= 1e+15 B; nonzero >= 1 B` in the Markdown.
  const auto& bucket = by_key.at("Optimizations.dp_bucket_size");
  EXPECT_EQ(bucket.at("type"), "double");
  EXPECT_EQ(bucket.at("unit").at("stored_as"), "B");
  EXPECT_EQ(bucket.at("default").get<double>(), 40e6);
  EXPECT_EQ(bucket.at("limits").at("min").get<double>(), 1.0);
  EXPECT_EQ(bucket.at("limits").at("max").get<double>(), 1e15);
  EXPECT_EQ(bucket.at("limits").at("text"), "<= 1e+15 B; nonzero >= 1 B");
  EXPECT_EQ(by_key.at("Model.num_layers").at("limits").at("max").get<double>(), 10000.0);
  EXPECT_EQ(by_key.at("Scenario.model").at("message"), "Model");
  EXPECT_EQ(j.at("units").at(1).at("stored_as"), "s");
  EXPECT_FALSE(j.at("validation_rules").empty());
}

}  // namespace
}  // namespace mofasim::test
