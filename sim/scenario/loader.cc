// The load pipeline (see loader.h).
#include "sim/scenario/loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "sim/scenario/budgets.h"
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

// Records where documents start; ignores their content.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// One YAML document; a syntax error or a second document is a ScenarioError.
// NOTE: yaml-cpp 0.7 answers a stray ',' outside a flow collection with an endless series of
// empty documents (YAML::LoadAll never returns), so documents are counted with a bounded loop
// and a document that starts where the text stopped making progress is reported as that token.
YAML::Node parse_document(std::string_view text, const std::string& name) {
  Diagnostics diagnostics;
  const std::string input(text);
  YAML::Node root;
  DocumentStarts documents;
  try {
    root = YAML::Load(input);
    std::istringstream stream(input);
    YAML::Parser parser(stream);
    for (int i = 0; i < 2 && parser.HandleNextDocument(documents); ++i) {
    }
  } catch (const YAML::Exception& e) {
    diagnostics.error(mark_location(name, e.mark), "", "invalid YAML: " + e.msg);
    diagnostics.throw_if_errors();
  }
  if (documents.starts.size() > 1) {
    const YAML::Mark& second = documents.starts[1];
    const bool stuck = second.pos == documents.starts[0].pos;
    const auto at = static_cast<std::size_t>(std::max(second.pos, 0));
    const bool marker = input.compare(at, 3, "---") == 0;
    if (marker) {
      diagnostics.error(mark_location(name, second), "", "expected one YAML document, found a second one");
    } else {
      const char token = at < input.size() ? input[at] : ' ';
      diagnostics.error(mark_location(name, second), "",
                        std::string("invalid YAML: unexpected '") + token + "'" +
                            (stuck || token == ',' ? " outside a [ ] or { } collection" : ""));
    }
    diagnostics.throw_if_errors();
  }
  return root;
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
  check_budgets(loaded.proto, loaded.sources, diagnostics);  // needs the validated counts
  diagnostics.throw_if_errors();

  normalize_scenario(loaded.proto);
  loaded.model = to_model_spec(loaded.proto.model());
  loaded.hardware = to_hardware_spec(loaded.proto.hardware());
  loaded.parallel = to_parallel_spec(loaded.proto.parallelism());
  loaded.features = to_feature_spec(loaded.proto.optimizations());
  apply_overlap_interference(loaded.proto.optimizations(), loaded.hardware, loaded.features);
  return loaded;
}

std::string read_scenario_file(const std::string& path) {
  const auto refuse = [&](const std::string& reason) {
    throw ScenarioError({path + ": cannot read scenario file: " + reason});
  };
  // O_NONBLOCK: opening a FIFO with no writer must not wait; fstat then refuses it before a read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) refuse(std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) refuse(std::strerror(errno));
  if (!S_ISREG(info.st_mode)) {
    refuse(S_ISDIR(info.st_mode) ? "is a directory" : "not a regular file (a device, FIFO or socket is never read)");
  }
  if (info.st_size > kMaxScenarioFileBytes) {
    refuse(std::to_string(info.st_size) + " bytes, more than the limit of " + std::to_string(kMaxScenarioFileBytes) +
           " bytes (4 MiB)");
  }
  // Read in chunks and stop one chunk past the limit: a file that grows while read stays bounded.
  std::string text;
  text.reserve(static_cast<std::size_t>(info.st_size));
  std::array<char, 65536> chunk{};
  for (;;) {
    const ssize_t got = ::read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) refuse(std::strerror(errno));
    if (got == 0) break;
    text.append(chunk.data(), static_cast<std::size_t>(got));
    if (text.size() > static_cast<std::size_t>(kMaxScenarioFileBytes)) {
      refuse("grew past the limit of 4 MiB while read");
    }
  }
  return text;
}

LoadedScenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                             const PresetCatalog& presets) {
  return load_scenario_from_string(read_scenario_file(path), path, overrides, presets);
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
