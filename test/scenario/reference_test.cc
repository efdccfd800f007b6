// docs/scenario-reference.md is generated from the proto descriptors; this test fails when the
// checked-in file and the generator differ. Regenerate: MOFASIM_REGENERATE_DOCS=1 ctest --test-dir build -R ScenarioReference
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sim/scenario/reference.h"

namespace mofasim::scenario {
namespace {

const std::string kPath = std::string(MOFASIM_SOURCE_DIR) + "/docs/scenario-reference.md";

TEST(ScenarioReference, CheckedInFileMatchesGenerator) {
  const std::string generated = scenario_reference_markdown();
  if (std::getenv("MOFASIM_REGENERATE_DOCS") != nullptr) {
    std::ofstream(kPath) << generated;
  }
  std::ifstream in(kPath);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(text.str() == generated)
      << "docs/scenario-reference.md is out of date with proto/scenario.proto; regenerate it with "
         "`MOFASIM_REGENERATE_DOCS=1 ctest --test-dir build -R ScenarioReference` (or `mofasim schema > docs/scenario-reference.md`)";
}

TEST(ScenarioReference, DocumentsEveryMessageFieldUnitAndEnumSpelling) {
  const std::string md = scenario_reference_markdown();
  EXPECT_NE(md.find("## Parallelism"), std::string::npos);
  EXPECT_NE(md.find("| `global_batch` | int32 |"), std::string::npos);
  EXPECT_NE(md.find("`interleaved-1f1b`"), std::string::npos);                     // enum spelling
  EXPECT_NE(md.find("| `dp_bucket_size` | double | size (`\"80 GiB\"`) | `40000000 B` |"), std::string::npos);
  EXPECT_NE(md.find("| `schedule` | enum: `gpipe` \\| `1f1b`"), std::string::npos);
  EXPECT_NE(md.find("Used at: `fault_tolerance.failure_classes[]`."), std::string::npos);
  EXPECT_NE(md.find("tp*cp*pp*dp = topology.gpus"), std::string::npos);          // a validation rule
}

}  // namespace
}  // namespace mofasim::scenario
