// The reserved total a GPU must hold at a stage's peak (model/memory_reserve.h): the allocated
// peak over (1 - fragmentation), plus the CUDA context and the framework's buffers, against
// hand-worked values; and memory_report judging fit on it.
#include "model/memory_reserve.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "model/memory.h"
#include "test/model/model_presets_for_test.h"

namespace mofasim::model {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kLazyContext = 287'047'680;  // PyTorch PR #86509, lazy module loading

HardwareSpec gpu_80gib(AllocatorKind allocator, double memory_reserved) {
  HardwareSpec h;
  h.gpu_memory_bytes = 80 * kGiB;
  h.cuda_context_bytes = kLazyContext;
  h.memory_reserved_bytes = memory_reserved;
  h.allocator = allocator;
  return h;
}

TEST(DeviceReserve, AllocatorDefaultsAreTheSourcedFractions) {
  EXPECT_EQ(allocator_default_fragmentation(AllocatorKind::kCaching), 0.15);             // GMLake's average
  EXPECT_EQ(allocator_default_fragmentation(AllocatorKind::kExpandableSegments), 0.0);  // by design
}

TEST(DeviceReserve, CachingAllocatorReservesTheAllocatedPeakOverEightyFivePercent) {
  // 60 GiB allocated: 60 / 0.85 = 70.588235 GiB reserved by the allocator (10.588235 GiB of it not
  // allocated), + 287,047,680 B = 0.267334 GiB context + 1 GiB of buffers = 71.855569 GiB.
  const DeviceReserve r = device_reserve(gpu_80gib(AllocatorKind::kCaching, kGiB), 60 * kGiB);
  EXPECT_EQ(r.allocated, 60 * kGiB);
  EXPECT_NEAR(r.fragmentation / kGiB, 10.588235294, 1e-9);
  EXPECT_EQ(r.cuda_context, kLazyContext);
  EXPECT_EQ(r.other, kGiB);
  EXPECT_NEAR(r.total() / kGiB, 71.855569, 1e-6);
}

TEST(DeviceReserve, ExpandableSegmentsAddOnlyTheContextAndBuffers) {
  const DeviceReserve r = device_reserve(gpu_80gib(AllocatorKind::kExpandableSegments, kGiB), 60 * kGiB);
  EXPECT_EQ(r.fragmentation, 0);
  EXPECT_EQ(r.total(), 61 * kGiB + kLazyContext);  // 61.267334 GiB
}

TEST(DeviceReserve, AGivenFragmentationOverridesTheAllocatorsDefault) {
  HardwareSpec h = gpu_80gib(AllocatorKind::kCaching, 0);
  h.allocator_fragmentation = 0.25;
  EXPECT_EQ(allocator_fragmentation(h), 0.25);
  EXPECT_EQ(device_reserve(h, 60 * kGiB).total(), 80 * kGiB + kLazyContext);  // 60 / 0.75 = 80
  h.allocator = AllocatorKind::kExpandableSegments;
  h.allocator_fragmentation = 0.0;
  EXPECT_EQ(device_reserve(h, 60 * kGiB).total(), 60 * kGiB + kLazyContext);
}

TEST(DeviceReserve, OutOfRangeFragmentationAndNegativeContextThrow) {
  HardwareSpec h = gpu_80gib(AllocatorKind::kCaching, 0);
  h.allocator_fragmentation = 0.9;
  EXPECT_THROW((void)device_reserve(h, kGiB), std::invalid_argument);
  h.allocator_fragmentation = -0.01;
  EXPECT_THROW((void)device_reserve(h, kGiB), std::invalid_argument);
  h.allocator_fragmentation.reset();
  h.cuda_context_bytes = -1;
  EXPECT_THROW((void)device_reserve(h, kGiB), std::invalid_argument);
}

// The report keeps the allocated peak and judges fit on the reserved total. A stage allocating
// 68 GiB of an 80 GiB GPU fits with expandable segments (68.267 GiB reserved) and not with the
// caching allocator: 68 / 0.85 = 80 GiB, so it is over by exactly the context.
TEST(DeviceReserve, MemoryReportJudgesFitOnTheReservedTotal) {
  const ParallelSpec par = testing::parallel_spec({.tp = 8, .cp = 1, .pp = 8, .vpp = 1, .dp = 16, .ep = 1, .etp = 1,
                                                   .micro_batch = 1, .global_batch = 1024, .sequence_parallel = true});
  const std::vector<double> inflight = one_f_one_b_inflight(par);
  HardwareSpec h = gpu_80gib(AllocatorKind::kExpandableSegments, 0);
  const MemoryReport base = memory_report(testing::llama2_70b(), h, par, FeatureSpec{}, inflight);
  const StageMemory& s = base.stages[0];
  EXPECT_EQ(s.allocated_bytes, s.static_bytes.total() + s.activation_bytes);
  EXPECT_EQ(s.peak_bytes, s.allocated_bytes + kLazyContext);
  // Capacity set so that rank 0 allocates 68/80 of it.
  h.gpu_memory_bytes = s.allocated_bytes * 80 / 68;
  const MemoryReport expandable = memory_report(testing::llama2_70b(), h, par, FeatureSpec{}, inflight);
  EXPECT_TRUE(expandable.stages[0].fits());
  h.allocator = AllocatorKind::kCaching;
  const MemoryReport caching = memory_report(testing::llama2_70b(), h, par, FeatureSpec{}, inflight);
  EXPECT_FALSE(caching.stages[0].fits());
  EXPECT_EQ(caching.stages[0].allocated_bytes, s.allocated_bytes);  // what max_memory_allocated sees is unchanged
  EXPECT_NEAR(caching.stages[0].excess_bytes, kLazyContext, 1e-3);
  EXPECT_NEAR(caching.stages[0].fragmentation_bytes, s.allocated_bytes * (0.15 / 0.85), 1e-3);
}

}  // namespace
}  // namespace mofasim::model
