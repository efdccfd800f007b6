// A pure, dependency-driven replay of a Schedule: each op starts when the previous op on its
// stage has finished and its cross-stage input has arrived (F after F of the previous virtual
// stage, B after B of the next one, plus a constant p2p latency when the two sit on different
// stages). The two ops of an overlapped pair start together, once both inputs are there, and run
// back to back (optionally scaled by overlapped_pair_scale). No contention, no engine: this is the reference the closed forms and the step
// executor are checked against. O(ops · stages) time in the worst case, O(ops) memory.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "schedules/schedule.h"
#include "sim/units/time.h"

namespace mofasim::schedules {

// Costs of one micro-batch through one chunk. A full backward (Phase::kBackward) costs
// input_grad + weight_grad.
struct PassCosts {
  Duration forward{};
  Duration input_grad{};
  Duration weight_grad{};
};

// Per-(stage, chunk) costs.
class CostTable {
 public:
  // Every chunk of every stage costs `costs`.
  static CostTable uniform(int stages, int chunks, PassCosts costs);

  void set(int stage, int chunk, PassCosts costs);
  [[nodiscard]] const PassCosts& at(int stage, int chunk) const;
  [[nodiscard]] int stages() const { return stages_; }
  [[nodiscard]] int chunks() const { return chunks_; }

 private:
  CostTable(int stages, int chunks, PassCosts costs);
  int stages_;
  int chunks_;
  std::vector<PassCosts> costs_;  // [stage * chunks + chunk]
};

struct EvaluateOptions {
  Duration p2p_latency{};  // added to every dependency that crosses stages
  // M_W / M_chunk: memory a pass still holds between its input-grad B and its W, relative to a
  // full forward activation. Only peak_memory uses it.
  double weight_grad_memory_ratio = 0;
  // T_F&B / (T_F + T_B): both ops of an overlapped pair (Op::overlaps_next) run this much
  // faster, in (0, 1]; 1 = no overlap benefit. Each scaled cost is rounded to the nanosecond.
  double overlapped_pair_scale = 1.0;
  bool record_op_times = false;  // fill EvaluateResult::op_start / op_end
};

struct StageStats {
  Duration busy{};  // sum of the costs of the stage's ops
  Duration idle{};  // makespan − busy: the stage's bubble, warm-up and drain included
  // Max number of (micro-batch, chunk) passes whose F has run and whose B (full or input-grad)
  // has not, counted after each op in stage order.
  int peak_activations = 0;
  // Max number of passes whose input-grad B has run and whose W has not.
  int peak_deferred_weight_grads = 0;
  // Max over the stage's op sequence of activations + weight_grad_memory_ratio × deferred, in
  // units of one chunk's forward activation.
  double peak_memory = 0;
};

struct EvaluateResult {
  Duration makespan{};
  std::vector<StageStats> stages;
  // Only with EvaluateOptions::record_op_times: [stage][index in schedule.ops(stage)].
  std::vector<std::vector<Time>> op_start;
  std::vector<std::vector<Time>> op_end;
};

// Thrown when ops can never all run. waiting() lists, per stuck stage, the op at its head and
// what it waits for.
class ScheduleDeadlock : public std::runtime_error {
 public:
  struct Waiting {
    int stage = 0;
    std::size_t index = 0;  // position of the op in the stage's list
    Op op;
    std::string waits_for;
  };
  ScheduleDeadlock(const std::string& message, std::vector<Waiting> waiting)
      : std::runtime_error(message), waiting_(std::move(waiting)) {}
  [[nodiscard]] const std::vector<Waiting>& waiting() const { return waiting_; }

 private:
  std::vector<Waiting> waiting_;
};

// Throws std::invalid_argument if the schedule breaks the per-stage contract (validate()) or the
// cost table's shape differs; ScheduleDeadlock if its cross-stage order cannot complete.
EvaluateResult evaluate(const Schedule& schedule, const CostTable& costs, const EvaluateOptions& options = {});

}  // namespace mofasim::schedules
