// The vocabulary of the step DAG: what a task is (kind), where it runs (stream, group scope),
// what its time counts as in the breakdown (category), and the labels a trace shows (phase,
// stage, chunk, micro-batch, layer, op). A collective or p2p task also names its
// CollectiveKind; other tasks have none. Tasks carry work, never wall-clock durations: compute
// work is device-seconds at full rate (what model/'s compute-time model says the op takes alone on
// the GPU), communication work is bytes; the engine stretches both under contention.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>

#include "topology/collective_kind.h"

namespace mofasim::executor {

using TaskId = std::uint32_t;  // dense index into Workload's arrays
inline constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// The kind of a collective or p2p task (topology/collective_kind.h); other tasks have none.
using topology::CollectiveKind;

enum class TaskKind : std::uint8_t {
  kCompute,     // GPU kernel(s) on the compute stream; work = device-seconds
  kCollective,  // TP/CP/EP/DP collective over a group; work = buffer bytes per member
  kP2p,         // pipeline send/recv between two stages of one replica; work = bytes
  kCopy,        // D2H or H2D copy engine transfer; work = bytes
  kHost,        // CPU work (CPU optimizer update); work = host-seconds
};

// What the task's time is attributed to in StepResult's breakdown.
enum class Category : std::uint8_t {
  kCompute,    // forward / backward compute (model FLOPs)
  kRecompute,  // re-run forward compute (HFU only)
  kTp,
  kCp,
  kEp,
  kPp,         // pipeline send/recv
  kDp,         // gradient reduce-scatter / all-reduce, parameter all-gather
  kOptimizer,  // optimizer update (GPU or CPU) and its D2H/H2D copies
  kOffload,    // activation offload copies
  kCount,
};
inline constexpr int kCategoryCount = static_cast<int>(Category::kCount);

// Per-rank streams. Tasks on one stream of one rank run in the order they were generated.
enum class Stream : std::uint8_t { kCompute, kTp, kCp, kEp, kPp, kDp, kD2H, kH2D, kHost, kCount };
inline constexpr int kStreamCount = static_cast<int>(Stream::kCount);

// Which ranks share one instance of a task. A pipeline replica is one rank per stage with fixed
// (tp, cp, dp) coordinates; group scopes name the ranks of one stage that run the task together.
// Each group scope is one placement group (topology::GroupKind, InstanceMap::group_kind; kDp is
// the dp x cp group); kRank, one instance per rank, has none.
enum class Scope : std::uint8_t {
  kRank,      // one instance per rank (compute, copies, host work, PP p2p per replica)
  kTp,        // tensor-parallel group of t ranks
  kCp,        // context-parallel group of c ranks
  kEp,        // expert-parallel group of e ranks (carved out of cp*dp)
  kDp,        // data-parallel group of the dense weights (cp*dp ranks: Megatron's dp_cp group)
  kExpertDp,  // data-parallel group of the expert weights (cp*dp/e ranks)
  // HSDP (FeatureSpec::dist_opt_instances = N > 1): kDp and kExpertDp are then the shard groups
  // (dp*cp/N, edp/N ranks), and these the replica groups across them (N ranks each), which
  // all-reduce the gradient shards.
  kDpReplica,
  kExpertDpReplica,
  kExpertTp,    // expert tensor-parallel group (etp ranks of the expert layout); runs on the TP stream
  kExpertTpEp,  // etp*ep ranks: the allgather dispatcher's group (Megatron's tp_ep group); the EP stream
  kCount,
};
inline constexpr int kScopeCount = static_cast<int>(Scope::kCount);

// The part of the step a task belongs to, as traces label it: the phase of its pass (F, B, Bi, W:
// schedules::Phase, the one pass phase), a forward re-run under recompute (R), or the optimizer
// step after the last pass. A label only; the schedule orders passes by schedules::Phase.
enum class TaskPhase : std::uint8_t { kForward, kBackward, kInputGrad, kWeightGrad, kRecompute, kStep };

constexpr std::string_view category_name(Category c) {
  constexpr std::array<std::string_view, kCategoryCount> kNames = {
      "compute", "recompute", "tp", "cp", "ep", "pp", "dp", "optimizer", "offload"};
  return kNames[static_cast<int>(c)];
}

constexpr std::string_view stream_name(Stream s) {
  constexpr std::array<std::string_view, kStreamCount> kNames = {
      "compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm", "copy_d2h", "copy_h2d", "host"};
  return kNames[static_cast<int>(s)];
}

constexpr std::string_view phase_name(TaskPhase p) {
  switch (p) {
    case TaskPhase::kForward: return "F";
    case TaskPhase::kBackward: return "B";
    case TaskPhase::kInputGrad: return "Bi";
    case TaskPhase::kWeightGrad: return "W";
    case TaskPhase::kRecompute: return "R";
    case TaskPhase::kStep: return "step";
  }
  return "?";
}

constexpr bool is_communication(Category c) {
  return c != Category::kCompute && c != Category::kRecompute && c != Category::kOptimizer;
}

}  // namespace mofasim::executor
