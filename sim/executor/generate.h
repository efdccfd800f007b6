// The workload generator: expands one training step into the task DAG of one pipeline replica.
//
// For every stage it walks the schedule's op list (phase, chunk, micro-batch) and emits, per layer
// of the chunk, the layer's pass program from the StepPlan: consecutive compute ops become ONE
// compute task (exact: they run back to back on the compute stream, and the engine's contention
// stretches device-seconds of a merged task exactly as it would each op), each communication op
// one task on its kind's stream. PP send/recv tasks join consecutive virtual stages; DP gradient
// buckets and the optimizer close the step. Each MoFa feature is a transformation of this DAG:
//
//   TP overlap  (MoFa(20))     the GEMM next to a TP collective and the collective are split into
//                            `chunks` pieces, piece i of the collective after piece i of the GEMM
//                            (or before it, for an all-gather feeding the GEMM).
//   CP          (MoFa(21))     the attention core becomes c ring steps; the KV-block P2P of step i
//                            runs on the CP stream beside attention step i when cp_overlap is on,
//                            after it when off.
//   EP          (MoFa(22))     dispatch and combine all-to-all around the expert compute; with
//                            ep_overlap on (or DualPipe's overlapped pairs) two consecutive passes
//                            of different micro-batches interleave on the streams, so one's
//                            all-to-all runs under the other's compute.
//   PP          (MoFa(23))     sends run on the PP stream; with pp_overlap off the next compute on
//                            the sender waits for the send (blocking p2p).
//   DP          (MoFa(24))     gradient buckets (dp_bucket_bytes) reduce as soon as their layers'
//                            last gradient is done when dp_overlap is on, after the whole
//                            backward when off; with the distributed optimizer the parameter
//                            all-gather runs at the start of the step under the forward (on) or
//                            after the update (off).
//   ZeRO-3      each layer's parameter all-gather on the DP stream before its forward and its
//                            backward, one after another, issued once the pass two before it on the
//                            stage has ended (FSDP's one-unit prefetch); no gather after the update.
//   Optimizer   (MoFa(13) MoFa(25) MoFa(26) MoFa(27) MoFa(28))  GPU update on the compute stream, or per
//                            bucket D2H, CPU update, H2D on the copy engines and host.
//   Recompute   (MoFa(29) MoFa(30) MoFa(31) MoFa(32))  a recompute task (selective: the flagged ops; full: the forward
//                            program with its TP collectives) before each layer's backward.
//   Offload     (MoFa(33) MoFa(34) MoFa(35))  each layer's activation goes D2H after its forward and comes back
//                            H2D, prefetched during the backward of the layer above.
//   MemFine                  expert backward split into k chunks, each after its own expert
//                            recompute, so only one chunk's expert activation is live.
//   Load imbalance           expert compute x the busiest EP rank's token share.
//
// Memory: a layer's stored activation is allocated when its forward starts and freed when its
// backward ends (the part the weight gradient reads, when W runs separately, at W's end).
#pragma once

#include <vector>

#include "model/spec.h"
#include "schedules/schedule.h"
#include "sim/executor/step_plan.h"
#include "sim/executor/workload.h"

namespace mofasim::executor {

struct LayerRange {
  int first = 0;
  int count = 0;
};

struct GenerateInput {
  const schedules::Schedule* schedule = nullptr;
  const StepPlan* plan = nullptr;
  model::ParallelSpec parallel{};
  model::FeatureSpec features{};
  double load_imbalance = 1.0;           // busiest EP rank's token share / mean (>= 1)
  std::vector<LayerRange> position_layers{};  // layers of each virtual stage along a lane
};

// Throws std::invalid_argument on inconsistent input (schedule shape vs plan, missing layers).
Workload generate_workload(const GenerateInput& input);

// Layers of each position along a lane from model::chunk_layers (uniform or stage_layers).
std::vector<LayerRange> position_layers(const model::ModelSpec& model, const model::ParallelSpec& parallel,
                                        const schedules::Schedule& schedule);

}  // namespace mofasim::executor
