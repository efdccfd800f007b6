// Workload: one training step of ONE pipeline replica (one rank per stage) as a task DAG, stored
// as structure-of-arrays with 32-bit ids so that millions of tasks stay compact. Replicas that
// differ only in their (tp, cp, dp) coordinates are not materialised: a task's Scope says how its
// instances map onto ranks (replay.h indexes them arithmetically).
//
// Dependencies are edges u -> v ("v starts after u ends"). Stream order is expressed as edges too:
// chain(stage, stream, task) links a task after the previous task generated on that stage's stream,
// so the generator's emission order on a stream is its execution order.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/executor/task.h"

namespace mofasim::executor {

// Everything a generator states about one task (the builder's input; stored column-wise).
struct TaskSpec {
  TaskKind kind = TaskKind::kCompute;
  Category category = Category::kCompute;
  Stream stream = Stream::kCompute;
  Scope scope = Scope::kRank;
  TaskPhase phase = TaskPhase::kForward;
  std::optional<CollectiveKind> collective{};  // collective and p2p tasks only
  std::uint16_t stage = 0;
  std::uint16_t peer_stage = 0;      // P2P: receiving stage; otherwise == stage
  std::uint16_t chunk = 0;
  std::uint32_t microbatch = kNone;  // kNone: not per micro-batch (DP, optimizer)
  std::uint32_t layer = kNone;       // kNone: not a single layer (aggregate, embedding, head)
  std::uint16_t op = 0;              // Workload::op_name(op)
  double work = 0;                   // device-seconds (compute, host) or bytes (comm, copy)
  double flops = 0;                  // FLOPs executed (compute and recompute)
  double alloc_bytes = 0;            // memory the task allocates on `stage` when it starts
  double free_bytes = 0;             // memory the task frees on `stage` when it ends
  float alpha = 1;                   // communication: MoFa time-increase coefficient on compute
  float beta = 1;                    // communication: its own slowdown while overlapping compute
};

class Workload {
 public:
  Workload(int stages, int microbatches);

  [[nodiscard]] int stages() const { return stages_; }
  [[nodiscard]] int microbatches() const { return microbatches_; }

  // Interns an op name ("attention", "fc1+act+fc2", ...); the same name returns the same id.
  std::uint16_t intern(std::string_view name);
  [[nodiscard]] const std::string& op_name(std::uint16_t id) const { return op_names_[id]; }

  TaskId add(const TaskSpec& spec);
  void add_edge(TaskId from, TaskId to);
  // Adds `task` after the last task chained on (stage, stream) and makes it the last.
  void chain(int stage, Stream stream, TaskId task);
  // Memory bookkeeping set after creation (a layer's first/last task is known only once emitted).
  void add_alloc(TaskId t, double bytes);
  void add_free(TaskId t, double bytes);
  // Builds the successor lists (CSR). Must be called once, after the last add/add_edge.
  void finalize();

  [[nodiscard]] std::uint32_t size() const { return static_cast<std::uint32_t>(kind_.size()); }
  [[nodiscard]] std::size_t edges() const { return edge_to_.size(); }
  [[nodiscard]] bool finalized() const { return finalized_; }

  [[nodiscard]] TaskKind kind(TaskId t) const { return kind_[t]; }
  [[nodiscard]] Category category(TaskId t) const { return category_[t]; }
  [[nodiscard]] Stream stream(TaskId t) const { return stream_[t]; }
  [[nodiscard]] Scope scope(TaskId t) const { return scope_[t]; }
  [[nodiscard]] TaskPhase phase(TaskId t) const { return phase_[t]; }
  [[nodiscard]] std::optional<CollectiveKind> collective(TaskId t) const { return collective_[t]; }
  [[nodiscard]] int stage(TaskId t) const { return stage_[t]; }
  [[nodiscard]] int peer_stage(TaskId t) const { return peer_stage_[t]; }
  [[nodiscard]] int chunk(TaskId t) const { return chunk_[t]; }
  [[nodiscard]] std::uint32_t microbatch(TaskId t) const { return microbatch_[t]; }
  [[nodiscard]] std::uint32_t layer(TaskId t) const { return layer_[t]; }
  [[nodiscard]] std::uint16_t op(TaskId t) const { return op_[t]; }
  [[nodiscard]] double work(TaskId t) const { return work_[t]; }
  [[nodiscard]] double flops(TaskId t) const { return flops_[t]; }
  [[nodiscard]] double alloc_bytes(TaskId t) const { return alloc_bytes_[t]; }
  [[nodiscard]] double free_bytes(TaskId t) const { return free_bytes_[t]; }
  [[nodiscard]] float alpha(TaskId t) const { return alpha_[t]; }
  [[nodiscard]] float beta(TaskId t) const { return beta_[t]; }

  // After finalize(): successors and predecessor counts (edges may repeat; each counts once per
  // occurrence in both, so replay bookkeeping stays consistent).
  [[nodiscard]] std::span<const TaskId> successors(TaskId t) const {
    return {succ_.data() + succ_begin_[t], succ_.data() + succ_begin_[t + 1]};
  }
  [[nodiscard]] std::uint32_t predecessor_count(TaskId t) const { return pred_count_[t]; }
  [[nodiscard]] std::span<const TaskId> edge_sources() const { return edge_from_; }
  [[nodiscard]] std::span<const TaskId> edge_targets() const { return edge_to_; }

  // "F mb 3 chunk 0 layer 12 attention (stage 1)": a name for traces and error messages.
  [[nodiscard]] std::string describe(TaskId t) const;

 private:
  int stages_;
  int microbatches_;
  bool finalized_ = false;
  std::vector<std::string> op_names_;

  std::vector<TaskKind> kind_;
  std::vector<Category> category_;
  std::vector<Stream> stream_;
  std::vector<Scope> scope_;
  std::vector<TaskPhase> phase_;
  std::vector<std::optional<CollectiveKind>> collective_;
  std::vector<std::uint16_t> stage_, peer_stage_, chunk_, op_;
  std::vector<std::uint32_t> microbatch_, layer_;
  std::vector<double> work_, flops_, alloc_bytes_, free_bytes_;
  std::vector<float> alpha_, beta_;

  std::vector<TaskId> edge_from_, edge_to_;
  std::vector<TaskId> last_on_stream_;  // [stage * kStreamCount + stream]
  std::vector<std::uint32_t> succ_begin_;
  std::vector<TaskId> succ_;
  std::vector<std::uint32_t> pred_count_;
};

}  // namespace mofasim::executor
