// The framework of a measured row from its source column, and that what is known about a framework
// applies to a row of it whatever its id: another MLPerf round's row is priced as the open set's.
#include "sim/analysis/measured_open_framework.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "sim/analysis/measured_open_mapping.h"
#include "sim/analysis/measured_open_stack.h"
#include "test/validation/open_rows_for_test.h"

namespace mofasim::analysis {
namespace {

using test::open_row;

SourceFramework framework_of(const std::string& id, const std::string& source) {
  return source_framework(open_row({{"id", id}, {"source", source}}));
}

// Each open-set source column as runs.csv writes it (the beginning of its cell), and others' words.
TEST(OpenFramework, EachOpenSetSourceColumnNamesItsFramework) {
  using F = SourceFramework;
  const std::pair<const char*, F> cases[] = {
      {"github.com/MooreThreads/SimuMax docs/b200/b200_release_v1.2_summary.md", F::kSimuMaxMegatron},
      {"github.com/pytorch/torchtitan docs/performance.md @ 0809984", F::kTorchtitan},
      {"github.com/Dao-AILab/flash-attention training/README.md 'Training speed'", F::kFlashAttentionGpt},
      {"github.com/InternLM/InternLM doc/en/train_performance.md", F::kInternEvo},
      {"github.com/alibaba/Megatron-LLaMA README.md", F::kMegatronLlama},
      {"github.com/NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md", F::kNvidiaMegatron},
      {"github.com/NVIDIA-NeMo/Automodel docs/performance-summary.md", F::kAutomodel},
      {"github.com/mlcommons/training_results_v4.1 @ b87b9e3: Oracle/benchmarks/gpt3", F::kNvidiaMegatron},
      {"MLPerf Training v3.1, NVIDIA eos", F::kNvidiaMegatron},
      {"docs.nvidia.com/nemo-framework/user-guide performance summary", F::kNvidiaMegatron},
      {"a lab's own cluster log", F::kUnknown},
  };
  for (const auto& [source, framework] : cases) EXPECT_EQ(framework_of("X-1", source), framework) << source;
}

TEST(OpenFramework, AnOpenSetIdNamesItsFrameworkWhenTheSourceColumnDoesNot) {
  EXPECT_EQ(framework_of("O-ILM-02", "a unit test's row"), SourceFramework::kInternEvo);
  EXPECT_EQ(framework_of("O-MLP-08", ""), SourceFramework::kNvidiaMegatron);
  EXPECT_EQ(framework_of("O-AM-01", ""), SourceFramework::kAutomodel);
  // The source column wins over the id.
  EXPECT_EQ(framework_of("O-ILM-02", "github.com/pytorch/torchtitan"), SourceFramework::kTorchtitan);
  EXPECT_EQ(framework_of("X-ILM-02", ""), SourceFramework::kUnknown);
}

// The MLPerf 405B layout (pp 8 x vpp 8, 126 layers) under an id the open set does not use: the
// framework's uneven split and stack come from the source column, so the row is priced as O-MLP-08.
TEST(OpenFramework, ARowOfAKnownFrameworkUnderAnotherIdIsPricedTheSame) {
  const std::map<std::string, std::string> layout = {
      {"gpu", "H100-SXM5-80GB"}, {"gpus", "64"},     {"layers", "126"},      {"hidden", "4096"}, {"heads", "32"},
      {"kv_heads", "8"},         {"ffn_hidden", "14336"}, {"pp", "8"}, {"vpp", "8"}, {"dp", "8"}, {"micro_batch", "1"},
      {"global_batch", "64"}};
  auto row = [&](const std::string& id, const std::string& source) {
    auto cells = layout;
    cells["id"] = id;
    cells["source"] = source;
    return map_open_run(open_row(cells));
  };
  const OpenCase open = row("O-MLP-08", "github.com/mlcommons/training_results_v5.0 @ 0fdc28f");
  const OpenCase other = row("H-7", "github.com/mlcommons/training_results_v5.1 @ 1234567");
  ASSERT_TRUE(open.spec.has_value());
  ASSERT_TRUE(other.spec.has_value()) << other.reasons.front();
  EXPECT_EQ(other.split, "test");
  EXPECT_TRUE(other.spec->parallel.account_for_embedding);
  EXPECT_TRUE(other.spec->parallel.account_for_loss);
  EXPECT_EQ(other.spec->parallel.sequence_parallel, open.spec->parallel.sequence_parallel);
  EXPECT_EQ(other.spec->model.kernel_stack, open.spec->model.kernel_stack);
  EXPECT_EQ(other.spec->model.kernel_stack, model::KernelStack::kTransformerEngine);
  // Without a framework the same layout is listed: the split is not known.
  const OpenCase unknown = row("H-8", "a lab's own cluster log");
  EXPECT_FALSE(unknown.spec.has_value());
}

}  // namespace
}  // namespace mofasim::analysis
