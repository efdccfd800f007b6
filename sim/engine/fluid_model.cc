// FluidModel implementation: activity bookkeeping, connected-component resolve, wake-ups.
#include "sim/engine/fluid_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/units/check.h"
#include "sim/units/format.h"

namespace mofasim::sim {
namespace {

std::int64_t ns_of(Time t) { return t.time_since_epoch().count(); }

// now + seconds on the nanosecond clock, refusing what does not fit in 2^63 ns (checked, never
// wrapped): an infinite duration from a denormal rate, or a finite one past the clock's end.
std::int64_t completion_ns(std::int64_t now, double seconds) {
  std::int64_t end = 0;
  if (!(seconds < 9.2e9) || __builtin_add_overflow(now, from_seconds(seconds).count(), &end)) {
    throw SimulationOutOfRange(
        "simulated time overflow: an activity would end at t = " +
        format_number("%.3g", static_cast<double>(now) * 1e-9 + seconds) +
        " s, past the clock's range of 2^63 ns (292 years); a rate in the scenario (hardware peak FLOPS or a "
        "link bandwidth) is far too small");
  }
  return end;
}

}  // namespace

FluidModel::FluidModel(EventQueue& queue) : queue_(queue) {}

ResourceId FluidModel::add_resource(ResourceSpec spec) {
  if (!(spec.capacity > 0) || !std::isfinite(spec.capacity)) {
    throw std::invalid_argument("FluidModel::add_resource: resource '" + spec.name + "' capacity " +
                                std::to_string(spec.capacity) + " must be finite and > 0");
  }
  MOFASIM_CHECK(resources_.size() < kInvalidIndex, "too many resources");
  Resource r;
  r.capacity = spec.capacity;
  resources_.push_back(std::move(r));
  resource_names_.push_back(std::move(spec.name));
  return ResourceId{static_cast<std::uint32_t>(resources_.size() - 1)};
}

DomainId FluidModel::add_domain(std::string name) {
  MOFASIM_CHECK(domains_.size() < kInvalidIndex, "too many domains");
  domains_.emplace_back();
  domain_names_.push_back(std::move(name));
  return DomainId{static_cast<std::uint32_t>(domains_.size() - 1)};
}

void FluidModel::watch_load(ResourceId r) {
  if (r.value >= resources_.size()) throw std::invalid_argument("FluidModel::watch_load: unknown resource id");
  Resource& res = resources_[r.value];
  if (res.history != kInvalidIndex) return;
  res.history = static_cast<std::uint32_t>(histories_.size());
  histories_.emplace_back();
  watching_ = true;
}

const FluidModel::LoadHistory& FluidModel::load_history(ResourceId r) const {
  static const LoadHistory kNone;
  if (r.value >= resources_.size() || resources_[r.value].history == kInvalidIndex) return kNone;
  return histories_[resources_[r.value].history];
}

void FluidModel::note_load_change(std::uint32_t slot) {
  for (const Use& u : uses_of(slot)) {
    Resource& r = resources_[u.resource];
    if (r.history == kInvalidIndex || r.load_changed) continue;
    r.load_changed = true;
    changed_loads_.push_back(u.resource);
  }
}

void FluidModel::record_loads() {
  const std::int64_t now = ns_of(queue_.now());
  for (const std::uint32_t id : changed_loads_) {
    Resource& r = resources_[id];
    r.load_changed = false;
    double load = 0;
    for (const Member& m : r.members) load += uses_of(m.slot)[m.use].weight * activities_[m.slot].rate;
    LoadHistory& h = histories_[r.history];
    if (!h.t_ns.empty() && h.t_ns.back() == now) {  // a later change in the same nanosecond wins
      h.t_ns.pop_back();
      h.load.pop_back();
    }
    const double before = h.load.empty() ? 0.0 : h.load.back();
    if (load != before) {
      h.t_ns.push_back(now);
      h.load.push_back(load);
    }
  }
  changed_loads_.clear();
}

void FluidModel::validate(const ActivitySpec& spec) const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("FluidModel::start: " + what); };
  if (std::isinf(spec.work)) {  // a finite amount of work over an underflowed rate of the input
    throw SimulationOutOfRange("simulated work out of range: an activity's work is infinite; a rate in the scenario "
                               "(hardware peak FLOPS or a link bandwidth) is too small for double precision");
  }
  if (!(spec.work >= 0)) fail("work " + std::to_string(spec.work) + " must be finite and >= 0");
  if (spec.latency < Duration::zero()) fail("latency must be >= 0");
  if (spec.rate_bound && (!(*spec.rate_bound > 0) || !std::isfinite(*spec.rate_bound))) {
    fail("rate_bound " + std::to_string(*spec.rate_bound) + " must be finite and > 0");
  }
  for (const ResourceUse& u : spec.uses) {
    if (u.resource.value >= resources_.size()) fail("uses: unknown resource id " + std::to_string(u.resource.value));
    if (!(u.weight > 0) || !std::isfinite(u.weight)) {
      fail("uses: weight " + std::to_string(u.weight) + " on resource '" + resource_names_[u.resource.value] +
           "' must be finite and > 0");
    }
  }
  if (spec.domain && spec.domain->value >= domains_.size()) fail("domain: unknown domain id " + std::to_string(spec.domain->value));
  if (spec.kind == ActivityKind::kCommunication) {
    const ContentionCoefficients& c = spec.coefficients;
    if (!(c.alpha >= 1) || !std::isfinite(c.alpha)) fail("coefficients.alpha " + std::to_string(c.alpha) + " must be finite and >= 1");
    if (!(c.beta >= 1) || !std::isfinite(c.beta)) fail("coefficients.beta " + std::to_string(c.beta) + " must be finite and >= 1");
  }
  if (spec.work > 0 && spec.uses.empty() && !spec.rate_bound) {
    fail("an activity with work > 0 needs at least one resource use or a rate_bound");
  }
}

ActivityId FluidModel::start(const ActivitySpec& spec, Action on_complete) {
  validate(spec);
  std::uint32_t slot = free_head_;
  if (slot != kInvalidIndex) {
    free_head_ = activities_[slot].next_free;
  } else {
    MOFASIM_CHECK(activities_.size() < kInvalidIndex, "too many activities");
    slot = static_cast<std::uint32_t>(activities_.size());
    activities_.emplace_back();
    cold_.emplace_back();
  }
  Activity& a = activities_[slot];
  a.seq = next_seq_++;
  a.kind = spec.kind;
  a.remaining = spec.work;
  a.rate = 0;
  a.bound = spec.rate_bound.value_or(std::numeric_limits<double>::infinity());
  a.coefficients = spec.kind == ActivityKind::kCommunication ? spec.coefficients : ContentionCoefficients{};
  a.solved = false;
  a.domain = spec.domain ? spec.domain->value : kInvalidIndex;
  ActivityCold& cold = cold_[slot];
  a.num_uses = static_cast<std::uint32_t>(spec.uses.size());
  Use* uses = a.inline_uses;
  if (a.num_uses > kInlineUses) {
    cold.more_uses.resize(a.num_uses);
    uses = cold.more_uses.data();
  }
  for (std::uint32_t i = 0; i < a.num_uses; ++i) {
    uses[i] = Use{.resource = spec.uses[i].resource.value, .pos = kInvalidIndex, .weight = spec.uses[i].weight};
  }
  a.on_complete = on_complete;
  const ActivityId id{.slot = slot, .seq = a.seq};
  if (spec.latency > Duration::zero()) {
    a.state = ActivityState::kLatency;
    cold.latency_event = queue_.schedule_in(spec.latency, [this, slot] { activate(slot); });
  } else {
    activate(slot);
  }
  return id;
}

void FluidModel::activate(std::uint32_t slot) {
  Activity& a = activities_[slot];
  const std::int64_t now = ns_of(queue_.now());
  a.last_update_ns = now;
  if (a.remaining == 0) {  // a pure timer (or empty transfer): completes now, touches nothing
    a.state = ActivityState::kTimer;
    a.completion_ns = now;
    completions_.set(slot, now, a.seq);
    reschedule_wake();
    return;
  }
  a.state = ActivityState::kRunning;
  ++running_;
  const std::span<Use> uses = uses_of(slot);
  bool alone = true;
  for (std::uint32_t i = 0; i < uses.size(); ++i) {
    Resource& r = resources_[uses[i].resource];
    uses[i].pos = static_cast<std::uint32_t>(r.members.size());
    r.members.push_back(Member{.slot = slot, .use = i});
    if (r.members.size() > 1) {  // the others' shares change
      alone = false;
      seed_resources_.push_back(uses[i].resource);
    }
  }
  bool domain_changed = false;
  if (a.domain != kInvalidIndex) {
    Domain& d = domains_[a.domain];
    a.domain_pos = static_cast<std::uint32_t>(d.members.size());
    d.members.push_back(slot);
    if (a.kind == ActivityKind::kCompute) {
      ++d.running_compute;
    } else {
      ++d.running_comm;
      d.live_alpha = std::max(d.live_alpha, a.coefficients.alpha);
    }
    domain_changed = !applied_state_current(d);
    if (domain_changed) seed_domains_.push_back(a.domain);
  }
  if (alone && !domain_changed) {
    // Nothing else's rate changes: the activity's share is the level progressive filling would
    // give it alone, and its domain's contention state is the one already applied. Solving it now
    // gives what a resolve at this instant would (it re-derives it identically if later changes at
    // this instant touch it).
    a.share = alone_share(slot);
    retime(slot, now);
    ++rate_updates_;
    if (!changed_loads_.empty()) record_loads();
    reschedule_wake();
    return;
  }
  seed_activities_.push_back(ActivityId{.slot = slot, .seq = a.seq});
  request_resolve();
}

double FluidModel::alone_share(std::uint32_t slot) const {
  double share = activities_[slot].bound;
  for (const Use& u : uses_of(slot)) share = std::min(share, resources_[u.resource].capacity / u.weight);
  return share;
}

bool FluidModel::applied_state_current(const Domain& d) {
  const bool overlap = d.running_compute > 0 && d.running_comm > 0;
  return overlap == d.overlap && (!overlap || d.live_alpha == d.alpha);
}

void FluidModel::retime(std::uint32_t slot, std::int64_t now) {
  Activity& a = activities_[slot];
  const double elapsed = to_seconds(Duration{now - a.last_update_ns});
  a.remaining = std::max(0.0, a.remaining - a.rate * elapsed);
  a.last_update_ns = now;
  double rate = a.share;
  if (a.domain != kInvalidIndex && domains_[a.domain].overlap) {
    rate /= a.kind == ActivityKind::kCompute ? domains_[a.domain].alpha : a.coefficients.beta;  // MoFa §3.3 α, β
  }
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw SimulationOutOfRange("simulated rate out of range: an activity's rate is " + format_number("%.3g", rate) +
                               " work units per second; a rate in the scenario (hardware peak FLOPS or a link "
                               "bandwidth) is too small or too large for double precision");
  }
  a.rate = rate;
  const std::int64_t completion = completion_ns(now, a.remaining / rate);
  if (!a.solved || completion != a.completion_ns) {  // a solved running activity is in the index
    a.completion_ns = completion;
    completions_.set(slot, completion, a.seq);
  }
  a.solved = true;
  if (watching_) note_load_change(slot);
}

void FluidModel::detach(std::uint32_t slot) {
  Activity& a = activities_[slot];
  MOFASIM_CHECK(a.state == ActivityState::kRunning, "detach: activity is not running");
  if (watching_) note_load_change(slot);
  const std::span<const Use> uses = uses_of(slot);
  for (std::uint32_t i = 0; i < uses.size(); ++i) {
    const Use& u = uses[i];
    Resource& r = resources_[u.resource];
    const Member moved = r.members.back();
    r.members.pop_back();
    if (moved.slot != slot || moved.use != i) {  // swap-remove: the last member takes this place
      r.members[u.pos] = moved;
      uses_of(moved.slot)[moved.use].pos = u.pos;
    }
    if (!r.members.empty()) seed_resources_.push_back(u.resource);  // the others' shares change
  }
  if (a.domain != kInvalidIndex) {
    Domain& d = domains_[a.domain];
    const std::uint32_t moved = d.members.back();
    d.members.pop_back();
    if (moved != slot) {
      d.members[a.domain_pos] = moved;
      activities_[moved].domain_pos = a.domain_pos;
    }
    if (a.kind == ActivityKind::kCompute) {
      --d.running_compute;
    } else if (--d.running_comm == 0) {
      d.live_alpha = 1.0;
    } else if (a.coefficients.alpha == d.live_alpha) {  // the maximum may have left
      d.live_alpha = max_alpha(d);
    }
    if (!applied_state_current(d)) seed_domains_.push_back(a.domain);
  }
  completions_.erase(slot);
  --running_;
}

void FluidModel::release(std::uint32_t slot) {
  Activity& a = activities_[slot];
  a.state = ActivityState::kFree;
  a.on_complete = Action{};
  a.next_free = free_head_;
  free_head_ = slot;
}

const FluidModel::Activity* FluidModel::find(ActivityId id) const {
  if (id.slot >= activities_.size()) return nullptr;
  const Activity& a = activities_[id.slot];
  if (a.state == ActivityState::kFree || a.seq != id.seq) return nullptr;
  return &a;
}

bool FluidModel::cancel(ActivityId id) {
  if (find(id) == nullptr) return false;
  Activity& a = activities_[id.slot];
  switch (a.state) {
    case ActivityState::kLatency:
      queue_.cancel(cold_[id.slot].latency_event);
      break;
    case ActivityState::kRunning:
      detach(id.slot);
      request_resolve();
      break;
    case ActivityState::kTimer:
      completions_.erase(id.slot);
      reschedule_wake();
      break;
    case ActivityState::kFree:
      MOFASIM_UNREACHABLE("cancel: free slot passed find()");
  }
  release(id.slot);
  return true;
}

bool FluidModel::active(ActivityId id) const { return find(id) != nullptr; }

double FluidModel::rate(ActivityId id) const {
  const Activity* a = find(id);
  return a != nullptr && a->state == ActivityState::kRunning ? a->rate : 0.0;
}

double FluidModel::remaining(ActivityId id) const {
  const Activity* a = find(id);
  if (a == nullptr || a->state == ActivityState::kTimer) return 0.0;
  if (a->state == ActivityState::kLatency) return a->remaining;
  const double elapsed = to_seconds(Duration{ns_of(queue_.now()) - a->last_update_ns});
  return std::max(0.0, a->remaining - a->rate * elapsed);
}

std::optional<Time> FluidModel::expected_completion(ActivityId id) const {
  const Activity* a = find(id);
  if (a == nullptr || !completions_.contains(id.slot)) return std::nullopt;
  return Time{Duration{a->completion_ns}};
}

bool FluidModel::alone(std::uint32_t slot) const {
  for (const Use& u : uses_of(slot)) {
    if (resources_[u.resource].members.size() != 1) return false;
  }
  return true;
}

void FluidModel::request_resolve() {
  if (resolve_pending_) return;
  resolve_pending_ = true;
  queue_.schedule_in(Duration::zero(), [this] { resolve(); });
}

void FluidModel::collect_component() {
  ++epoch_;
  comp_activities_.clear();
  solve_activities_.clear();
  comp_domains_.clear();
  stack_.clear();
  // Pushes the unvisited running members of a resource not visited yet.
  auto visit_resource = [this](std::uint32_t r) {
    Resource& res = resources_[r];
    if (res.mark == epoch_) return;
    res.mark = epoch_;
    for (const Member& m : res.members) {
      Activity& a = activities_[m.slot];
      if (a.mark != epoch_) {
        a.mark = epoch_;
        stack_.push_back(m.slot);
      }
    }
  };
  // Part 1: the closure of the seeds through shared resources only. Only these activities' max-min
  // shares can have changed (a share depends on its resource-connected part alone), so only they
  // are re-solved.
  for (const std::uint32_t r : seed_resources_) {
    visit_resource(r);
  }
  for (const ActivityId id : seed_activities_) {
    const Activity* a = find(id);  // may have been cancelled since it was seeded
    if (a != nullptr && a->state == ActivityState::kRunning && a->mark != epoch_) {
      activities_[id.slot].mark = epoch_;
      stack_.push_back(id.slot);
    }
  }
  while (!stack_.empty()) {
    const std::uint32_t slot = stack_.back();
    stack_.pop_back();
    solve_activities_.push_back(slot);
    for (const Use& u : uses_of(slot)) {
      visit_resource(u.resource);
    }
  }
  // Part 2: the running members of the domains whose membership changed. Their contention state
  // (overlap, alpha) may have changed, so their rates are re-derived from their stored shares.
  // No other activity's rate can change: a rate is its share over its domain's factor.
  comp_activities_.assign(solve_activities_.begin(), solve_activities_.end());
  for (const std::uint32_t d : seed_domains_) {
    Domain& dom = domains_[d];
    if (dom.mark == epoch_) continue;
    dom.mark = epoch_;
    comp_domains_.push_back(d);
    for (const std::uint32_t slot : dom.members) {
      Activity& a = activities_[slot];
      if (a.mark == epoch_) continue;
      a.mark = epoch_;
      comp_activities_.push_back(slot);
    }
  }
  seed_resources_.clear();
  seed_domains_.clear();
  seed_activities_.clear();
}

void FluidModel::resolve() {
  resolve_pending_ = false;
  ++resolves_;
  collect_component();
  const std::int64_t now = ns_of(queue_.now());

  // Re-solve the shares of the changed part. An activity alone on all its resources gets
  // alone_share(); the others go to the solver in start order, their resources in id order: the
  // result never depends on list order, and a resource-connected part gets the same shares
  // whether it is solved alone or with other parts (progressive filling never mixes disjoint
  // parts).
  solver_activities_.clear();
  for (const std::uint32_t slot : solve_activities_) {
    if (!alone(slot)) {
      solver_activities_.push_back(slot);
      continue;
    }
    activities_[slot].share = alone_share(slot);
  }
  if (!solver_activities_.empty()) {
    std::sort(solver_activities_.begin(), solver_activities_.end(),
              [this](std::uint32_t x, std::uint32_t y) { return activities_[x].seq < activities_[y].seq; });
    ++epoch_;  // marks the solver's resources (collect_component's marks are no longer needed)
    solver_resources_.clear();
    for (const std::uint32_t slot : solver_activities_) {
      for (const Use& u : uses_of(slot)) {
        Resource& r = resources_[u.resource];
        if (r.mark == epoch_) continue;
        r.mark = epoch_;
        solver_resources_.push_back(u.resource);
      }
    }
    std::sort(solver_resources_.begin(), solver_resources_.end());
    solver_.clear();
    for (const std::uint32_t r : solver_resources_) resources_[r].local = solver_.add_resource(resources_[r].capacity);
    for (const std::uint32_t slot : solver_activities_) {
      Activity& a = activities_[slot];
      a.local = solver_.add_variable(a.bound);
      for (const Use& u : uses_of(slot)) solver_.add_use(a.local, resources_[u.resource].local, u.weight);
    }
    solver_.solve();
    for (const std::uint32_t slot : solver_activities_) activities_[slot].share = solver_.rate(activities_[slot].local);
  }

  // Apply the live contention state of the domains whose membership changed.
  for (const std::uint32_t d : comp_domains_) {
    Domain& dom = domains_[d];
    dom.overlap = dom.running_compute > 0 && dom.running_comm > 0;
    dom.alpha = dom.live_alpha;
  }

  // Lazy update of the remaining work at the old rate, new rate, new completion (each activity
  // independently, so the visiting order does not matter).
  for (const std::uint32_t slot : comp_activities_) retime(slot, now);
  rate_updates_ += comp_activities_.size();
  if (!changed_loads_.empty()) record_loads();
  reschedule_wake();
}

void FluidModel::reschedule_wake() {
  if (completions_.empty()) {
    if (wake_ns_) queue_.cancel(wake_event_);
    wake_ns_.reset();
    return;
  }
  const std::int64_t next = completions_.earliest_ns();
  if (wake_ns_ == next) return;
  if (wake_ns_) queue_.cancel(wake_event_);
  wake_event_ = queue_.schedule_at(Time{Duration{next}}, [this] { on_wake(); });
  wake_ns_ = next;
}

void FluidModel::on_wake() {
  wake_ns_.reset();
  const std::int64_t now = ns_of(queue_.now());
  done_callbacks_.clear();
  while (!completions_.empty() && completions_.earliest_ns() <= now) {
    done_slots_.clear();
    completions_.pop_earliest(done_slots_);  // in start order
    for (const std::uint32_t slot : done_slots_) {
      Activity& a = activities_[slot];
      if (a.state == ActivityState::kRunning) detach(slot);
      a.remaining = 0;  // clamp: the rounded completion time is the end of the work
      done_callbacks_.push_back(a.on_complete);
      release(slot);
      ++completed_;
    }
  }
  if (!changed_loads_.empty()) record_loads();  // the finished ones left; a resolve may follow
  if (!seed_resources_.empty() || !seed_domains_.empty()) {
    request_resolve();
  } else {
    reschedule_wake();
  }
  // Callbacks may start or cancel activities; they never re-enter on_wake.
  for (std::size_t i = 0; i < done_callbacks_.size(); ++i) {
    Action callback = done_callbacks_[i];
    callback();
  }
}

}  // namespace mofasim::sim
