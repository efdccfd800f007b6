// Fuzz target for the scenario loader. The input is scenario YAML; leading lines of the form
// "#set path=value" become --set overrides (so overrides are fuzzed too; they are YAML comments
// otherwise). The loader must either load or throw ScenarioError: any other exception, crash,
// hang or sanitizer report is a bug. Built as a libFuzzer target under clang, or linked with
// fuzz_replay_main.cc (seed corpus + deterministic mutations) under other compilers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  std::string_view rest = text;
  constexpr std::string_view kSet = "#set ";
  while (rest.starts_with(kSet)) {
    const auto end = rest.find('\n');
    overrides.emplace_back(rest.substr(kSet.size(), end == std::string_view::npos ? std::string_view::npos
                                                                                  : end - kSet.size()));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  try {
    const auto loaded = mofasim::scenario::load_scenario_from_string(text, "fuzz.yaml", overrides);
    (void)mofasim::scenario::training_steps(loaded.proto.has_training() ? loaded.proto : mofasim::proto::Scenario{});
  } catch (const mofasim::scenario::ScenarioError&) {
    // the expected outcome for bad input
  } catch (const std::invalid_argument&) {
    // training_steps on a scenario without a training section
  }
  return 0;
}
