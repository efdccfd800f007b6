// The closed-form MoFa step model (MoFa §3.2-3.3; docs/architecture.md maps each of its equations to the
// function that implements it): the time of one training step,
// where it goes, TFLOPS / MFU / HFU and memory per stage, for one scenario, without simulating it.
// It is the tuner's fast path and what the step simulation is validated against.
//
// Two levels:
//   * AnalyticModel(input) validates the specs and builds the priced per-rank plan
//     (model/rank_plan.h, the same plan the step simulation's generator reads): the per-op tables
//     of each layer type, the α–β cost of every collective on rank 0's groups, the chunks of each
//     pipeline rank, its DP traffic and optimizer work, and the memory report.
//   * time_step(knobs) re-times the step for a set of device rates (efficiencies, roofline fit,
//     μ_c, μ_b) without allocating: what calibration and rate sweeps call millions of times.
// evaluate_mofa(input) does both once.
//
// Readings chosen where the paper is vague (each is also stated where it is implemented):
//   * Layer (7)–(8): compute of every op (compute-time model) plus its TP/CP/EP collectives, each
//     exposed unless the matching overlap feature hides it (20)–(22). A GEMM pairs with at most
//     one TP collective for (20); expert-TP collectives count as TP. A collective split into s
//     pieces is s collectives, each paying the full α latency (s·α + β·S on the comm side).
//   * Pipeline (9)–(12), 1F1B: the schedule's own recurrence with each rank's pass times (the
//     replay of schedules/one_f_one_b.h, O(p) state, the repeating steady phase added at once),
//     exact for uneven stages; with uniform stages and free hops it is (m + p − 1)(T_F + T_B).
//     GPipe: two flow shops of identical jobs, Σ_r T_F,r + (m−1)·max_r T_F,r for the forwards and
//     likewise for the backwards. A blocking send is part of its pass (T + t_pp); with PP overlap
//     a pass costs (23), max(α·T, β·t_pp), and its data arrives t_pp later.
//   * Interleaved 1F1B, and 1F1B with EP overlap: the first micro-batch's forward down virtual
//     stages 0..p−2 (warm-up, p−1 exposed hops), the busiest rank's m·v pairs (steady), the last
//     micro-batch's backward back up (cool-down); exact for uniform chunks only. With EP overlap a
//     steady forward+backward pair of each MoE layer costs (22) (warm-up forwards and cool-down
//     backwards run alone and expose their all-to-all).
//   * ZB-H1 and DualPipe: busiest rank's busy time + the schedule's closed-form bubble
//     (schedules/factory.h; DualPipe's F&B pair with the EP overlap credit) + 2(p−1) exposed hops.
//   * Optimizer (13)–(14): per pipeline rank, DP reduction (all-reduce of gradients, or
//     reduce-scatter of gradients + all-gather of parameters with the distributed optimizer
//     (25)–(26)), one α per gradient bucket of whole layers (model::GradientBuckets), plus the update (GPU Adam as a memory-bound pass
//     over the optimizer bytes, or D2H + CPU update + H2D (27)–(28)). Each rank starts its own
//     when its last pass ends; the step ends with the last rank (14). Interleaved 1F1B takes rank
//     r's end as Σ_{j<r}(T_B,j + hop) before rank 0's (the drain), ZB-H1 and DualPipe the pipeline's.
//     DP overlap (24): the reduction of chunk i hides under the cool-down backward of one
//     micro-batch group (min(m, p) chunk backwards), the all-gather under the warm-up forwards; the
//     last chunk's part stays exposed. At v = 1 the chunk is the gradient bucket: the last
//     micro-batch's backward closes the buckets block by block and their reductions queue on the
//     one DP stream, the backward running α-slowed beside them (bucketed_dp_overlap_seconds).
//   * Every overlap's α is at least the hardware's overlap interference (model/interference.h),
//     the floor the replay applies beside any collective, whether or not the specs carry it.
//   * Recompute: selective (29)–(30) adds the forward of the recomputed ops to T_B; full (31)–(32)
//     adds the whole T_F,layer (its TP/CP/EP collectives included) to T_B.
//   * Offload (33)–(35): T_F,layer → max(α·T_F, β·t_D2H), T_B,layer → max(α'·T_B, β'·t_H2D) with
//     the layer's stored activation as the copy; the extra time is reported under compute.
//   * μ_b (FeatureSpec::bandwidth_scale, MoFa(18)) divides the bandwidth term of every collective on
//     top of TopologySpec's own bandwidth_decay / bandwidth_scale.
#pragma once

#include <array>
#include <vector>

#include "model/memory.h"
#include "model/op_table.h"
#include "model/rank_plan.h"
#include "model/spec.h"
#include "topology/rank_order.h"
#include "topology/topology_spec.h"

namespace mofasim::model {

struct AnalyticInput {
  ModelSpec model;
  HardwareSpec hardware;
  ParallelSpec parallel;
  FeatureSpec features;
  topology::TopologySpec topology;
  topology::RankOrder rank_order{};  // Megatron's "tp-cp-ep-dp-pp" unless given
};

// The device rates a step can be re-timed with, without preparing again.
struct RateKnobs {
  EfficiencySpec efficiency;
  double roofline_slope = 0;      // HardwareSpec::roofline_slope (modified roofline, §5.7)
  double roofline_intercept = 0;  // HardwareSpec::roofline_intercept
  double compute_scale = 1.0;     // μ_c, MoFa(17)
  double bandwidth_scale = 1.0;   // μ_b, MoFa(18)
};

// Where the step time goes, in seconds; the fields sum to the step time.
struct StepBreakdown {
  double compute = 0;     // busiest rank's compute in the pipeline (recompute and offload stalls included)
  double tp_exposed = 0;  // TP (and expert-TP) communication not hidden by compute
  double cp_exposed = 0;
  double ep_exposed = 0;
  double pp_bubble = 0;   // idle time of the busiest rank (pipeline − its busy time − exposed hops)
  double pp_exposed = 0;  // PP send/recv on the critical path
  double dp_exposed = 0;
  double optimizer = 0;   // parameter update (GPU, or D2H + CPU + H2D)

  [[nodiscard]] double total() const {
    return compute + tp_exposed + cp_exposed + ep_exposed + pp_bubble + pp_exposed + dp_exposed + optimizer;
  }
};

// The timing half of a result (no allocation).
struct StepTiming {
  double step_time_s = 0;  // MoFa(14)
  StepBreakdown breakdown;
  double warmup_s = 0;     // MoFa(9)  (1F1B: until the busiest rank's first forward; interleaved; 0 otherwise)
  double steady_s = 0;     // MoFa(10) (the busy time for the other schedules)
  double cooldown_s = 0;   // MoFa(11) (1F1B: the rest of the pipeline beyond warm-up and steady)
  double pipeline_s = 0;   // MoFa(12)
  double optimizer_s = 0;  // MoFa(13): dp_exposed + optimizer, what runs after the pipeline's end
  double forward_chunk_s = 0;   // T_F,c of the busiest rank's chunks (mean), alone
  double backward_chunk_s = 0;  // T_B,c likewise (recompute included)
  double tflops_per_gpu = 0;    // MoFa(15), in TFLOP/s (1e12)
  double mfu = 0;
  double hfu = 0;
  double tokens_per_s = 0;
};

struct AnalyticResult {
  StepTiming timing;
  // Per pipeline rank: MoFa(4) MoFa(5) MoFa(6) MoFa(25) MoFa(26) MoFa(27) MoFa(28) MoFa(29) MoFa(30) MoFa(31)
  // MoFa(32) MoFa(33) MoFa(34) MoFa(35).
  MemoryReport memory;
  bool fits = true;             // every stage fits its device
  double memory_excess_bytes = 0;  // worst stage's peak − capacity when it does not fit, else 0
};

class AnalyticModel {
 public:
  // Validates the specs (std::invalid_argument naming the field) and prepares the step.
  explicit AnalyticModel(const AnalyticInput& input);

  [[nodiscard]] const AnalyticInput& input() const { return input_; }
  [[nodiscard]] const MemoryReport& memory() const { return plan_.memory; }
  // The knobs of the prepared input.
  [[nodiscard]] RateKnobs rates() const;

  // The step re-timed with `knobs`. No heap allocation.
  [[nodiscard]] StepTiming time_step(const RateKnobs& knobs) const;
  // time_step(rates()) (timed once, when prepared) plus the memory report; the rvalue overload
  // moves the report out instead of copying it.
  [[nodiscard]] AnalyticResult evaluate() const&;
  [[nodiscard]] AnalyticResult evaluate() &&;

  // The priced per-rank plan the step is timed from (what each rank holds and does).
  [[nodiscard]] const RankPlan& plan() const { return plan_; }

 private:
  AnalyticInput input_;
  HardwareSpec hardware_;      // input hardware without its name (no allocation when copied)
  RankPlan plan_;
  int p_ = 1;
  int v_ = 1;                  // chunks per rank (2 for DualPipe)
  int m_ = 1;
  StepTiming timing_;                   // time_step(rates()), what evaluate() reports
};

// Prepares and evaluates one scenario.
AnalyticResult evaluate_mofa(const AnalyticInput& input);

}  // namespace mofasim::model
