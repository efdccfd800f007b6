// simulate_step: the pipeline generate -> check -> replay -> analyse, and the result's numbers.
#include "sim/executor/simulate_step.h"

#include <algorithm>
#include <stdexcept>

#include "model/compute_time.h"
#include "model/interference.h"
#include "model/memory.h"
#include "schedules/factory.h"
#include "schedules/task_graph.h"
#include "sim/executor/analyze.h"
#include "sim/executor/hardware_classes.h"
#include "sim/executor/perturbed_folding.h"
#include "sim/executor/plan_from_model.h"
#include "sim/executor/replay.h"
#include "sim/executor/timeline_writer.h"
#include "sim/executor/perfetto_links.h"
#include "sim/executor/trace.h"
#include "sim/executor/trace_labels.h"
#include "topology/placement.h"
#include "topology/rank_order.h"
#include "topology/topology.h"

namespace mofasim::executor {

void check_acyclic(const Workload& w) {
  std::vector<schedules::TaskEdge> edges(w.edges());
  const auto from = w.edge_sources();
  const auto to = w.edge_targets();
  for (std::size_t e = 0; e < edges.size(); ++e) edges[e] = {.from = from[e], .to = to[e]};
  const schedules::TaskGraph graph(w.size(), edges);
  try {
    (void)graph.topological_order();
  } catch (const schedules::TaskGraphCycle& c) {
    std::string names;
    for (schedules::TaskId t : c.cycle()) names += (names.empty() ? "" : " -> ") + w.describe(t);
    throw std::runtime_error("step DAG has a cycle (" + std::to_string(c.waiting_count()) +
                             " tasks can never start): " + names);
  }
}

// Seconds of the critical path a perturbation can have stretched: compute on a slow GPU, and
// collectives / p2p transfers that use a degraded link: a group with a member whose NVLink is
// degraded and another member on its node, or a member whose NIC (or spine port) is degraded and
// another member on another node.
double perturbed_path_seconds(const Workload& w, const InstanceMap& map, const CriticalPath& cp,
                              const perturb::ResolvedPerturbations& p, int gpus_per_node) {
  auto in = [](const std::vector<int>& set, int gpu) { return std::binary_search(set.begin(), set.end(), gpu); };
  auto crosses = [&](std::span<const int> ranks) {
    for (int a : ranks) {
      const bool nv = in(p.nvlink_gpus, a);
      const bool out = in(p.scaleout_gpus, a);
      if (!nv && !out) continue;
      for (int b : ranks) {
        if (b == a) continue;
        const bool same_node = a / gpus_per_node == b / gpus_per_node;
        if ((nv && same_node) || (out && !same_node)) return true;
      }
    }
    return false;
  };
  double seconds = 0;
  for (const CriticalStep& step : cp.steps) {
    const TaskId t = step.task;
    bool hit = false;
    if (w.kind(t) == TaskKind::kCompute) {
      hit = in(p.slow_gpus, map.rank(w.stage(t), static_cast<int>(step.inst)));
    } else if (w.kind(t) == TaskKind::kP2p) {
      const int replica = static_cast<int>(step.inst);
      const int pair[2] = {map.rank(w.stage(t), replica), map.rank(w.peer_stage(t), replica)};
      hit = crosses(pair);
    } else if (w.kind(t) == TaskKind::kCollective) {
      hit = crosses(map.group_ranks(w.scope(t), w.stage(t), step.inst));
    }
    if (hit) seconds += static_cast<double>(step.end_ns - step.start_ns) * 1e-9;
  }
  return seconds;
}

std::string folding_refusal(const topology::TopologySpec& t) {
  if (t.nodes() > 1 && t.nics() < t.gpus_per_node) {
    return "folded refused: " + std::to_string(t.gpus_per_node / t.nics()) +
           " GPUs share each NIC, so other replicas' traffic would be missing";
  }
  return "";
}

StepResult simulate_plan(const PlanSimulation& in, const SimulateOptions& options) {
  if (in.plan == nullptr || in.schedule == nullptr) {
    throw std::invalid_argument("simulate_plan: plan and schedule are required");
  }
  const GenerateInput generate_in{.schedule = in.schedule, .plan = in.plan, .parallel = in.parallel,
                                  .features = in.features, .load_imbalance = in.load_imbalance,
                                  .position_layers = in.position_layers};
  const Workload w = generate_workload(generate_in);
  check_acyclic(w);
  // mu_b (MoFa(18)) is a feature of the run: it scales every network link the replay prices.
  topology::TopologySpec topo_spec = in.topology;
  topo_spec.bandwidth_scale *= in.features.bandwidth_scale;
  const topology::Topology topo(topo_spec);
  const topology::Placement placement(
      {.tp = in.parallel.tp, .cp = in.parallel.cp, .ep = in.parallel.ep, .dp = in.parallel.dp, .pp = in.parallel.pp,
       .etp = in.fold_experts ? in.parallel.etp : 0,
       .dist_opt_instances = in.features.dist_opt_instances},
      topology::RankOrder::parse(in.rank_order));
  if (placement.world_size() != topo.gpus()) {
    throw std::invalid_argument("parallelism: tp*cp*pp*dp = " + std::to_string(placement.world_size()) +
                                " but topology.gpus = " + std::to_string(topo.gpus()));
  }
  // A trace filter naming stages or ranks the step has not fails before the replay, not after.
  const TraceFilter no_filter;
  const TraceFilter& trace_filter = options.trace_filter != nullptr ? *options.trace_filter : no_filter;
  std::vector<std::uint32_t> watched_links;  // the Perfetto trace's link counters (perfetto_links.h)
  if (options.trace_path) {
    const auto ranks = placement.members(topology::GroupKind::kPp, 0);
    const std::vector<int> stage_ranks(ranks.begin(), ranks.end());
    std::vector<int> traced_ranks;
    for (const int s : traced_stages(trace_filter, stage_ranks)) traced_ranks.push_back(stage_ranks[static_cast<std::size_t>(s)]);
    if (!options.trace_path->ends_with(".json")) watched_links = traced_links(topo, traced_ranks, trace_filter.link_kinds);
  }
  in.perturbations.validate(in.topology);
  perturb::validate(in.node_hardware, in.topology);
  const HardwareClasses classes =
      price_hardware_classes(in.node_hardware, in.class_plans, generate_in, w, in.topology);
  perturb::ResolvedPerturbations perturbed = perturb::resolve(in.perturbations, topo);
  scale_node_links(in.node_hardware, topo, in.topology.intra_node.bandwidth, perturbed);
  std::string fold_refusal = options.fidelity == Fidelity::kFolded ? folding_refusal(topo_spec) : "";
  std::vector<int> extra_replicas;
  if (options.fidelity == Fidelity::kFolded && fold_refusal.empty()) {
    fold_refusal = perturbed_folding(w, placement, perturbed, classes.class_by_gpu, extra_replicas);
  }
  const Fidelity fidelity = fold_refusal.empty() ? options.fidelity : Fidelity::kFull;
  const ReplayOutput r = replay({.workload = &w, .topology = &topo, .placement = &placement,
                                 .hardware = &in.hardware, .fidelity = fidelity,
                                 .comm_interference_alpha =
                                     model::overlap_interference_alpha(in.hardware, in.features.overlap_interference),
                                 .perturbations = &perturbed, .hardware_class = classes.class_by_gpu,
                                 .class_work = &classes.work, .class_hardware = classes.hardware,
                                 .extra_replicas = extra_replicas,
                                 .shuffle_ties_seed = options.shuffle_ties_seed, .progress = options.progress,
                                 .watched_links = &watched_links, .background = options.background});

  StepResult res;
  res.fidelity = fidelity;
  res.fidelity_note = fold_refusal;
  res.gpus = placement.world_size();
  res.simulated_ranks = static_cast<int>(r.map.slots());
  res.step_time_s = static_cast<double>(r.step_ns) * 1e-9;
  res.events = r.events;
  res.tasks = w.size();
  res.instances = r.end_ns.size();
  if (options.background != nullptr) res.background = r.background;
  const InstanceTimes times(w, r);
  double least_idle = -1;
  for (int s = 0; s < w.stages(); ++s) {
    const Breakdown b = stage_breakdown(times, s);
    if (least_idle < 0 || b.pp_bubble < least_idle) {
      least_idle = b.pp_bubble;
      res.breakdown = b;
      res.critical_stage = s;
    }
  }
  const CriticalPath cp = critical_path(times);
  if (!perturbed.empty()) res.critical_path_perturbed_s = perturbed_path_seconds(w, r.map, cp, perturbed, topo.gpus_per_node());
  if (!classes.empty()) res.hardware = hardware_use(classes, in.hardware, w, r.map, cp);
  if (options.trace_path) write_trace(*options.trace_path, w, r, cp, trace_filter);
  if (options.critical_path_tasks) {
    res.critical_path_tasks.reserve(cp.steps.size());
    for (const CriticalStep& step : cp.steps) {
      res.critical_path_tasks.push_back({.name = span_name(w, step.task),
                                         .stage = w.stage(step.task),
                                         .rank = instance_rank(w, r.map, step.task, step.inst),
                                         .start_s = static_cast<double>(step.start_ns) * 1e-9,
                                         .duration_s = static_cast<double>(step.end_ns - step.start_ns) * 1e-9});
    }
  }
  double path_total = 0;
  for (double v : cp.seconds) path_total += v;
  if (path_total > 0) {
    for (int c = 0; c < kCategoryCount; ++c) {
      res.critical_path_share[static_cast<std::size_t>(c)] = cp.seconds[static_cast<std::size_t>(c)] / path_total;
    }
  }
  const int gpus = res.gpus;
  if (res.step_time_s > 0) {
    double peak = 0;
    try {
      peak = model::peak_flops(in.hardware, in.features.compute_dtype);
      // Heterogeneous GPUs: MFU against the job's mean peak (each GPU its own).
      if (!classes.empty()) {
        double sum = 0;
        for (int g = 0; g < gpus; ++g) {
          const int c = classes.of(g);
          sum += model::peak_flops(c == 0 ? in.hardware : classes.hardware[static_cast<std::size_t>(c - 1)],
                                   in.features.compute_dtype);
        }
        peak = sum / gpus;
      }
    } catch (const std::invalid_argument&) {
      peak = 0;  // no peak given (abstract tests): MFU/HFU stay 0
    }
    // MoFa(15); the step time itself (MoFa(14)) is the replay's makespan.
    res.tflops_per_gpu = in.plan->model_flops_per_step / (res.step_time_s * gpus) / 1e12;
    if (peak > 0) {
      res.mfu = in.plan->model_flops_per_step / (res.step_time_s * gpus * peak);
      res.hfu = in.plan->hardware_flops_per_step / (res.step_time_s * gpus * peak);
    }
    res.tokens_per_s = in.plan->tokens_per_step / res.step_time_s;
  }
  for (int s = 0; s < w.stages(); ++s) {
    StageMemory m;
    m.stage = s;
    if (in.schedule->kind() == schedules::ScheduleKind::kDualPipe && w.stages() > 1) {
      m.stages_held = {s};
      if (w.stages() - 1 - s != s) m.stages_held.push_back(w.stages() - 1 - s);
    }
    const StagePlan& sp = in.plan->stages[static_cast<std::size_t>(s)];
    m.static_bytes = sp.static_bytes;
    m.model_activation_bytes = sp.expected_peak_activation_bytes;
    for (int g = 0; g < r.map.replicas(); ++g) {
      m.peak_activation_bytes = std::max(m.peak_activation_bytes, r.peak_bytes[r.map.slot(s, g)]);
    }
    set_device_reserve(in.hardware, m);
    if (!classes.empty()) bind_stage_memory(classes, in.hardware, placement, m);
    res.peak_memory_bytes = std::max(res.peak_memory_bytes, m.peak_bytes);
    res.memory.push_back(m);
  }
  if (options.timeline_path) write_timeline(*options.timeline_path, w, r, res, options.scenario_name);
  return res;
}

PreparedStep prepare_step(const SimulationInput& in) {
  model::ParallelSpec par = in.parallel;
  // The DeepEP dispatch's node copies (model/moe_dispatch.h): the nodes its ETP x EP group spans.
  if (in.model.is_moe() && par.ep_nodes <= 0) {
    par.ep_nodes = topology::nodes_spanned({.tp = par.tp, .cp = par.cp, .ep = par.ep, .dp = par.dp, .pp = par.pp,
                                            .etp = par.etp},
                                           topology::RankOrder::parse(in.rank_order), topology::GroupKind::kExpertTpEp,
                                           in.topology.gpus_per_node);
  }
  if (!model::batch_divides(par.global_batch, par.micro_batch, par.dp)) {
    throw std::invalid_argument("parallelism.global_batch (" + std::to_string(par.global_batch) +
                                ") must be a multiple of micro_batch * dp (" +
                                std::to_string(par.micro_batch * par.dp) + ")");
  }
  // EP overlap pairs steady-state passes of 1F1B / interleaved (MoFa(22)): step_shape says when.
  schedules::Schedule schedule =
      schedules::build_schedule(par.schedule, schedules::step_shape(in.model, par, in.features));
  model::FeatureSpec features = in.features;
  if (features.memfine && features.memfine_chunks == 0) {
    const std::vector<double> inflight = schedules::stage_inflight_microbatches(in.model, par, features);
    const std::vector<model::RankOrder> orders = schedules::rank_orders(schedule, in.model, par, features);
    features.memfine_chunks =
        model::memfine_min_chunks(in.model, in.hardware, par, features, inflight, 64, orders).value_or(64);
  }
  StepPlan plan = plan_from_model({.model = &in.model, .hardware = &in.hardware, .parallel = par, .features = features,
                                   .schedule = &schedule, .topology = &in.topology,
                                   .rank_order = topology::RankOrder::parse(in.rank_order)});
  std::vector<LayerRange> layers = position_layers(in.model, par, schedule);
  return {.schedule = std::move(schedule), .features = features, .plan = std::move(plan),
          .position_layers = std::move(layers)};
}

StepResult simulate_step(const SimulationInput& in, const SimulateOptions& options) {
  const PreparedStep step = prepare_step(in);
  // Heterogeneous GPUs: the rank plan re-priced on each entry's hardware, with the same schedule
  // and features (MemFine's chunk count as resolved for the hardware section), so the tasks match.
  std::vector<StepPlan> class_plans;
  class_plans.reserve(in.node_hardware.size());
  for (const perturb::NodeHardware& e : in.node_hardware) {
    class_plans.push_back(plan_from_model({.model = &in.model, .hardware = &e.hardware, .parallel = in.parallel,
                                           .features = step.features, .schedule = &step.schedule,
                                           .topology = &in.topology,
                                           .rank_order = topology::RankOrder::parse(in.rank_order)}));
  }
  std::vector<const StepPlan*> plan_ptrs;
  for (const StepPlan& p : class_plans) plan_ptrs.push_back(&p);
  return simulate_plan({.plan = &step.plan, .schedule = &step.schedule, .position_layers = step.position_layers,
                        .hardware = in.hardware, .parallel = in.parallel, .features = step.features,
                        .topology = in.topology, .rank_order = in.rank_order,
                        .perturbations = in.perturbations, .node_hardware = in.node_hardware,
                        .class_plans = plan_ptrs, .fold_experts = in.model.is_moe()},
                       options);
}

}  // namespace mofasim::executor
