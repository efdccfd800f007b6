// Loading a scenario: YAML file (or text) + `--set` overrides + presets -> a validated, normalised
// Scenario proto and the sealed runtime structs built from it. The pipeline, each step its own file:
//   parse YAML -> apply_overrides (overrides.h) -> merge_presets (presets.h)
//   -> yaml_to_proto (yaml_to_proto.h) -> validate_scenario (validate.h)
//   -> normalize_scenario (normalize.h) -> to_*_spec (to_spec.h).
// User errors are collected per stage and thrown together as one ScenarioError (one line each:
// `file:line:col: field.path: message`); the loader stops after the first stage that found any,
// so later stages never see a half-read scenario. The CLI prints each line on stderr, exit code 2.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/spec.h"
#include "proto/scenario.pb.h"
#include "sim/scenario/diagnostics.h"
#include "sim/scenario/presets.h"

namespace mofasim::scenario {

struct LoadedScenario {
  proto::Scenario proto;  // validated and normalised (derived defaults filled)
  model::ModelSpec model;
  model::HardwareSpec hardware;
  model::ParallelSpec parallel;
  model::FeatureSpec features;
  SourceMap sources;  // where each field was written (file, --set or preset file)
  std::string path;   // the scenario file, or the name given to load_scenario_from_string
};

// The largest scenario file read (4 MiB): a scenario is a few kilobytes (100,000 empirical
// samples about 1 MiB); this bounds memory and keeps the YAML parse (about 1.3 MB/s) under 4 s.
inline constexpr std::int64_t kMaxScenarioFileBytes = std::int64_t{4} << 20;

// The text of the scenario file at `path`. Refuses (ScenarioError, one line naming the file) a
// file that cannot be opened, is not a regular file (a device such as /dev/zero, a FIFO: never
// read, never waited on) or is larger than kMaxScenarioFileBytes.
std::string read_scenario_file(const std::string& path);

// Reads and loads the file at `path`. `overrides` are "field.path=value" strings (`--set`).
// Throws ScenarioError (also when the file cannot be read).
LoadedScenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {},
                             const PresetCatalog& presets = PresetCatalog::embedded());

// Loads YAML text; `name` stands for the file in error messages.
LoadedScenario load_scenario_from_string(std::string_view text, const std::string& name,
                                         const std::vector<std::string>& overrides = {},
                                         const PresetCatalog& presets = PresetCatalog::embedded());

// Training length in steps: training.steps, or ceil(tokens / (global_batch * seq_length)).
// Throws std::invalid_argument when the scenario has no training section (or no batch/length).
std::int64_t training_steps(const proto::Scenario& scenario);

}  // namespace mofasim::scenario
