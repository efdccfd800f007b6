// What a GPU must hold at a stage's peak beyond the tensors the training step allocates: the CUDA
// context, the allocator's fragmentation and the framework's other buffers. `mofasim memory`,
// the step simulation, the analytic model and the tuner all judge fit on DeviceReserve::total();
// the allocated peak alone is what torch.cuda.max_memory_allocated measures. docs/memory-fit.md
// says where each default comes from.
//
//   reserved total = allocated / (1 - f) + cuda_context + memory_reserved
//
// f is the allocator's fragmentation at the peak, 1 - allocated/reserved (as torch.cuda's
// memory_stats report them): HardwareSpec::allocator_fragmentation when given, else the
// allocator's default (allocator_default_fragmentation).
#pragma once

#include "model/spec.h"

namespace mofasim::model {

// The caching allocator loses 15 % of what it reserves: GMLake (Guo et al., ASPLOS 2024,
// arXiv:2401.08156) removes on average 15 % (up to 33 %) fragmentation of PyTorch's caching
// allocator by virtual-memory stitching, across eight LLMs on A100-80GB; we take the removed share
// as the caching allocator's loss.
inline constexpr double kCachingAllocatorFragmentation = 0.15;
// Expandable segments grow by mapping pages, so blocks freed at a segment's end coalesce: 0 by
// design (PyTorch's CUDA semantics notes, "Optimizing memory usage with PYTORCH_CUDA_ALLOC_CONF"),
// not a measurement.
inline constexpr double kExpandableSegmentsFragmentation = 0.0;
// The largest fragmentation a scenario may give: at 0.9 the allocator would reserve ten times
// what it allocates.
inline constexpr double kMaxAllocatorFragmentation = 0.9;

double allocator_default_fragmentation(AllocatorKind allocator);
// HardwareSpec::allocator_fragmentation, or the allocator's default when it is not given.
double allocator_fragmentation(const HardwareSpec& hw);

struct DeviceReserve {
  double allocated = 0;      // tensors live at the peak (max_memory_allocated)
  double fragmentation = 0;  // allocated / (1 - f) - allocated: reserved by the allocator, not allocated
  double cuda_context = 0;   // HardwareSpec::cuda_context_bytes
  double other = 0;          // HardwareSpec::memory_reserved_bytes (NCCL, cuBLAS workspaces)
  [[nodiscard]] double total() const { return allocated + fragmentation + cuda_context + other; }
};

// The reserved total for `allocated_bytes` of tensors at the peak on `hw`.
// Throws std::invalid_argument when the fragmentation is outside [0, 0.9) or the context negative.
DeviceReserve device_reserve(const HardwareSpec& hw, double allocated_bytes);

// Copies a reserve and the GPU's capacity into a stage's memory record (the memory model's
// StageMemory and the replay's share these field names).
template <class Stage>
void assign_device_reserve(const DeviceReserve& device, const HardwareSpec& hw, Stage& stage) {
  stage.allocated_bytes = device.allocated;
  stage.fragmentation_bytes = device.fragmentation;
  stage.cuda_context_bytes = device.cuda_context;
  stage.reserved_bytes = device.other;
  stage.peak_bytes = device.total();
  stage.capacity_bytes = hw.gpu_memory_bytes;
}

}  // namespace mofasim::model
