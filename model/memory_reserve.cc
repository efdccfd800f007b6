// The reserved total of a GPU at its peak (see memory_reserve.h).
#include "model/memory_reserve.h"

#include <stdexcept>
#include <string>

namespace mofasim::model {

double allocator_default_fragmentation(AllocatorKind allocator) {
  switch (allocator) {
    case AllocatorKind::kCaching: return kCachingAllocatorFragmentation;
    case AllocatorKind::kExpandableSegments: return kExpandableSegmentsFragmentation;
  }
  return kExpandableSegmentsFragmentation;
}

double allocator_fragmentation(const HardwareSpec& hw) {
  return hw.allocator_fragmentation.value_or(allocator_default_fragmentation(hw.allocator));
}

DeviceReserve device_reserve(const HardwareSpec& hw, double allocated_bytes) {
  const double f = allocator_fragmentation(hw);
  if (!(f >= 0 && f < kMaxAllocatorFragmentation)) {
    throw std::invalid_argument("hardware.allocator_fragmentation: must be in [0, 0.9), got " + std::to_string(f));
  }
  if (!(hw.cuda_context_bytes >= 0)) {
    throw std::invalid_argument("hardware.cuda_context: must not be negative, got " +
                                std::to_string(hw.cuda_context_bytes));
  }
  return DeviceReserve{.allocated = allocated_bytes,
                       .fragmentation = allocated_bytes / (1 - f) - allocated_bytes,
                       .cuda_context = hw.cuda_context_bytes,
                       .other = hw.memory_reserved_bytes};
}

}  // namespace mofasim::model
