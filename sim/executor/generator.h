// The workload generator's passes (private to sim/executor; generate.h is the interface). One
// Generator expands one step: the early parameter all-gathers, the schedule walk stage by stage
// (generate_pipeline.cc: each op's layers, P2P, EP pairing), each layer's pass programs with the
// MoFa feature transformations (generate_layer.cc), and the DP buckets and optimizer
// (generate_dp.cc). Each pass returns what it emitted that a later pass needs (the early gathers,
// a stage's last compute and blocking sends); the members below are the step's DAG and the
// lookup tables its P2P and gradient tasks are found through.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/executor/generate.h"
#include "sim/executor/step_plan.h"
#include "sim/executor/workload.h"

namespace mofasim::executor::detail {

// Labels shared by every task of one pass of one layer.
struct Labels {
  int stage = 0;
  int chunk = 0;
  std::uint32_t microbatch = kNone;
  std::uint32_t layer = kNone;
  TaskPhase phase = TaskPhase::kForward;
};

// First and last task a program emitted (kNone when it emitted nothing).
struct Span {
  TaskId first = kNone;
  TaskId last = kNone;
};

// What the schedule walk leaves for the stage's DP reduction and update.
struct StageEnd {
  TaskId last_compute = kNone;         // the stage's last compute task of the pipeline
  std::vector<TaskId> blocking;        // its trailing blocking sends (pp_overlap off)
};

// DualPipe's pairing (generate_pipeline.cc): the units of two paired passes in issue order, a
// whole module of one (up to and including its next run of EP communication) before the other's.
std::vector<TaskId> interleave_modules(const Workload& w, const std::vector<TaskId>& a, const std::vector<TaskId>& b);

class Generator {
 public:
  explicit Generator(const GenerateInput& in);
  Workload run();

 private:
  using Op = schedules::Op;
  struct OpUnits {
    std::vector<TaskId> units;
    std::vector<TaskId> blocking;  // sends the next compute must wait for (pp_overlap off)
  };
  struct Bucket {
    double bytes = 0;
    std::vector<TaskId> ready;  // last gradient task of each layer in the bucket
  };

  void validate_input() const;
  [[nodiscard]] std::size_t chunk_slot(int stage, int chunk) const {
    return static_cast<std::size_t>(stage) * sched_.chunks() + chunk;
  }
  [[nodiscard]] std::size_t mb_slot(int stage, int chunk, std::uint32_t mb) const {
    return chunk_slot(stage, chunk) * m_ + mb;
  }
  static float coeff(bool enabled, double v) { return enabled ? static_cast<float>(v) : 1.0f; }
  static std::uint16_t u16(int v) { return static_cast<std::uint16_t>(v); }

  // ---- tasks and pass programs (generate_layer.cc)
  TaskId add_compute(const Labels& l, std::string_view name, double seconds, double flops, Category cat);
  TaskId add_comm(const Labels& l, const PlanOp& op, double bytes);
  [[nodiscard]] const model::OverlapSpec& overlap_of(Scope scope) const;
  void seal(TaskId t);
  void touch(TaskId t);
  void emit_program(const PassPlan& pass, const Labels& l, Category compute_cat, bool memfine_split,
                    double memfine_forward_seconds);
  [[nodiscard]] double cp_block_bytes(const PassPlan& pass) const;
  void emit_tp_overlap(const Labels& l, const PlanOp& comm, const PlanOp& gemm, Category cat, bool comm_first);
  void emit_cp_ring(const Labels& l, const PlanOp& attn, double seconds, double block_bytes, Category cat);
  void emit_memfine(const Labels& l, const PlanOp& expert, double seconds, double forward_seconds);
  [[nodiscard]] double stored_bytes(const LayerPlan& lp) const;
  [[nodiscard]] bool transformer_layer(const LayerPlan& lp) const;
  [[nodiscard]] bool offloads(const LayerPlan& lp) const;
  [[nodiscard]] bool memfine_applies(const LayerPlan& lp) const;
  [[nodiscard]] double weight_grad_bytes(const LayerPlan& lp) const;
  static double expert_forward_seconds(const LayerPlan& lp);
  void emit_layer_forward(const LayerPlan& lp, const Labels& l);
  void emit_layer_backward(const LayerPlan& lp, const Labels& l, bool full, TaskId prefetch_after,
                           std::size_t offload_index);
  void emit_fsdp_gather(const LayerPlan& lp, const Labels& l);
  void end_fsdp_pass(const LayerPlan& lp, const Labels& l);
  static bool fsdp_gathers(const LayerPlan& lp);
  static Span merge(Span a, Span b);
  void emit_layer_weight_grad(const LayerPlan& lp, const Labels& l);

  // ---- pipeline walk (generate_pipeline.cc)
  [[nodiscard]] std::size_t p2p_index(std::uint32_t lane, std::uint32_t pos, std::uint32_t mb) const;
  TaskId p2p(bool forward, std::uint32_t lane, std::uint32_t pos, std::uint32_t mb);
  OpUnits emit_op(int stage, const Op& op);
  [[nodiscard]] TaskId first_compute(const std::vector<TaskId>& units) const;
  void seal_send(TaskId send, OpUnits& out);
  [[nodiscard]] bool pairable(const Op& a, const Op& b) const;
  static std::vector<TaskId> interleave(const Workload& w, const std::vector<TaskId>& a, const std::vector<TaskId>& b);
  StageEnd emit_stage(int stage);
  [[nodiscard]] TaskId last_of_stream(const std::vector<TaskId>& order, Stream s) const;

  // ---- DP and optimizer (generate_dp.cc)
  [[nodiscard]] std::vector<Bucket> buckets(int stage, bool expert) const;
  TaskId add_stage_task(int stage, TaskKind kind, Category cat, Stream stream, Scope scope,
                        std::optional<CollectiveKind> coll,
                        std::string_view name, double work);
  std::vector<TaskId> emit_early_param_gathers();
  TaskId emit_param_gathers(int stage, double share, TaskId after, int part = 0, int parts = 1);
  void emit_dp_and_optimizer(int stage, const StageEnd& end);

  const GenerateInput& in_;
  const schedules::Schedule& sched_;
  const StepPlan& plan_;
  const model::FeatureSpec& f_;
  Workload w_;
  int positions_ = 0;
  int lanes_ = 1;
  int m_ = 1;

  // Lookup tables of the step: P2P tasks by (lane, position, micro-batch), each chunk's last
  // input-gradient task and offload copies per micro-batch, each layer's last gradient task, and
  // the early parameter all-gather each chunk's forwards wait for.
  std::vector<TaskId> p2p_fwd_, p2p_bwd_;
  std::vector<TaskId> chunk_last_bi_;
  std::vector<std::vector<TaskId>> offload_d2h_;
  std::vector<std::vector<TaskId>> layer_last_grad_;
  std::vector<TaskId> gather_before_forward_;
  // ZeRO-3 / FSDP, per stage: the last task of the two latest layer passes emitted there; a
  // layer's parameter all-gather waits for the older one (two gathered layers at a time: the one
  // computing and the one prefetched).
  std::vector<std::array<TaskId, 2>> fsdp_pass_end_;
  std::vector<TaskId> fsdp_last_gather_;  // per stage: gathers run one after another (FSDP's stream)

  // Emission state of the op being generated.
  std::vector<TaskId> deps_;
  std::vector<TaskId> units_;
  Span span_;
  double current_layer_expert_bytes_ = 0;
};

}  // namespace mofasim::executor::detail
