// Strong ids handed out by the engine: events, resources, contention domains and activities.
// Ids are dense indices (iterate in id order, never pointer order); event and activity ids also
// carry the sequence number they were created with, so a stale id is detected, not misused.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace mofasim::sim {

inline constexpr std::uint32_t kInvalidIndex = std::numeric_limits<std::uint32_t>::max();

// A scheduled event. Default-constructed: refers to nothing (cancel() returns false).
struct EventId {
  std::uint32_t slot = kInvalidIndex;
  std::uint64_t seq = 0;
  friend constexpr bool operator==(EventId, EventId) = default;
};

// A shared fluid resource (GPU compute, comm engine, copy engine, link, host memory, disk).
struct ResourceId {
  std::uint32_t value = kInvalidIndex;
  friend constexpr auto operator<=>(ResourceId, ResourceId) = default;
};

// A contention domain (normally one GPU): where compute/communication overlap is penalised.
struct DomainId {
  std::uint32_t value = kInvalidIndex;
  friend constexpr auto operator<=>(DomainId, DomainId) = default;
};

// A started activity. `seq` is the start order: ties between activities are broken by it.
struct ActivityId {
  std::uint32_t slot = kInvalidIndex;
  std::uint64_t seq = 0;
  friend constexpr bool operator==(ActivityId, ActivityId) = default;
};

// A FluidModel interference (start_interference); `seq` detects a stale id.
struct InterferenceId {
  std::uint32_t slot = kInvalidIndex;
  std::uint64_t seq = 0;
  friend constexpr bool operator==(InterferenceId, InterferenceId) = default;
};

}  // namespace mofasim::sim
