// A pipeline schedule: for every stage (pipeline rank) the ordered list of passes it runs, each a
// (phase, local model chunk, micro-batch) triple. Nothing else: no time, no topology, no costs.
// The step generator turns a Schedule into tasks; evaluate.h replays it with per-pass costs.
//
// Placement. Micro-batches travel along *lanes*; a lane is one copy of the model cut into
// positions_per_lane() consecutive layer blocks (position k holds layers
// [k·L/P, (k+1)·L/P) for P = positions_per_lane()). Chunk c of stage s sits at slot(s, c) =
// {lane, position}. Single-lane schedules (GPipe, 1F1B, interleaved, ZB-H1) put chunk c of
// stage s at virtual stage c·p + s. DualPipe has two lanes (two parameter copies, fed from both
// ends of the pipeline); see dualpipe.h.
//
// Dependencies a valid schedule honours (evaluate.h checks them):
//   F(mb, position k)   after F(mb, k−1)                      (previous virtual stage)
//   B/Bi(mb, k)         after F(mb, k) on the same chunk and B/Bi(mb, k+1)
//   W(mb, k)            after Bi(mb, k) on the same chunk
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "schedules/phase.h"
#include "schedules/schedule_kind.h"

namespace mofasim::schedules {

struct Op {
  Phase phase = Phase::kForward;
  // True when this op and the next op on the same stage form one overlapped pair (DualPipe's
  // F&B chunk: one pass's all-to-all hides behind the other's compute). An executor may run the
  // two concurrently; evaluate() runs them back to back (no overlap credit).
  bool overlaps_next = false;
  std::uint16_t chunk = 0;       // local model chunk on this stage, in [0, chunks)
  std::uint32_t microbatch = 0;  // in [0, microbatches)

  friend bool operator==(const Op&, const Op&) = default;
};

struct ChunkSlot {
  std::uint32_t lane = 0;
  std::uint32_t position = 0;  // virtual stage index along the lane
  friend bool operator==(const ChunkSlot&, const ChunkSlot&) = default;
};

struct StageChunk {
  std::uint32_t stage = 0;
  std::uint32_t chunk = 0;
};

// Shape of the pipeline a schedule is built for.
struct PipelineShape {
  int stages = 1;        // p
  int microbatches = 1;  // m (per pipeline, per iteration)
  int chunks = 1;        // v, model chunks per stage (interleaved 1F1B only; others ignore it)
  // EP-overlap variant of 1F1B and interleaved 1F1B (MoFa(22)): steady-state F/B pairs are
  // marked Op::overlaps_next behind a longer warm-up (see one_f_one_b.h, interleaved_1f1b.h).
  // Other schedules ignore it (DualPipe always pairs).
  bool pair_steady_passes = false;
};

// Where each chunk and micro-batch lives. slots is stage-major: slots[stage * chunks + chunk].
struct ScheduleLayout {
  int stages = 0;
  int microbatches = 0;
  int chunks = 1;
  int lanes = 1;
  std::vector<ChunkSlot> slots;
  std::vector<std::uint32_t> microbatch_lane;

  // One lane; chunk c of stage s holds virtual stage c·stages + s (Megatron's interleaving).
  static ScheduleLayout single_lane(int stages, int microbatches, int chunks);
};

class Schedule {
 public:
  // Checks the layout (every (lane, position) held by exactly one chunk, equal lane lengths);
  // throws std::invalid_argument otherwise.
  Schedule(ScheduleKind kind, ScheduleLayout layout);

  // Builder step: appends op to stage's list. Checks chunk and micro-batch ranges.
  void append(int stage, Op op);

  [[nodiscard]] ScheduleKind kind() const { return kind_; }
  [[nodiscard]] int stages() const { return layout_.stages; }
  [[nodiscard]] int microbatches() const { return layout_.microbatches; }
  [[nodiscard]] int chunks() const { return layout_.chunks; }
  [[nodiscard]] int lanes() const { return layout_.lanes; }
  [[nodiscard]] int positions_per_lane() const { return positions_per_lane_; }
  // True when built with PipelineShape::pair_steady_passes (1F1B / interleaved EP-overlap variant).
  [[nodiscard]] bool pair_steady_passes() const { return pair_steady_passes_; }
  void set_pair_steady_passes(bool on) { pair_steady_passes_ = on; }
  [[nodiscard]] std::span<const Op> ops(int stage) const;
  [[nodiscard]] std::size_t total_ops() const;

  [[nodiscard]] ChunkSlot slot(int stage, int chunk) const;
  [[nodiscard]] StageChunk locate(std::uint32_t lane, std::uint32_t position) const;
  [[nodiscard]] std::uint32_t lane_of(std::uint32_t microbatch) const;

 private:
  ScheduleKind kind_;
  ScheduleLayout layout_;
  int positions_per_lane_ = 0;
  bool pair_steady_passes_ = false;
  std::vector<StageChunk> by_slot_;  // [lane * positions_per_lane + position]
  std::vector<std::vector<Op>> ops_;
};

// Checks the per-stage contract: for every micro-batch and every chunk on its lane, exactly one
// F, then either one full B or one Bi followed later by one W, in that order on that stage; no
// op for a chunk of another lane. Throws std::invalid_argument naming the first violation.
// (Cross-stage order is evaluate()'s business: a bad one shows up as a deadlock.)
void validate(const Schedule& schedule);

// Throws std::invalid_argument unless stages >= 1, microbatches >= 1 and chunks >= 1; the message
// names `schedule` (e.g. "1f1b") and the offending field.
void check_shape(const PipelineShape& shape, ScheduleKind schedule);
// check_shape, plus stage in [0, stages).
void check_stage(const PipelineShape& shape, int stage, ScheduleKind schedule);

std::string to_string(ScheduleKind kind);
std::string to_string(Phase phase);
// "F(mb 3, chunk 1)"
std::string to_string(const Op& op);

}  // namespace mofasim::schedules
