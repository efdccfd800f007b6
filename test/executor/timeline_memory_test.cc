// The timeline's per-stage memory (proto/timeline.proto, StepSummary.StageMemory) on a shipped
// scenario: peak_bytes is the reserved total of model/memory_reserve.h, and the timeline carries
// its parts, so allocated + fragmentation + CUDA context + memory_reserved = peak_bytes, stage by
// stage, with each part the hand-worked value of the scenario's hardware.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "proto/timeline.pb.h"
#include "sim/executor/simulate_step.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/scenario_specs.h"

namespace mofasim::executor {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// The schema's default CUDA context (lazy module loading), docs/scenario-reference.md: the
// shipped H100 preset keeps it.
constexpr double kDefaultCudaContext = 287'047'680;

// The 70B showcase (TP 8, PP 4 with 5 chunks, DP 64 on 2,048 H100), simulated with `sets`; its
// timeline written, parsed back and checked against the step result it came from.
proto::StepSummary shipped_summary(const std::string& tag, const std::vector<std::string>& sets) {
  const scenario::LoadedScenario s =
      cli::load_checked(std::string(MOFASIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100-2048.yaml", sets);
  const std::string path = std::string(MOFASIM_BINARY_DIR) + "/executor_timeline_memory_" + tag + ".pb";
  const StepResult r = simulate_step(cli::simulation_input(s), {.timeline_path = path});
  proto::Timeline tl;
  {
    std::ifstream f(path, std::ios::binary);
    EXPECT_TRUE(tl.ParseFromIstream(&f)) << path;
  }
  std::remove(path.c_str());
  const proto::StepSummary& sum = tl.summary();
  EXPECT_EQ(sum.memory_size(), 4);  // one row per pipeline stage
  EXPECT_EQ(sum.memory_size(), static_cast<int>(r.memory.size()));
  for (int i = 0; i < sum.memory_size() && i < static_cast<int>(r.memory.size()); ++i) {
    const proto::StepSummary::StageMemory& m = sum.memory(i);
    const StageMemory& want = r.memory[static_cast<std::size_t>(i)];
    EXPECT_TRUE(m.has_allocated_bytes() && m.has_fragmentation_bytes() && m.has_cuda_context_bytes()) << "stage " << i;
    EXPECT_EQ(m.allocated_bytes(), want.allocated_bytes) << "stage " << i;
    EXPECT_EQ(m.fragmentation_bytes(), want.fragmentation_bytes) << "stage " << i;
    EXPECT_EQ(m.cuda_context_bytes(), want.cuda_context_bytes) << "stage " << i;
  }
  return sum;
}

// The parts of every stage: allocated = static + live activation peak, fragmentation = allocated
// f / (1 - f), the given context and reserved buffers, adding up to peak_bytes.
void expect_parts_add_up(const proto::StepSummary& sum, double f, double context, double reserved) {
  ASSERT_GT(sum.memory_size(), 0);
  for (const proto::StepSummary::StageMemory& m : sum.memory()) {
    SCOPED_TRACE("stage " + std::to_string(m.stage()));
    EXPECT_GT(m.static_bytes(), 10 * kGiB);  // 70B / (TP 8 x PP 4) ~ 2.2e9 parameters a GPU
    EXPECT_GT(m.peak_activation_bytes(), 1 * kGiB);
    EXPECT_DOUBLE_EQ(m.allocated_bytes(), m.static_bytes() + m.peak_activation_bytes());
    EXPECT_NEAR(m.fragmentation_bytes(), m.allocated_bytes() * f / (1 - f), 1e-9 * m.allocated_bytes());
    EXPECT_EQ(m.cuda_context_bytes(), context);
    EXPECT_EQ(m.reserved_bytes(), reserved);
    EXPECT_DOUBLE_EQ(m.allocated_bytes() + m.fragmentation_bytes() + m.cuda_context_bytes() + m.reserved_bytes(),
                     m.peak_bytes());
    EXPECT_EQ(m.capacity_bytes(), 80 * kGiB);
    EXPECT_EQ(m.fits(), m.peak_bytes() <= m.capacity_bytes());
  }
}

TEST(ExecutorTimelineMemory, ShippedScenarioPeakIsAllocatedPlusContext) {
  // As shipped: expandable segments (f = 0), the default context, no other buffers.
  const proto::StepSummary sum = shipped_summary("shipped", {});
  expect_parts_add_up(sum, 0.0, kDefaultCudaContext, 0.0);
  for (const proto::StepSummary::StageMemory& m : sum.memory()) {
    EXPECT_EQ(m.fragmentation_bytes(), 0);
    EXPECT_EQ(m.peak_bytes(), m.allocated_bytes() + kDefaultCudaContext);
    EXPECT_TRUE(m.fits());
  }
}

TEST(ExecutorTimelineMemory, EveryPartOfTheReservedTotalIsCarried) {
  // The caching allocator (f = 0.15, GMLake), an eager-loading context of 666,632,192 B and 2 GiB
  // of NCCL/cuBLAS buffers: all four parts non-zero.
  const double context = 666'632'192;
  const proto::StepSummary sum =
      shipped_summary("caching", {"hardware.allocator=caching", "hardware.cuda_context=666632192 B",
                                  "hardware.memory_reserved=2 GiB"});
  expect_parts_add_up(sum, 0.15, context, 2 * kGiB);
  for (const proto::StepSummary::StageMemory& m : sum.memory()) {
    EXPECT_NEAR(m.peak_bytes(), m.allocated_bytes() / 0.85 + context + 2 * kGiB, 1e-9 * m.peak_bytes());
  }
}

}  // namespace
}  // namespace mofasim::executor
