// Replay of a Workload on the fluid engine: instance bookkeeping, resources, collective plans.
#include "sim/executor/replay.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/engine/event_queue.h"
#include "sim/engine/fluid_model.h"
#include "sim/executor/instance_times.h"
#include "sim/executor/replay_background_flows.h"
#include "sim/units/check.h"
#include "topology/comm_group.h"

namespace mofasim::executor {
namespace {

constexpr int kCollectiveKinds = 8;  // AR, AG, RS, A2A, CP ring step, A2A scale-out and scale-up hops, broadcast

struct PlanPhase {
  Duration latency{};
  std::vector<sim::ResourceUse> uses;
};
struct CachedPlan {
  std::vector<PlanPhase> phases;
  topology::ProtocolOptions protocols{};  // NCCL protocol options of a single-phase plan (collective.h)
  double seconds_per_byte = 0;
  topology::PipelineFill fill{};  // a broadcast's pipeline fill (collective.h), on its single phase
};

// The kind of a group task (only collective and p2p tasks have one; a CP block exchange is a
// kRingStep).
CollectiveKind group_kind_of(std::optional<CollectiveKind> c) {
  MOFASIM_CHECK(c.has_value(), "collective task without a collective kind");
  return *c;
}

int kind_index(CollectiveKind c) {
  switch (c) {
    case CollectiveKind::kAllReduce: return 0;
    case CollectiveKind::kAllGather: return 1;
    case CollectiveKind::kReduceScatter: return 2;
    case CollectiveKind::kAllToAll: return 3;
    case CollectiveKind::kRingStep: return 4;
    case CollectiveKind::kAllToAllScaleOut: return 5;
    case CollectiveKind::kAllToAllScaleUp: return 6;
    case CollectiveKind::kBroadcast: return 7;
    default: break;
  }
  MOFASIM_UNREACHABLE("no group plan for this collective kind");
}

class Replayer {
 public:
  explicit Replayer(const ReplayInput& in)
      : w_(*in.workload), topo_(*in.topology), hw_(*in.hardware),
        perturb_(in.perturbations),
        out_(InstanceMap(*in.placement, in.workload->stages(), in.fidelity, in.extra_replicas)), map_(out_.map),
        queue_(sim::EventQueueOptions{.shuffle_ties_seed = in.shuffle_ties_seed}), fluid_(queue_),
        progress_(in.progress), watched_links_(in.watched_links),
        interference_alpha_(in.comm_interference_alpha), background_(in.background),
        world_(in.placement->world_size()), hardware_class_(in.hardware_class),
        class_work_(in.class_work), class_hardware_(in.class_hardware) {}

  ReplayOutput run() {
    build_instances();
    build_resources();
    init_in_degrees();
    if (background_ != nullptr) background_flows_.start(*background_, topo_, map_, world_, link_res_, fluid_);
    for (TaskId t = 0; t < w_.size(); ++t) {
      for (std::uint32_t i = 0; i < out_.instances(t); ++i) {
        if (remaining_[out_.base[t] + i] == 0) start(t, i);
      }
    }
    queue_.run();
    check_finished();
    if (progress_) progress_(static_cast<std::int64_t>(finished_), static_cast<std::int64_t>(out_.end_ns.size()));
    out_.events = queue_.processed();
    out_.activities = fluid_.completed();
    collect_link_loads();
    if (background_ != nullptr) out_.background = background_flows_.outcome();
    return std::move(out_);
  }

 private:
  // ------------------------------------------------------------------ setup
  void collect_link_loads() {
    if (watched_links_ == nullptr) return;
    const int gpus_per_node = topo_.spec().gpus_per_node;
    for (const std::uint32_t l : *watched_links_) {
      const topology::LinkResource& link = topo_.links()[l];
      const bool nvlink = link.kind == topology::LinkKind::kNvlinkTx || link.kind == topology::LinkKind::kNvlinkRx;
      const sim::FluidModel::LoadHistory& h = fluid_.load_history(link_res_[l]);
      out_.link_loads.push_back(
          {.link = link, .node = nvlink ? link.owner / gpus_per_node : link.owner, .t_ns = h.t_ns, .bytes_per_s = h.load});
    }
  }

  void build_instances() {
    out_.base.resize(w_.size() + 1);
    std::uint64_t n = 0;
    for (TaskId t = 0; t < w_.size(); ++t) {
      out_.base[t] = n;
      n += map_.instances(w_.scope(t), w_.stage(t));
    }
    out_.base[w_.size()] = n;
    remaining_ = ZeroedArray<std::uint32_t>(n);
    out_.end_ns = ZeroedArray<std::int64_t>(n);
    out_.peak_bytes.assign(map_.slots(), 0);
    live_bytes_.assign(map_.slots(), 0);
  }

  void build_resources() {
    const auto links = topo_.links();
    link_res_.reserve(links.size());
    for (std::size_t i = 0; i < links.size(); ++i) {
      const topology::LinkResource& l = links[i];
      link_res_.push_back(fluid_.add_resource(
          {.name = std::string(topology::link_kind_name(l.kind)) + ":" + std::to_string(l.owner) + "/" +
                   std::to_string(l.rail),
           // A level the cluster does not have (one node: no NIC spec) has capacity 0; no plan
           // crosses it (TopologySpec::validate requires the levels that exist).
           .capacity = l.capacity.bytes_per_second > 0 ? l.capacity.bytes_per_second * link_fraction(i) : 1e30}));
    }
    if (watched_links_ != nullptr) {
      for (const std::uint32_t l : *watched_links_) {
        if (l >= links.size()) throw std::invalid_argument("replay: watched link " + std::to_string(l) + " does not exist");
        fluid_.watch_load(link_res_[l]);
      }
    }
    const std::uint32_t slots = map_.slots();
    compute_.resize(slots);
    d2h_.resize(slots);
    h2d_.resize(slots);
    host_.resize(slots);
    domain_.resize(slots);
    slot_class_.assign(slots, 0);
    for (int s = 0; s < map_.stages(); ++s) {
      for (int g = 0; g < map_.replicas(); ++g) {
        const std::uint32_t slot = map_.slot(s, g);
        const std::string rank = std::to_string(map_.rank(s, g));
        // Heterogeneous GPUs: the rank's own copy engines (its class's hardware).
        const int cls = hardware_class_.empty() ? 0 : hardware_class_[static_cast<std::size_t>(map_.rank(s, g))];
        MOFASIM_CHECK(cls == 0 || (class_work_ != nullptr && static_cast<std::size_t>(cls) <= class_work_->size() &&
                                   static_cast<std::size_t>(cls) <= class_hardware_.size()),
                      "replay: a hardware class without its work or hardware");
        slot_class_[slot] = cls;
        const model::HardwareSpec& hw = cls == 0 ? hw_ : class_hardware_[static_cast<std::size_t>(cls - 1)];
        const double d2h_bw = hw.d2h_bandwidth > 0 ? hw.d2h_bandwidth : 1e30;
        const double h2d_bw = hw.h2d_bandwidth > 0 ? hw.h2d_bandwidth : 1e30;
        compute_[slot] = fluid_.add_resource({.name = "gpu" + rank + ".compute",
                                              .capacity = 1.0 / compute_factor(map_.rank(s, g))});
        d2h_[slot] = fluid_.add_resource({.name = "gpu" + rank + ".d2h", .capacity = d2h_bw});
        h2d_[slot] = fluid_.add_resource({.name = "gpu" + rank + ".h2d", .capacity = h2d_bw});
        host_[slot] = fluid_.add_resource({.name = "gpu" + rank + ".host", .capacity = 1.0});
        domain_[slot] = fluid_.add_domain("gpu" + rank);
      }
    }
    group_plan_begin_.assign(static_cast<std::size_t>(map_.stages()) * kScopeCount + 1, 0);
    std::size_t total = 0;
    for (int s = 0; s < map_.stages(); ++s) {
      for (int sc = 0; sc < kScopeCount; ++sc) {
        group_plan_begin_[static_cast<std::size_t>(s) * kScopeCount + sc] = total;
        total += static_cast<std::size_t>(map_.instances(static_cast<Scope>(sc), s)) * kCollectiveKinds;
      }
    }
    group_plan_.assign(total, -1);
    p2p_plan_.assign(static_cast<std::size_t>(map_.stages()) * map_.stages() * map_.replicas(), -1);
  }

  [[nodiscard]] double compute_factor(int gpu) const { return perturb_ != nullptr ? perturb_->compute(gpu) : 1.0; }
  [[nodiscard]] double link_fraction(std::size_t link) const {
    return perturb_ != nullptr ? perturb_->link(static_cast<std::uint32_t>(link)) : 1.0;
  }

  // Distinct instances of task `u` that the members of instance `vi` of task `v` depend on.
  template <class F>
  void for_each_pred_instance(TaskId u, TaskId v, std::uint32_t vi, F&& f) {
    scratch_.clear();
    for_each_member_pred_instance(w_, map_, u, v, vi, [&](std::uint32_t ui) { scratch_.push_back(ui); });
    // Members are ascending and rank-scope instances are replicas: already sorted and distinct.
    if (w_.scope(u) != Scope::kRank) {
      std::sort(scratch_.begin(), scratch_.end());
      scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
    }
    for (std::uint32_t ui : scratch_) f(ui);
  }

  // Distinct instances of `v` that instance `ui` of `u` feeds.
  template <class F>
  void for_each_succ_instance(TaskId u, std::uint32_t ui, TaskId v, F&& f) {
    const Scope su = w_.scope(u);
    const Scope sv = w_.scope(v);
    if (su == sv && (su == Scope::kRank || w_.stage(u) == w_.stage(v))) {
      f(ui);
      return;
    }
    scratch_.clear();
    for (std::uint32_t g : map_.members(su, w_.stage(u), ui)) {
      scratch_.push_back(map_.inst_of(sv, w_.stage(v), static_cast<int>(g)));
    }
    if (sv != Scope::kRank) {
      std::sort(scratch_.begin(), scratch_.end());
      scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
    }
    for (std::uint32_t vi : scratch_) f(vi);
  }

  void init_in_degrees() {
    const auto from = w_.edge_sources();
    const auto to = w_.edge_targets();
    for (std::size_t e = 0; e < from.size(); ++e) {
      const TaskId u = from[e];
      const TaskId v = to[e];
      for (std::uint32_t vi = 0; vi < out_.instances(v); ++vi) {
        std::uint32_t count = 0;
        for_each_pred_instance(u, v, vi, [&](std::uint32_t) { ++count; });
        remaining_[out_.base[v] + vi] += count;
      }
    }
  }

  // ------------------------------------------------------------------ plans
  std::int32_t group_plan(TaskId t, std::uint32_t inst) {
    const Scope scope = w_.scope(t);
    const int stage = w_.stage(t);
    const CollectiveKind kind = group_kind_of(w_.collective(t));
    const std::size_t idx = group_plan_begin_[static_cast<std::size_t>(stage) * kScopeCount + static_cast<int>(scope)] +
                            static_cast<std::size_t>(inst) * kCollectiveKinds + kind_index(kind);
    if (group_plan_[idx] < 0) {
      const auto ranks = map_.group_ranks(scope, stage, inst);
      const topology::CommGroup group(topo_, ranks);
      group_plan_[idx] = add_plan(group.plan(kind, topology::default_algorithm(kind)));
    }
    return group_plan_[idx];
  }

  std::int32_t p2p_plan(TaskId t, std::uint32_t replica) {
    const int from = w_.stage(t);
    const int to = w_.peer_stage(t);
    const std::size_t idx =
        (static_cast<std::size_t>(from) * map_.stages() + static_cast<std::size_t>(to)) * map_.replicas() + replica;
    if (p2p_plan_[idx] < 0) {
      const int gpus[2] = {map_.rank(from, static_cast<int>(replica)), map_.rank(to, static_cast<int>(replica))};
      const topology::CommGroup pair(topo_, gpus);
      p2p_plan_[idx] = add_plan(pair.plan(topology::CollectiveKind::kSendRecv, topology::CollectiveAlgorithm::kDirect));
    }
    return p2p_plan_[idx];
  }

  std::int32_t add_plan(const topology::CollectivePlan& plan) {
    CachedPlan c;
    for (const topology::CommPhase& ph : plan.phases) {
      PlanPhase p;
      p.latency = from_seconds(ph.latency_seconds);
      for (const topology::LinkShare& sh : ph.shares) {
        if (sh.bytes_per_byte > 0) p.uses.push_back({.resource = link_res_[topology::index_of(sh.link)], .weight = sh.bytes_per_byte});
      }
      if (!p.uses.empty() || p.latency.count() > 0) c.phases.push_back(std::move(p));
    }
    if (plan.phases.size() == 1) {
      c.protocols = plan.protocols;
      c.seconds_per_byte = plan.seconds_per_byte;
      c.fill = plan.fill;
    }
    plans_.push_back(std::move(c));
    return static_cast<std::int32_t>(plans_.size() - 1);
  }

  // ------------------------------------------------------------------ execution
  [[nodiscard]] std::uint32_t rank_slot(TaskId t, std::uint32_t inst) const {
    // Rank-scope instance index is the replica; group tasks use their first simulated member.
    const std::uint32_t g = w_.scope(t) == Scope::kRank ? inst : map_.members(w_.scope(t), w_.stage(t), inst)[0];
    return map_.slot(w_.stage(t), static_cast<int>(g));
  }

  void start(TaskId t, std::uint32_t inst) {
    const std::uint32_t slot = rank_slot(t, inst);
    if (w_.alloc_bytes(t) > 0) {
      live_bytes_[slot] += w_.alloc_bytes(t);
      out_.peak_bytes[slot] = std::max(out_.peak_bytes[slot], live_bytes_[slot]);
    }
    const int cls = slot_class_[slot];
    const bool priced_per_class = cls > 0 && (w_.kind(t) == TaskKind::kCompute || w_.kind(t) == TaskKind::kHost);
    const double work = priced_per_class ? (*class_work_)[static_cast<std::size_t>(cls - 1)][t] : w_.work(t);
    sim::Action done = [this, t, inst] { finish(t, inst); };
    switch (w_.kind(t)) {
      case TaskKind::kCompute:
        launch(work, compute_[slot], sim::ActivityKind::kCompute, slot, t, done);
        return;
      case TaskKind::kHost:
        launch(work, host_[slot], sim::ActivityKind::kCompute, kNone, t, done);
        return;
      case TaskKind::kCopy:
        launch(work, w_.stream(t) == Stream::kD2H ? d2h_[slot] : h2d_[slot], sim::ActivityKind::kCommunication, slot, t,
               done);
        return;
      case TaskKind::kCollective:
        start_phase(t, inst, 0);
        return;
      case TaskKind::kP2p:
        start_phase(t, inst, 0);
        return;
    }
  }

  void launch(double work, sim::ResourceId res, sim::ActivityKind kind, std::uint32_t slot, TaskId t, sim::Action done) {
    if (work <= 0) {
      queue_.schedule_in(Duration{0}, done);
      return;
    }
    const sim::ResourceUse use{.resource = res, .weight = 1.0};
    sim::ActivitySpec spec{.work = work, .uses = {&use, 1}, .kind = kind,
                           .coefficients = {.alpha = w_.alpha(t), .beta = w_.beta(t)}};
    if (slot != kNone) spec.domain = domain_[slot];
    fluid_.start(spec, done);
  }

  // Overlap interference hook: a communication kernel slows the compute it overlaps by at least
  // the hardware's interference factor.
  [[nodiscard]] double comm_alpha(TaskId t) const { return std::max<double>(w_.alpha(t), interference_alpha_); }

  [[nodiscard]] const CachedPlan& plan_of(TaskId t, std::uint32_t inst) {
    return plans_[static_cast<std::size_t>(w_.kind(t) == TaskKind::kP2p ? p2p_plan(t, inst) : group_plan(t, inst))];
  }

  void start_phase(TaskId t, std::uint32_t inst, std::uint8_t phase) {
    const CachedPlan& plan = plan_of(t, inst);
    sim::Action done = [this, t, inst, phase] { on_phase_done(t, inst, phase); };
    if (phase >= plan.phases.size()) {
      queue_.schedule_in(Duration{0}, done);
      return;
    }
    const PlanPhase& ph = plan.phases[phase];
    double bytes = w_.work(t);
    Duration latency = ph.latency;
    // The NCCL protocol for this message size: its latency, and its bytes per payload byte, exactly
    // as CommGroup::cost charges them (both step models price collectives through topology/).
    const int option = plan.protocols.cheapest(bytes * plan.seconds_per_byte);
    if (option >= 0) {
      const topology::ProtocolOption& o = plan.protocols.items[static_cast<std::size_t>(option)];
      latency = from_seconds(o.latency_seconds);
      bytes *= o.byte_factor;
    }
    latency += from_seconds(plan.fill.seconds(w_.work(t)));
    if (ph.uses.empty() || bytes <= 0) {
      sim::ActivitySpec spec{.work = 0, .latency = latency};
      fluid_.start(spec, done);
      return;
    }
    sim::ActivitySpec spec{.work = bytes, .uses = ph.uses, .kind = sim::ActivityKind::kCommunication,
                           .domain = domain_[rank_slot(t, inst)],
                           .coefficients = {.alpha = comm_alpha(t), .beta = w_.beta(t)}, .latency = latency};
    const std::uint32_t markers = start_member_markers(t, inst, latency);
    if (markers == kNone) {
      fluid_.start(spec, done);
      return;
    }
    fluid_.start(spec, [this, t, inst, phase, markers] {
      end_member_markers(markers);
      on_phase_done(t, inst, phase);
    });
  }

  // A collective runs a kernel on every member GPU, so it slows the compute of every simulated
  // member, not only the member whose domain carries its bytes (that one also decides its beta).
  // Each other simulated member gets a marker: the collective's alpha in its domain, as a
  // FluidModel interference (counted as a running communication activity there, with no work or
  // end of its own), ended when the phase's bytes are done. Without it a member outside the
  // carrying domain computed unslowed beside the collective, so a slow GPU whose replica is not the
  // first member of its DP groups could make the step shorter (it delayed the DP collectives away
  // from the first member's compute).
  // Returns the marker set, or kNone when there is none (one simulated member, or alpha 1).
  std::uint32_t start_member_markers(TaskId t, std::uint32_t inst, Duration latency) {
    if (w_.kind(t) != TaskKind::kCollective || w_.scope(t) == Scope::kRank) return kNone;
    const double alpha = comm_alpha(t);
    const auto members = map_.members(w_.scope(t), w_.stage(t), inst);
    if (alpha <= 1.0 || members.size() < 2) return kNone;
    std::uint32_t set = kNone;
    if (!free_marker_sets_.empty()) {
      set = free_marker_sets_.back();
      free_marker_sets_.pop_back();
    } else {
      set = static_cast<std::uint32_t>(marker_sets_.size());
      marker_sets_.emplace_back();
    }
    std::vector<sim::InterferenceId>& ids = marker_sets_[set];
    for (std::size_t i = 1; i < members.size(); ++i) {
      const std::uint32_t slot = map_.slot(w_.stage(t), static_cast<int>(members[i]));
      ids.push_back(fluid_.start_interference(domain_[slot], alpha, latency));
    }
    return set;
  }

  void end_member_markers(std::uint32_t set) {
    for (const sim::InterferenceId id : marker_sets_[set]) {
      MOFASIM_CHECK(fluid_.end_interference(id), "an interference marker ended before its collective");
    }
    marker_sets_[set].clear();
    free_marker_sets_.push_back(set);
  }

  // A collective or p2p instance runs its plan's phases one after the other (the phase travels
  // in the callback, so no per-instance phase table is kept).
  void on_phase_done(TaskId t, std::uint32_t inst, std::uint8_t phase) {
    const std::uint8_t next = static_cast<std::uint8_t>(phase + 1);
    if (next < plan_of(t, inst).phases.size()) {
      start_phase(t, inst, next);
      return;
    }
    finish(t, inst);
  }

  void finish(TaskId t, std::uint32_t inst) {
    const std::uint64_t gi = out_.base[t] + inst;
    const std::int64_t now = queue_.now().time_since_epoch().count();
    out_.end_ns[gi] = now;
    out_.step_ns = std::max(out_.step_ns, now);
    ++finished_;
    if (background_ != nullptr && finished_ == out_.end_ns.size()) background_flows_.note_step_end(fluid_);
    if (progress_ && finished_ % kProgressEvery == 0) {
      progress_(static_cast<std::int64_t>(finished_), static_cast<std::int64_t>(out_.end_ns.size()));
    }
    if (w_.free_bytes(t) > 0) live_bytes_[rank_slot(t, inst)] -= w_.free_bytes(t);
    for (TaskId v : w_.successors(t)) {
      for_each_succ_instance(t, inst, v, [&](std::uint32_t vi) { ready_.push_back({v, vi}); });
      for (auto [vt, vi] : ready_) {
        std::uint32_t& r = remaining_[out_.base[vt] + vi];
        MOFASIM_CHECK(r > 0, "instance released twice: " + w_.describe(vt));
        if (--r == 0) start(vt, vi);
      }
      ready_.clear();
    }
  }

  void check_finished() const {
    if (finished_ == out_.end_ns.size()) return;
    std::string waiting;
    int listed = 0;
    for (TaskId t = 0; t < w_.size() && listed < 8; ++t) {
      for (std::uint32_t i = 0; i < out_.instances(t); ++i) {
        if (remaining_[out_.base[t] + i] == 0) continue;  // started (it may not have finished)
        waiting += (listed == 0 ? "" : "; ") + w_.describe(t);
        ++listed;
        break;
      }
    }
    throw std::runtime_error("step DAG cannot finish: " + std::to_string(out_.end_ns.size() - finished_) +
                             " task instances never ran, waiting tasks include: " + waiting);
  }

  const Workload& w_;
  const topology::Topology& topo_;
  const model::HardwareSpec& hw_;
  const perturb::ResolvedPerturbations* perturb_;
  ReplayOutput out_;
  const InstanceMap& map_;
  sim::EventQueue queue_;
  sim::FluidModel fluid_;

  std::vector<sim::ResourceId> link_res_;
  std::vector<sim::ResourceId> compute_, d2h_, h2d_, host_;
  std::vector<sim::DomainId> domain_;
  std::vector<std::size_t> group_plan_begin_;
  std::vector<std::int32_t> group_plan_;
  std::vector<std::int32_t> p2p_plan_;
  std::vector<CachedPlan> plans_;

  ZeroedArray<std::uint32_t> remaining_;  // unfinished predecessor instances, by global instance
  std::vector<double> live_bytes_;
  std::vector<std::uint32_t> scratch_;
  struct Ready {
    TaskId task;
    std::uint32_t inst;
  };
  std::vector<Ready> ready_;
  std::uint64_t finished_ = 0;
  std::function<void(std::int64_t, std::int64_t)> progress_;
  const std::vector<std::uint32_t>* watched_links_ = nullptr;
  double interference_alpha_ = 1.0;
  const BackgroundEgress* background_ = nullptr;
  int world_ = 0;
  BackgroundFlows background_flows_;
  std::span<const int> hardware_class_;
  const std::vector<std::vector<double>>* class_work_ = nullptr;
  std::span<const model::HardwareSpec> class_hardware_;
  std::vector<int> slot_class_;  // hardware class by rank slot (0: the replay's hardware)
  // Interference markers of the running collective phases (start_member_markers), reused sets.
  std::vector<std::vector<sim::InterferenceId>> marker_sets_;
  std::vector<std::uint32_t> free_marker_sets_;
};

}  // namespace

ReplayOutput replay(const ReplayInput& input) {
  if (input.workload == nullptr || input.topology == nullptr || input.placement == nullptr ||
      input.hardware == nullptr) {
    throw std::invalid_argument("replay: workload, topology, placement and hardware are required");
  }
  MOFASIM_CHECK(input.workload->finalized(), "replay of a workload that was not finalized");
  if (input.placement->world_size() > input.topology->gpus()) {
    throw std::invalid_argument("replay: placement needs " + std::to_string(input.placement->world_size()) +
                                " GPUs, topology has " + std::to_string(input.topology->gpus()));
  }
  Replayer r(input);
  return r.run();
}

}  // namespace mofasim::executor
