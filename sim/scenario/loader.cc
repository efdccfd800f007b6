// The load pipeline (see loader.h).
#include "sim/scenario/loader.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "sim/scenario/normalize.h"
#include "sim/scenario/overrides.h"
#include "sim/scenario/to_spec.h"
#include "sim/scenario/validate.h"
#include "sim/scenario/yaml_source.h"
#include "sim/scenario/yaml_to_proto.h"

namespace mofasim::scenario {
namespace {

SourceLocation mark_location(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return {.file = file, .line = 0, .column = 0};
  return {.file = file, .line = mark.line + 1, .column = mark.column + 1};
}

// One YAML document; a syntax error or a second document is a ScenarioError.
YAML::Node parse_document(std::string_view text, const std::string& name) {
  Diagnostics diagnostics;
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    diagnostics.error(mark_location(name, e.mark), "", "invalid YAML: " + e.msg);
    diagnostics.throw_if_errors();
  }
  if (documents.size() > 1) {
    diagnostics.error(mark_location(name, documents[1].Mark()), "",
                      "expected one YAML document, found " + std::to_string(documents.size()));
    diagnostics.throw_if_errors();
  }
  return documents.empty() ? YAML::Node() : documents.front();
}

}  // namespace

LoadedScenario load_scenario_from_string(std::string_view text, const std::string& name,
                                         const std::vector<std::string>& overrides, const PresetCatalog& presets) {
  YamlSource source(parse_document(text, name), Origin{.file = name, .fixed_line = 0, .column_offset = 0});

  Diagnostics diagnostics;
  apply_overrides(source, overrides, diagnostics);
  merge_presets(source, presets, diagnostics);
  LoadedScenario loaded;
  loaded.path = name;
  yaml_to_proto(source, loaded.proto, loaded.sources, diagnostics);
  diagnostics.throw_if_errors();

  validate_scenario(loaded.proto, loaded.sources, diagnostics);
  diagnostics.throw_if_errors();

  normalize_scenario(loaded.proto);
  loaded.model = to_model_spec(loaded.proto.model());
  loaded.hardware = to_hardware_spec(loaded.proto.hardware());
  loaded.parallel = to_parallel_spec(loaded.proto.parallelism());
  loaded.features = to_feature_spec(loaded.proto.optimizations());
  return loaded;
}

LoadedScenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                             const PresetCatalog& presets) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::string reason = std::strerror(errno);
    throw ScenarioError({path + ": cannot read scenario file: " + reason});
  }
  std::stringstream text;
  text << in.rdbuf();
  return load_scenario_from_string(text.str(), path, overrides, presets);
}

std::int64_t training_steps(const proto::Scenario& scenario) {
  if (!scenario.has_training()) throw std::invalid_argument("training: not given; add training: {steps: N} or {tokens: N}");
  const proto::Training& t = scenario.training();
  if (t.has_steps()) return t.steps();
  const double per_step =
      static_cast<double>(scenario.parallelism().global_batch()) * static_cast<double>(scenario.model().seq_length());
  if (!t.has_tokens() || !(per_step > 0)) {
    throw std::invalid_argument("training: needs steps, or tokens with parallelism.global_batch and model.seq_length");
  }
  return static_cast<std::int64_t>(std::ceil(t.tokens() / per_step));
}

}  // namespace mofasim::scenario
