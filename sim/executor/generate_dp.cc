// Workload generator, DP and optimizer: gradient buckets, their reduction, the distributed
// optimizer's parameter all-gathers and the GPU or CPU update of each stage.
#include "sim/executor/generator.h"

#include <algorithm>
#include <vector>

#include "model/memory.h"
#include "model/rank_plan.h"

namespace mofasim::executor::detail {

// Gradient buckets of one stage in the order the backward finishes them: chunks in reverse
// position order, layers in reverse; model::GradientBuckets closes them, as the plan counts them.
std::vector<Generator::Bucket> Generator::buckets(int stage, bool expert) const {
  std::vector<Bucket> out;
  Bucket cur;
  model::GradientBuckets fill(f_.dp_bucket_bytes);
  std::vector<int> chunks(static_cast<std::size_t>(sched_.chunks()));
  for (int c = 0; c < sched_.chunks(); ++c) chunks[static_cast<std::size_t>(c)] = c;
  std::sort(chunks.begin(), chunks.end(), [&](int a, int b) {
    return sched_.slot(stage, a).position > sched_.slot(stage, b).position;
  });
  for (int c : chunks) {
    const schedules::ChunkSlot slot = sched_.slot(stage, c);
    const LayerRange range = in_.position_layers[slot.position];
    const bool has_pre = plan_.pre && slot.position == 0;
    const bool has_post = plan_.post && slot.position == static_cast<std::uint32_t>(positions_ - 1);
    const auto& grads = layer_last_grad_[chunk_slot(stage, c)];
    std::vector<std::pair<const LayerPlan*, std::size_t>> order;
    const std::size_t off = has_pre ? 1 : 0;
    if (has_post) order.emplace_back(&*plan_.post, off + static_cast<std::size_t>(range.count));
    for (int i = range.count - 1; i >= 0; --i) {
      order.emplace_back(&plan_.layers[static_cast<std::size_t>(range.first + i)], off + static_cast<std::size_t>(i));
    }
    if (has_pre) order.emplace_back(&*plan_.pre, 0);
    for (const auto& [lp, g] : order) {
      const double bytes = expert ? lp->expert_grad_bytes : lp->dense_grad_bytes;
      if (bytes <= 0) continue;
      cur.bytes += bytes;
      if (g < grads.size() && grads[g] != kNone) cur.ready.push_back(grads[g]);
      if (fill.add(bytes)) {
        out.push_back(std::move(cur));
        cur = {};
      }
    }
  }
  if (!expert && plan_.stages[static_cast<std::size_t>(stage)].extra_grad_bytes > 0) {
    cur.bytes += plan_.stages[static_cast<std::size_t>(stage)].extra_grad_bytes;
  }
  if (cur.bytes > 0) out.push_back(std::move(cur));
  return out;
}

TaskId Generator::add_stage_task(int stage, TaskKind kind, Category cat, Stream stream, Scope scope,
                                 std::optional<CollectiveKind> coll,
                                 std::string_view name, double work) {
  const bool dp = cat == Category::kDp;
  TaskSpec t{.kind = kind, .category = cat, .stream = stream, .scope = scope, .phase = TaskPhase::kStep,
             .collective = coll, .stage = u16(stage), .peer_stage = u16(stage), .op = w_.intern(name),
             .work = work, .alpha = coeff(dp && f_.dp_overlap.enabled, f_.dp_overlap.alpha),
             .beta = coeff(dp && f_.dp_overlap.enabled, f_.dp_overlap.beta)};
  const TaskId id = w_.add(t);
  w_.chain(stage, stream, id);
  return id;
}

// Distributed optimizer with DP overlap: the parameter all-gather of each chunk runs at the start
// of the step, ahead of that chunk's first forward (MoFa(24), warm-up side).
std::vector<TaskId> Generator::emit_early_param_gathers() {
  std::vector<TaskId> gathers(static_cast<std::size_t>(sched_.stages()) * sched_.chunks(), kNone);
  for (int s = 0; s < sched_.stages(); ++s) {
    const StagePlan& sp = plan_.stages[static_cast<std::size_t>(s)];
    if (sp.param_gather_bytes <= 0 && sp.expert_param_gather_bytes <= 0) continue;
    std::vector<int> chunks(static_cast<std::size_t>(sched_.chunks()));
    for (int c = 0; c < sched_.chunks(); ++c) chunks[static_cast<std::size_t>(c)] = c;
    std::sort(chunks.begin(), chunks.end(),
              [&](int a, int b) { return sched_.slot(s, a).position < sched_.slot(s, b).position; });
    const int n = static_cast<int>(chunks.size());
    for (int i = 0; i < n; ++i) {
      gathers[chunk_slot(s, chunks[static_cast<std::size_t>(i)])] = emit_param_gathers(s, 1.0 / n, kNone, i, n);
    }
  }
  return gathers;
}

// The distributed optimizer's parameter all-gathers of `share` of the stage's parameters: the
// dense part over the DP group, then the routed experts over the expert-DP group, one after the
// other on the DP stream (MoFa(25) MoFa(26)). Under InternEvo's broadcast sync each is instead part
// `part` of `parts` of the owners' broadcasts, one task per broadcast, all the same size (as
// model::RankDp prices them). Returns the last one (kNone when neither has bytes).
TaskId Generator::emit_param_gathers(int stage, double share, TaskId after, int part, int parts) {
  const StagePlan& sp = plan_.stages[static_cast<std::size_t>(stage)];
  TaskId last = kNone;
  for (const bool expert : {false, true}) {
    const double bytes = (expert ? sp.expert_param_gather_bytes : sp.param_gather_bytes) * share;
    if (bytes <= 0) continue;
    const Scope scope = expert ? Scope::kExpertDp : Scope::kDp;
    const int owners = expert ? sp.expert_param_broadcasts : sp.param_broadcasts;
    if (owners <= 0) {
      last = add_stage_task(stage, TaskKind::kCollective, Category::kDp, Stream::kDp, scope, CollectiveKind::kAllGather,
                            expert ? "dp_expert_param_all_gather" : "dp_param_all_gather", bytes);
      if (after != kNone) w_.add_edge(after, last);
      continue;
    }
    // This part's whole broadcasts: the owners split over the parts as evenly as integers allow.
    const int calls = owners * (part + 1) / parts - owners * part / parts;
    const double each = bytes * parts / owners;
    for (int i = 0; i < calls; ++i) {
      last = add_stage_task(stage, TaskKind::kCollective, Category::kDp, Stream::kDp, scope, CollectiveKind::kBroadcast,
                            expert ? "dp_expert_param_broadcast" : "dp_param_broadcast", each);
      if (after != kNone) w_.add_edge(after, last);
    }
  }
  return last;
}

// MoFa(13): DP gradient reduction per bucket (overlapped with the backward, MoFa(24)) and the update
// (1/d of it with the distributed optimizer, MoFa(26)).
void Generator::emit_dp_and_optimizer(int stage, const StageEnd& end) {
  const StagePlan& sp = plan_.stages[static_cast<std::size_t>(stage)];
  // InternEvo's broadcast sync all-reduces the gradients even with its sharded optimizer.
  const CollectiveKind grad_coll = f_.distributed_optimizer && !model::zero_broadcast_sync(f_)
                                       ? CollectiveKind::kReduceScatter
                                       : CollectiveKind::kAllReduce;
  const TaskId last = end.last_compute;
  std::vector<TaskId> grad_tasks;    // each bucket's last reduction (its replica all-reduce under HSDP)
  std::vector<TaskId> issued_tasks;  // each bucket's first reduction
  std::vector<double> grad_bytes;
  for (const bool expert : {false, true}) {
    for (Bucket& b : buckets(stage, expert)) {
      const TaskId t = add_stage_task(stage, TaskKind::kCollective, Category::kDp, Stream::kDp,
                                      expert ? Scope::kExpertDp : Scope::kDp, grad_coll,
                                      expert ? "dp_expert_grad_reduce" : "dp_grad_reduce", b.bytes);
      if (f_.dp_overlap.enabled) {
        for (TaskId r : b.ready) w_.add_edge(r, t);
      }
      if ((!f_.dp_overlap.enabled || b.ready.empty()) && last != kNone) w_.add_edge(last, t);
      // HSDP: the bucket's reduced shard all-reduced across the shard group's replicas
      // (Megatron's inter-instance all-reduce, issued after the bucket's reduce-scatter).
      const double replica_share = expert ? sp.expert_replica_share : sp.dense_replica_share;
      TaskId done = t;
      if (replica_share > 0) {
        done = add_stage_task(stage, TaskKind::kCollective, Category::kDp, Stream::kDp,
                              expert ? Scope::kExpertDpReplica : Scope::kDpReplica, CollectiveKind::kAllReduce,
                              expert ? "dp_expert_grad_replica_all_reduce" : "dp_grad_replica_all_reduce",
                              b.bytes * replica_share);
        w_.add_edge(t, done);
      }
      issued_tasks.push_back(t);
      grad_tasks.push_back(done);
      grad_bytes.push_back(b.bytes);
    }
  }
  // Without DP overlap the reduction is issued after the pipeline schedule returns, i.e. after
  // its last blocking send; with overlap the bucket hooks fire during the backward.
  if (!f_.dp_overlap.enabled) {
    for (TaskId b : end.blocking) {
      for (TaskId g : issued_tasks) w_.add_edge(b, g);
    }
  }
  // The update itself waits for the schedule to return either way (its blocking sends).
  double total_grad = 0;
  for (double b : grad_bytes) total_grad += b;
  const bool late_gather = f_.distributed_optimizer && !f_.dp_overlap.enabled &&
                           (sp.param_gather_bytes > 0 || sp.expert_param_gather_bytes > 0);
  if (f_.optimizer_placement == model::OptimizerPlacement::kGpu) {
    const TaskId upd = add_stage_task(stage, TaskKind::kCompute, Category::kOptimizer, Stream::kCompute,
                                      Scope::kRank, std::nullopt, "optimizer_update", sp.optimizer_gpu_seconds);
    for (TaskId g : grad_tasks) w_.add_edge(g, upd);
    for (TaskId b : end.blocking) w_.add_edge(b, upd);
    if (late_gather) emit_param_gathers(stage, 1.0, upd);
    return;
  }
  // CPU optimizer (MoFa(27) MoFa(28)): per bucket D2H of its gradients, CPU update, H2D of its parameters.
  if (grad_tasks.empty()) {
    grad_tasks.push_back(last);
    grad_bytes.push_back(1);
    total_grad = 1;
  }
  for (std::size_t i = 0; i < grad_tasks.size(); ++i) {
    const double share = grad_bytes[i] / total_grad;
    const TaskId d2h = add_stage_task(stage, TaskKind::kCopy, Category::kOptimizer, Stream::kD2H, Scope::kRank,
                                      std::nullopt, "optimizer_grad_d2h", sp.grad_d2h_bytes * share);
    if (grad_tasks[i] != kNone) w_.add_edge(grad_tasks[i], d2h);
    for (TaskId b : end.blocking) w_.add_edge(b, d2h);
    const TaskId upd = add_stage_task(stage, TaskKind::kHost, Category::kOptimizer, Stream::kHost, Scope::kRank,
                                      std::nullopt, "optimizer_cpu_update", sp.optimizer_cpu_seconds * share);
    w_.add_edge(d2h, upd);
    const TaskId h2d = add_stage_task(stage, TaskKind::kCopy, Category::kOptimizer, Stream::kH2D, Scope::kRank,
                                      std::nullopt, "optimizer_param_h2d", sp.param_h2d_bytes * share);
    w_.add_edge(upd, h2d);
    if (late_gather) emit_param_gathers(stage, share, h2d);
  }
}

}  // namespace mofasim::executor::detail
