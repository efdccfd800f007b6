// The closed-form MoFa step model (see analytic_model.h for the readings chosen): the step's
// pipeline and optimizer terms over the priced per-rank plan (model/rank_plan.h); the layer term
// is model/analytic_layer_time.cc, the exact 1F1B replay model/analytic_pipeline.cc.
#include "model/analytic_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/analytic_dp_buckets.h"
#include "model/analytic_layer_time.h"
#include "model/analytic_overlap.h"
#include "model/analytic_pipeline.h"
#include "model/compute_time.h"
#include "model/flops.h"
#include "model/interference.h"
#include "model/shape.h"
#include "schedules/dualpipe.h"
#include "schedules/factory.h"

namespace mofasim::model {
namespace {

void require(bool ok, const char* message) {
  if (!ok) throw std::invalid_argument(message);
}

// The specs' checks, before anything is built from them. Messages with numbers are built only
// when a check fails (every evaluation of the tuner's search passes here).
const AnalyticInput& validated(const AnalyticInput& input) {
  const ModelSpec& model = input.model;
  const ParallelSpec& par = input.parallel;
  const FeatureSpec& feat = input.features;
  validate_model(model);
  validate_parallel(model, par);
  input.topology.validate();
  if (input.topology.gpus != par.gpus()) {
    throw std::invalid_argument("topology.gpus = " + std::to_string(input.topology.gpus) + " but tp*cp*pp*dp = " +
                                std::to_string(par.gpus()));
  }
  if (!batch_divides(par.global_batch, par.micro_batch, par.dp)) {
    throw std::invalid_argument("parallel.global_batch must be a positive multiple of micro_batch*dp = " +
                                std::to_string(par.micro_batch * par.dp));
  }
  if (par.vpp != 1 && par.schedule != ScheduleKind::kInterleaved1F1B) {
    throw std::invalid_argument("parallel.vpp > 1 needs schedule interleaved_1f1b, got vpp = " +
                                std::to_string(par.vpp));
  }
  require(!feat.tp_overlap.enabled || feat.tp_overlap.chunks >= 1, "features.tp_overlap.chunks must be >= 1");
  require(feat.bandwidth_scale > 0, "features.bandwidth_scale must be > 0");

  // etp (Megatron's rules for a MoE model) is checked by validate_parallel (model/moe_dispatch.h).
  return input;
}

// The priced per-rank plan, every collective priced on rank 0's groups of the topology.
RankPlanInput plan_input(const AnalyticInput& input) {
  return {.model = &input.model, .hardware = &input.hardware, .parallel = input.parallel,
          .features = input.features, .topology = &input.topology, .rank_order = input.rank_order};
}


// What one chunk of a rank costs per micro-batch at one set of rates.
struct ChunkTime {
  LayerTime t;
  double pair = 0;      // steady F+B pair, EP overlap applied
  double ep_delta = 0;  // pair - (F + B)
  double pp_extra = 0;  // steady PP exposure of the pair, MoFa(23)
};
using ChunkBuffer = InlineBuffer<ChunkTime>;  // [rank * v + local chunk]

// One dense and one MoE layer's pass times and the EP-overlap credit of one MoE F&B pair.
struct LayerTypeTimes {
  LayerTime dense;
  LayerTime moe;
  LayerTime dense_kept;  // a layer full recompute leaves out (recompute_method block): no re-run
  LayerTime moe_kept;
  double moe_pair_delta = 0;
};

// Every block type's pass times and the EP-overlap credit of one MoE F&B pair.
struct BlockTimes {
  LayerTypeTimes layers;  // at the model's mean attention span
  LayerTime emb;
  LayerTime head;  // with the MTP modules
  // RankPlan::window_mixed: the layer types per attention span (RankPlan::kFullSpan, kWindowSpan);
  // empty otherwise (nothing to fill on the tuner's path).
  std::optional<std::array<LayerTypeTimes, 2>> span;
};

// MoFa(7) MoFa(8) of a dense and a MoE block, and MoFa(22)'s credit for one steady MoE F&B pair.
void time_layer_types(const PlanBlock& dense, const PlanBlock& moe, const LayerRates& x, ScheduleKind kind,
                      LayerTypeTimes& lt) {
  const FeatureSpec& f = x.f;
  lt.dense = dense.present ? time_block(dense, x, true) : LayerTime{};
  lt.moe = moe.present ? time_block(moe, x, true) : LayerTime{};
  if (f.recompute == RecomputeKind::kFull) {
    FeatureSpec kept = f;
    kept.recompute = RecomputeKind::kNone;
    const LayerRates kx{.hw = x.hw, .f = kept, .inv_mub = x.inv_mub, .cp = x.cp};
    lt.dense_kept = dense.present ? time_block(dense, kx, true) : LayerTime{};
    lt.moe_kept = moe.present ? time_block(moe, kx, true) : LayerTime{};
  }
  // ZeRO-3 / FSDP (MoFa has no term for it): each layer's parameters are all-gathered before its
  // forward and again before its backward, prefetched one layer ahead as FSDP and Megatron-FSDP
  // do, so a layer's gather runs under the previous layer's pass and only what exceeds a pass is
  // exposed. Layers of one type follow each other, so the pass hiding it is one of the same type.
  // The gather slows the pass it runs beside (the replay's overlap interference, at least; the DP
  // overlap's α and β when it is on): what it costs beyond the pass is window(pass, gather) − pass.
  const double gather_alpha = f.dp_overlap.enabled ? f.dp_overlap.alpha : overlap_interference_alpha(x.hw, f.overlap_interference);
  const double gather_beta = f.dp_overlap.enabled ? f.dp_overlap.beta : 1.0;
  auto fsdp = [&](const PlanBlock& block, LayerTime& t) {
    const double gather = comm_seconds(block.fsdp_gather, x.inv_mub);
    if (gather <= 0) return;
    const double fwd = t.f.total();
    const double bwd = t.backward().total();
    t.f.dp = overlap_window_seconds(fwd, gather, gather_alpha, gather_beta) - fwd;
    t.b.dp = overlap_window_seconds(bwd, gather, gather_alpha, gather_beta) - bwd;
  };
  fsdp(dense, lt.dense);
  fsdp(moe, lt.moe);
  fsdp(dense, lt.dense_kept);
  fsdp(moe, lt.moe_kept);
  // EP overlap (MoFa(22)): a steady forward+backward pair of one MoE layer, minus running them apart.
  // The paired steady passes of the 1F1B family have no published module order: the whole of one
  // pass's compute is offered to the other's all-to-alls.
  if (f.ep_overlap.enabled && kind != ScheduleKind::kGpipe && moe.present) {
    const PassTime fb = lt.moe.f;
    const PassTime bb = lt.moe.backward();
    const double pair = kind == ScheduleKind::kDualPipe
                            ? dualpipe_ep_pair_seconds(ep_pair_parts(moe, x, lt.moe), f.ep_overlap.alpha,
                                                       f.ep_overlap.beta)
                            : ep_pair_seconds(fb.total() - fb.a2a, fb.a2a, bb.total() - bb.a2a, bb.a2a,
                                              f.ep_overlap.alpha, f.ep_overlap.beta);
    lt.moe_pair_delta = pair - (fb.total() + bb.total());
  }
}

// MoFa(7) MoFa(8) of every block type, and MoFa(22)'s credit for one steady MoE F&B pair.
BlockTimes time_blocks(const RankPlan& plan, const ModelSpec& model, const LayerRates& x, ScheduleKind kind) {
  BlockTimes bt;
  time_layer_types(plan.dense, plan.moe, x, kind, bt.layers);
  if (plan.window_mixed()) {
    bt.span.emplace();
    for (std::size_t i = 0; i < 2; ++i) {
      time_layer_types(plan.spans->dense[i], plan.spans->moe[i], x, kind, (*bt.span)[i]);
    }
  }
  bt.emb = time_block(plan.embedding, x, false);
  bt.head = time_block(plan.head, x, false);
  if (model.mtp_depth > 0) {
    // Each MTP module: a layer of the last layer's type, its eh projection and its own head.
    LayerTime mtp = model.is_moe_layer(model.num_layers - 1) ? bt.layers.moe : bt.layers.dense;
    mtp += time_block(plan.mtp_projection, x, false);
    mtp += time_block(plan.head, x, false);
    bt.head += scaled(model.mtp_depth, mtp);
  }
  return bt;
}

// Whether two chunks hold the same blocks, all that chunk_time reads of a chunk.
bool same_work(const PlanChunk& a, const PlanChunk& b) {
  return a.dense_layers == b.dense_layers && a.moe_layers == b.moe_layers && a.dense_kept == b.dense_kept &&
         a.moe_kept == b.moe_kept && a.windowed == b.windowed && a.embedding == b.embedding &&
         a.head == b.head;
}

// Whether two chunks' passes send the same (the head's chunk sends no forward, the embedding's no backward).
bool same_sends(const PlanChunk& a, const PlanChunk& b) { return a.head == b.head && a.embedding == b.embedding; }

// The layers of one attention span (or all of them, at the model's mean span) of a chunk.
struct SpanLayers {
  int dense = 0;
  int moe = 0;
  int dense_kept = 0;
  int moe_kept = 0;
};

[[gnu::always_inline]] inline void add_layers(const SpanLayers& n, const LayerTypeTimes& lt, double pair_share,
                                              ChunkTime& ct) {
  if (n.dense > n.dense_kept) ct.t += scaled(n.dense - n.dense_kept, lt.dense);
  if (n.moe > n.moe_kept) ct.t += scaled(n.moe - n.moe_kept, lt.moe);
  if (n.dense_kept > 0) ct.t += scaled(n.dense_kept, lt.dense_kept);
  if (n.moe_kept > 0) ct.t += scaled(n.moe_kept, lt.moe_kept);
  ct.ep_delta += n.moe * lt.moe_pair_delta * pair_share;  // MoFa(22) on the overlapped pairs only
}

// One chunk's steady F+B pair, MoFa(22) on the overlapped pairs only, and its PP exposure MoFa(23).
ChunkTime chunk_time(const PlanChunk& c, double pair_share, const BlockTimes& bt, double t_pp, int p,
                     const FeatureSpec& f) {
  ChunkTime ct;
  if (bt.span) {
    const SpanLayers windowed{c.windowed.dense, c.windowed.moe, c.windowed.dense_kept, c.windowed.moe_kept};
    const SpanLayers full{c.dense_layers - windowed.dense, c.moe_layers - windowed.moe,
                          c.dense_kept - windowed.dense_kept, c.moe_kept - windowed.moe_kept};
    add_layers(full, (*bt.span)[RankPlan::kFullSpan], pair_share, ct);
    add_layers(windowed, (*bt.span)[RankPlan::kWindowSpan], pair_share, ct);
  } else {
    add_layers({c.dense_layers, c.moe_layers, c.dense_kept, c.moe_kept}, bt.layers, pair_share, ct);
  }
  if (c.embedding) ct.t += bt.emb;
  if (c.head) ct.t += bt.head;
  const double fwd = ct.t.f.total();
  const double bwd = ct.t.backward().total();
  ct.pair = fwd + bwd + ct.ep_delta;
  // The forward of the last virtual stage (the head's chunk) and the backward of the first (the
  // embedding's) send nothing; every other pass sends its output one stage on.
  const bool f_sends = p > 1 && !c.head;
  const bool b_sends = p > 1 && !c.embedding;
  if (f_sends || b_sends) {
    const double sent = (f_sends ? t_pp : 0.0) + (b_sends ? t_pp : 0.0);
    if (!f.pp_overlap.enabled) {
      ct.pp_extra = sent;  // each sending pass waits for its send
    } else if (ct.ep_delta != 0) {
      ct.pp_extra = pp_overlap_seconds(ct.pair, sent, f.pp_overlap.alpha, f.pp_overlap.beta) - ct.pair;
    } else {
      ct.pp_extra = (f_sends ? pp_overlap_seconds(fwd, t_pp, f.pp_overlap.alpha, f.pp_overlap.beta) : fwd) +
                    (b_sends ? pp_overlap_seconds(bwd, t_pp, f.pp_overlap.alpha, f.pp_overlap.beta) : bwd) - fwd - bwd;
    }
  }
  return ct;
}

// The busiest rank: what the pipeline term needs of it.
struct Busiest {
  int rank = 0;
  double busy = 0;  // its steady busy time, MoFa(10)
  LayerTime sum;    // one micro-batch through every chunk of it
  double pair = 0;  // its chunks' steady F+B pairs
};

// MoFa(9) MoFa(10) MoFa(11) MoFa(12): the pipeline's makespan, bubble and exposed hops, and where
// each rank's last pass ends (`last_end`, from the step's start: where its DP reduction and update
// begin). Exact replays for 1F1B without EP pairs and for GPipe; warm-up + steady + cool-down for
// the rest of the 1F1B family; the schedule's closed-form bubble for ZB-H1 and DualPipe.
void pipeline_term(const RankPlan& plan, ScheduleKind k, const FeatureSpec& f, const ChunkBuffer& chunk_times,
                   double t_pp, double moe_pair_delta, const Busiest& busiest, StepTiming& out, StageBuffer& last_end) {
  const int p = plan.p;
  const int m = plan.m;
  const int v = plan.v;
  StepBreakdown& bd = out.breakdown;
  const double busiest_busy = busiest.busy;
  const LayerTime& rank_sum = busiest.sum;
  const double rank_pair = busiest.pair;
  const double hops = 2.0 * (p - 1) * t_pp;  // warm-up and cool-down hops, exposed
  // Each rank's pass costs as the replays below see them: a blocking send is part of its pass
  // (and the receiver has the data when the pass ends); with PP overlap a pass costs MoFa(23)'s
  // window(T, t_pp), the slowdown its send causes beside it, but the send starts when the pass
  // alone ends (the replay slows the sender's next pass, not the data): the data arrives one hop
  // after T, i.e. t_pp − (window − T) after the window (rank 0's first forward's δ for all).
  const bool blocking = !f.pp_overlap.enabled;
  double edge = 0;
  if (p > 1 && !blocking) {
    const double t0 = chunk_times[0].t.f.total();
    edge = std::max(0.0, t_pp - (pp_overlap_seconds(t0, t_pp, f.pp_overlap.alpha, f.pp_overlap.beta) - t0));
  }
  StageBuffer pass_f(p);  // [rank], first local chunk
  StageBuffer pass_b(p);
  for (int r = 0; r < p; ++r) {
    const LayerTime& t = chunk_times[r * v].t;
    const double fwd = t.f.total();
    const double bwd = t.backward().total();
    const PlanChunk& c = plan.chunk(r, 0);
    if (r > 0 && fwd == chunk_times[(r - 1) * v].t.f.total() && bwd == chunk_times[(r - 1) * v].t.backward().total() &&
        same_sends(c, plan.chunk(r - 1, 0))) {
      pass_f[r] = pass_f[r - 1];  // the same passes as the rank above: the same costs
      pass_b[r] = pass_b[r - 1];
      continue;
    }
    // The last virtual stage's forward and the first's backward send nothing (chunk_time).
    const bool f_sends = p > 1 && !c.head;
    const bool b_sends = p > 1 && !c.embedding;
    pass_f[r] = !f_sends ? fwd : blocking ? fwd + t_pp : pp_overlap_seconds(fwd, t_pp, f.pp_overlap.alpha, f.pp_overlap.beta);
    pass_b[r] = !b_sends ? bwd : blocking ? bwd + t_pp : pp_overlap_seconds(bwd, t_pp, f.pp_overlap.alpha, f.pp_overlap.beta);
  }
  const bool replay_1f1b = k == ScheduleKind::k1F1B && moe_pair_delta == 0;
  const bool gpipe = k == ScheduleKind::kGpipe;
  if (replay_1f1b || gpipe) {
    if (replay_1f1b) {
      one_f_one_b_stage_ends(p, m, pass_f, pass_b, edge, last_end);
    } else {
      // GPipe: m forwards then m backwards per stage, each phase a flow shop of identical jobs,
      // whose makespan over stages j..p−1 is Σ_j T + (m − 1)·max_j T (plus a hop per boundary).
      // The backwards start on the last stage when its last forward ends (every other stage
      // finished its forwards earlier) and run back up to stage 0.
      double forwards = (p - 1) * edge;
      double slowest_f = 0;
      for (int r = 0; r < p; ++r) {
        forwards += pass_f[r];
        slowest_f = std::max(slowest_f, pass_f[r]);
      }
      forwards += (m - 1) * slowest_f;
      double below = 0;  // Σ_{j≥r} B_j
      double slowest_b = 0;
      for (int r = p - 1; r >= 0; --r) {
        below += pass_b[r];
        slowest_b = std::max(slowest_b, pass_b[r]);
        last_end[r] = forwards + below + (p - 1 - r) * edge + (m - 1) * slowest_b;
      }
    }
    double pipeline = 0;
    for (int r = 0; r < p; ++r) pipeline = std::max(pipeline, last_end[r]);
    const double idle = pipeline - busiest_busy;
    const double exposed_hops = std::clamp(hops, 0.0, std::max(idle, 0.0));
    bd.pp_exposed += exposed_hops;
    bd.pp_bubble = idle - exposed_hops;
    out.pipeline_s = pipeline;
    if (replay_1f1b) {  // MoFa(9): the first micro-batch's forward down to the busiest rank
      for (int j = 0; j < busiest.rank; ++j) out.warmup_s += pass_f[j] + edge;
      out.cooldown_s = pipeline - busiest_busy - out.warmup_s;
    }
  } else {
    double ring_wait = 0;  // interleaved chunk changes waiting for the ring (below)
    if (k == ScheduleKind::k1F1B || k == ScheduleKind::kInterleaved1F1B) {
      // MoFa(9) MoFa(10) MoFa(11) MoFa(12): the first micro-batch's forward down virtual stages 0..p-2, the steady
      // pairs of the busiest rank, the last micro-batch's backward back up through p-2..0.
      double warm = 0;
      double cool = 0;
      for (int j = 0; j + 1 < p; ++j) {  // virtual stage j: rank j, its first local chunk
        const ChunkTime& ct = chunk_times[j * v];
        warm += ct.t.f.total();
        cool += ct.t.backward().total();
      }
      out.warmup_s = warm + (p - 1) * t_pp;
      out.cooldown_s = cool + (p - 1) * t_pp;
      bd.pp_bubble = warm + cool;
      // Interleaved with sends that do not block the sender (PP overlap): in the warm-up each rank
      // runs one chunk for a group of p micro-batches back to back, each pass slowed by its send
      // to T' = MoFa(23)'s window(T, t_pp), then the next chunk, whose first input is the group's
      // first micro-batch back from the ring: p passes that waited for their input (none sending
      // beside them: T each) and p hops. Each of the v − 1 chunk changes waits
      // p·max(0, T + t_pp − T'), forwards in the warm-up, backwards in the cool-down (blocking
      // sends charge the hop to every pass instead: no wait). T is the busiest rank's mean chunk.
      if (k == ScheduleKind::kInterleaved1F1B && v > 1 && p > 1 && !blocking) {
        auto wait = [&](double pass) {
          return p * std::max(0.0, pass + t_pp - pp_overlap_seconds(pass, t_pp, f.pp_overlap.alpha, f.pp_overlap.beta));
        };
        const double ring_f = (v - 1) * wait(rank_sum.f.total() / v);
        const double ring_b = (v - 1) * wait(rank_sum.backward().total() / v);
        out.warmup_s += ring_f;
        out.cooldown_s += ring_b;
        ring_wait = ring_f + ring_b;
      }
    } else {
      // Other schedules: busy + the schedule's closed-form bubble (per full stage) + exposed hops.
      const double stage_chunks = k == ScheduleKind::kDualPipe ? 2.0 : 1.0;
      const schedules::PassTimes times{.forward = rank_sum.f.total() / stage_chunks,
                                       .input_grad = rank_sum.b.total() / stage_chunks,
                                       .weight_grad = rank_sum.w.total() / stage_chunks};
      const schedules::PipelineShape shape{.stages = p, .microbatches = m, .chunks = 1};
      if (k == ScheduleKind::kDualPipe) {
        const double pair = f.ep_overlap.enabled ? rank_pair / stage_chunks : -1;
        bd.pp_bubble = schedules::dualpipe_bubble(shape, times, pair);
      } else {
        bd.pp_bubble = schedules::bubble_time(k, shape, times);
      }
    }
    bd.pp_exposed += hops + ring_wait;
    out.pipeline_s = busiest_busy + bd.pp_bubble + hops + ring_wait;  // MoFa(12)
    // Where each rank's last pass ends: 1F1B-family schedules drain through the first chunks,
    // rank r finishing Σ_{j<r} (B_j + hop) before rank 0 (an upper bound when the drain waits);
    // ZB-H1 and DualPipe end every rank together.
    const bool drains = k == ScheduleKind::k1F1B || k == ScheduleKind::kInterleaved1F1B;
    double before = 0;
    for (int r = 0; r < p; ++r) {
      last_end[r] = out.pipeline_s - before;
      if (drains) before += pass_b[r] + edge;
    }
  }

}

// MoFa(13) MoFa(24) MoFa(25) MoFa(26) MoFa(27) MoFa(28): each rank reduces and updates after its own
// last pass; the step ends with the last rank to finish (MoFa(14)). Fills the DP and optimizer
// terms and the step time.
void optimizer_term(const RankPlan& plan, const ModelSpec& model, const BlockTimes& blocks,
                    const ChunkBuffer& chunk_times, const StageBuffer& last_end, const LayerRates& x, StepTiming& out) {
  const int p = plan.p;
  const int m = plan.m;
  const int v = plan.v;
  const HardwareSpec& hw = x.hw;
  const FeatureSpec& f = x.f;
  StepBreakdown& bd = out.breakdown;
  const int mb_group = std::min(m, p);
  double step = -1;
  double tail_update = 0;
  double last_update_bytes = -1;
  double last_update_s = 0;
  // What the rank above exposed, and of what: a rank reducing the same bytes under the same passes
  // exposes the same (ranks laid out alike).
  double exposed = 0;
  double stretch = 0;       // of it, the backward's own slowdown beside the DP reduction (v = 1)
  double tail_stretch = 0;  // that of the rank that ends the step
  std::array<double, 4> exposed_of{-1, -1, -1, -1};  // grad, params, bwd, fwd
  for (int r = 0; r < p; ++r) {
    const RankDp& d = plan.dp[static_cast<std::size_t>(r)];
    const double grad = comm_seconds(d.grad, x.inv_mub);
    const double params = comm_seconds(d.params, x.inv_mub);
    if (!f.dp_overlap.enabled) {
      exposed = grad + params;
    } else if (v == 1) {
      // One chunk: MoFa(24) at chunk granularity (below) would expose the whole reduction, but the
      // gradient buckets (GradientBuckets, as the step simulation issues them) reduce while the
      // last micro-batch's backward produces the next ones, one after the other on the DP stream:
      // MoFa(24) with buckets for chunks, replayed bucket by bucket (bucketed_dp_overlap_seconds),
      // so that buckets slower than the backward queue up and the backward runs slowed (α) while
      // they reduce. The parameter all-gather runs ahead of the first forward, with nothing to
      // hide under.
      const double bwd = chunk_times[r].t.backward().total();
      const std::array<double, 4> of{grad, params, bwd, 0};
      if (of != exposed_of) {
        exposed_of = of;
        BucketedDpReplay replay(bwd, f.dp_overlap.alpha, f.dp_overlap.beta);
        auto backward_of = [](const LayerTypeTimes& t) {
          return LayerTypeBackward{.dense = t.dense.backward().total(),
                                   .moe = t.moe.backward().total(),
                                   .dense_kept = t.dense_kept.backward().total(),
                                   .moe_kept = t.moe_kept.backward().total()};
        };
        DpBlockBackward backward{.head = blocks.head.backward().total(), .embedding = blocks.emb.backward().total()};
        if (blocks.span) {
          for (std::size_t i = 0; i < 2; ++i) backward.span[i] = backward_of((*blocks.span)[i]);
        } else {
          backward.span[RankPlan::kFullSpan] = backward_of(blocks.layers);
        }
        dp_buckets(plan, model, f, backward, r, x.inv_mub, replay);
        exposed = replay.finish() - bwd + params;
        stretch = replay.compute_end() - bwd;
      }
    } else {
      LayerTime per;  // mean chunk of rank r
      for (int c = 0; c < v; ++c) per += chunk_times[r * v + c].t;
      const double bwd = mb_group * per.backward().total() / v;
      const double fwd = mb_group * per.f.total() / v;
      const std::array<double, 4> of{grad, params, bwd, fwd};
      if (of != exposed_of) {
        exposed_of = of;
        exposed = dp_overlap_exposed_seconds(grad / v, bwd, v, f.dp_overlap.alpha, f.dp_overlap.beta) +
                  dp_overlap_exposed_seconds(params / v, fwd, v, f.dp_overlap.alpha, f.dp_overlap.beta);
      }
    }
    double update = 0;
    if (f.optimizer_placement == OptimizerPlacement::kCpu) {  // MoFa(28)
      update = d.d2h_bytes / hw.d2h_bandwidth + d.updated_params / hw.cpu_optimizer_params_per_second +
               d.h2d_bytes / hw.h2d_bandwidth;
    } else if (d.update_bytes > 0) {  // MoFa(13) MoFa(26): memory-bound Adam
      if (d.update_bytes != last_update_bytes) {  // ranks laid out alike update the same bytes
        last_update_bytes = d.update_bytes;
        last_update_s = optimizer_update_seconds(d.update_bytes, hw, f);
      }
      update = last_update_s;
    }
    if (last_end[r] + exposed + update > step) {
      step = last_end[r] + exposed + update;
      tail_update = update;
      tail_stretch = stretch;
    }
  }
  // What runs after the pipeline's end: the update last, the DP reduction before it.
  step = std::max(step, out.pipeline_s);
  out.optimizer_s = step - out.pipeline_s;
  bd.optimizer = std::min(tail_update, out.optimizer_s);
  bd.dp_exposed = out.optimizer_s - bd.optimizer;
  // The backward's slowdown is compute time, as the replay reports it; the rest is exposed DP.
  const double slowed = std::min(tail_stretch, bd.dp_exposed);
  bd.compute += slowed;
  bd.dp_exposed -= slowed;
  out.step_time_s = step;  // MoFa(14)
}

}  // namespace

AnalyticModel::AnalyticModel(const AnalyticInput& input)
    : input_(validated(input)), hardware_(input.hardware), plan_(build_rank_plan(plan_input(input_))) {
  const FeatureSpec& feat = input_.features;
  hardware_.name.clear();
  if (feat.optimizer_placement == OptimizerPlacement::kCpu) {
    require(input_.hardware.d2h_bandwidth > 0 && input_.hardware.h2d_bandwidth > 0 &&
                input_.hardware.cpu_optimizer_params_per_second > 0,
            "hardware.d2h_bandwidth, h2d_bandwidth and cpu_optimizer_params_per_second must be > 0 with the CPU "
            "optimizer");
  }
  p_ = plan_.p;
  v_ = plan_.v;
  m_ = plan_.m;
  // Price once so that a bad hardware spec fails here, not in the hot path; evaluate() returns it.
  timing_ = time_step(rates());
}

RateKnobs AnalyticModel::rates() const {
  return RateKnobs{.efficiency = input_.hardware.efficiency,
                   .roofline_slope = input_.hardware.roofline_slope,
                   .roofline_intercept = input_.hardware.roofline_intercept,
                   .compute_scale = input_.features.compute_scale,
                   .bandwidth_scale = input_.features.bandwidth_scale};
}

StepTiming AnalyticModel::time_step(const RateKnobs& knobs) const {
  if (!(knobs.bandwidth_scale > 0)) throw std::invalid_argument("bandwidth_scale must be > 0");
  HardwareSpec hw = hardware_;
  hw.efficiency = knobs.efficiency;
  hw.roofline_slope = knobs.roofline_slope;
  hw.roofline_intercept = knobs.roofline_intercept;
  FeatureSpec f = input_.features;
  f.compute_scale = knobs.compute_scale;
  // The replay slows compute by at least the hardware's overlap interference beside any
  // communication kernel (sim/executor/replay.cc comm_alpha); a scenario file's seal raises every
  // overlap's α to it, specs built in code (the measured runs) may not: the floor is taken here too.
  const double interference = overlap_interference_alpha(hw, f.overlap_interference);
  for (OverlapSpec* o : {&f.tp_overlap, &f.cp_overlap, &f.ep_overlap, &f.pp_overlap, &f.dp_overlap}) {
    o->alpha = std::max(o->alpha, interference);
  }
  const LayerRates x{.hw = hw, .f = f, .inv_mub = 1.0 / knobs.bandwidth_scale, .cp = input_.parallel.cp};
  const ScheduleKind kind = input_.parallel.schedule;

  const BlockTimes blocks = time_blocks(plan_, input_.model, x, kind);
  const double t_pp = comm_seconds(plan_.pp_hop, x.inv_mub);
  // Every chunk's times, once: [rank * v + local chunk]. A chunk holding what the one before it
  // holds (or the same local chunk of the rank before) costs the same: its times are copied.
  ChunkBuffer chunk_times(p_ * v_);
  for (int r = 0; r < p_; ++r) {
    const double share = plan_.pair_share[static_cast<std::size_t>(r)];
    for (int c = 0; c < v_; ++c) {
      const int i = r * v_ + c;
      const PlanChunk& chunk = plan_.chunks[static_cast<std::size_t>(i)];
      auto alike = [&](int j, int rank_j) {
        return same_work(chunk, plan_.chunks[static_cast<std::size_t>(j)]) &&
               share == plan_.pair_share[static_cast<std::size_t>(rank_j)];
      };
      if (c > 0 && alike(i - 1, r)) {
        chunk_times[i] = chunk_times[i - 1];
      } else if (r > 0 && alike(i - v_, r - 1)) {
        chunk_times[i] = chunk_times[i - v_];
      } else {
        chunk_times[i] = chunk_time(chunk, share, blocks, t_pp, p_, f);
      }
    }
  }
  const ScheduleKind k = kind;

  // Busiest rank: the largest steady busy time.
  const double mb_per_chunk = k == ScheduleKind::kDualPipe ? m_ / 2.0 : m_;
  int busiest = 0;
  double busiest_busy = -1;
  for (int r = 0; r < p_; ++r) {
    double busy = 0;
    for (int c = 0; c < v_; ++c) {
      const ChunkTime& ct = chunk_times[r * v_ + c];
      busy += mb_per_chunk * (ct.pair + ct.pp_extra);
    }
    if (busy > busiest_busy) {
      busiest_busy = busy;
      busiest = r;
    }
  }
  StepTiming out;
  StepBreakdown& bd = out.breakdown;
  LayerTime rank_sum;  // one micro-batch through every chunk of the busiest rank
  double rank_pair = 0;
  for (int c = 0; c < v_; ++c) {
    const ChunkTime& ct = chunk_times[busiest * v_ + c];
    rank_sum += ct.t;
    rank_pair += ct.pair;
    bd.ep_exposed += mb_per_chunk * ct.ep_delta;
    bd.pp_exposed += mb_per_chunk * ct.pp_extra;
  }
  const PassTime rank_b = rank_sum.backward();
  bd.compute += mb_per_chunk * (rank_sum.f.compute + rank_b.compute);
  bd.tp_exposed += mb_per_chunk * (rank_sum.f.tp + rank_b.tp);
  bd.cp_exposed += mb_per_chunk * (rank_sum.f.cp + rank_b.cp);
  bd.ep_exposed += mb_per_chunk * (rank_sum.f.ep + rank_b.ep);
  out.steady_s = busiest_busy;
  out.forward_chunk_s = rank_sum.f.total() / v_;
  out.backward_chunk_s = rank_b.total() / v_;

  // End of each rank's last pass, from the step's start: where its DP reduction and update begin.
  StageBuffer last_end(p_);
  pipeline_term(plan_, k, f, chunk_times, t_pp, blocks.layers.moe_pair_delta,
                {.rank = busiest, .busy = busiest_busy, .sum = rank_sum, .pair = rank_pair}, out, last_end);
  optimizer_term(plan_, input_.model, blocks, chunk_times, last_end, x, out);
  bd.dp_exposed += mb_per_chunk * (rank_sum.f.dp + rank_b.dp);  // ZeRO-3's per-layer gathers

  const double gpus = input_.parallel.gpus();
  const double peak = peak_flops(hw, f.compute_dtype);
  out.tflops_per_gpu = plan_.model_flops / (out.step_time_s * gpus) / 1e12;  // MoFa(15)
  out.mfu = plan_.model_flops / (out.step_time_s * gpus * peak);
  out.hfu = plan_.hardware_flops / (out.step_time_s * gpus * peak);
  out.tokens_per_s = plan_.tokens / out.step_time_s;
  return out;
}

namespace {

AnalyticResult make_result(const StepTiming& timing, MemoryReport memory) {
  AnalyticResult r{.timing = timing, .memory = std::move(memory), .fits = true, .memory_excess_bytes = 0};
  r.fits = r.memory.fits();
  if (!r.fits) {
    for (const StageMemory& s : r.memory.stages) r.memory_excess_bytes = std::max(r.memory_excess_bytes, s.excess_bytes);
  }
  return r;
}

}  // namespace

AnalyticResult AnalyticModel::evaluate() const& { return make_result(timing_, plan_.memory); }

AnalyticResult AnalyticModel::evaluate() && { return make_result(timing_, std::move(plan_.memory)); }

AnalyticResult evaluate_mofa(const AnalyticInput& input) { return AnalyticModel(input).evaluate(); }

}  // namespace mofasim::model
