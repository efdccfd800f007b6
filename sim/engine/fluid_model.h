// FluidModel: activities that share capacity-limited resources (SimGrid's LMM fluid model) plus
// MoFa's compute/communication contention coefficients, driven by an EventQueue.
//
// Resources (a GPU's compute, its comm engine, H2D/D2H copy engines, each network link, host
// memory bandwidth, disk) have a capacity in work units per second. An activity has an amount of
// work and uses resources with a weight: it consumes `weight` units of the resource per unit of
// its own work, i.e. sum over activities of weight * rate <= capacity (SimGrid's convention). For
// a flow of B bytes on a link, work = B and weight = 1; a ring all-reduce that moves 2(n-1)/n of
// its buffer over each link has weight 2(n-1)/n on it.
//
// Rates are max-min fair (MaxMinSolver); an optional per-activity rate bound caps the share.
// A resource with one activity gives it capacity / weight.
//
// Contention (MoFa time-increase coefficients, mofa-model.md §3.3): every activity has a kind
// (compute or communication) and optionally a contention domain (normally one GPU). While a
// domain has at least one *running* compute activity AND at least one *running* communication
// activity:
//   - each compute activity in the domain progresses at share / alpha_max, where alpha_max is the
//     largest alpha among the running communication activities in the domain;
//   - each communication activity in the domain progresses at share / beta (its own beta).
// Otherwise activities progress at their max-min share. alpha = beta = 1 makes overlap free.
// The slowed activity keeps its max-min share of the resources (the capacity it no longer uses
// is not handed to others): the coefficient models interference inside the GPU, not a change of
// the network allocation. Activities without a domain are never slowed.
//
// Running means "in its fluid phase": an activity may have a fixed latency, spent before it
// joins the fluid system (it uses no resource and counts for no contention meanwhile).
//
// Incremental updates: when the set of running activities changes (start after latency, finish,
// cancel), the resources and domains involved are marked and, in one resolve event at the current
// time, only the activities whose rate can have changed are updated. A rate is the max-min share
// over the contention factor of the activity's domain, so these are (1) the part reachable from
// the changes through shared resources: a share depends only on its resource-connected part, and
// progressive filling gives a part the same shares whether it is solved alone or with others, so
// only this part is re-solved; and (2) the running members of the domains whose membership
// changed, whose contention state is recomputed and re-applied to their stored shares. Remaining
// work is updated lazily: each activity stores (remaining, rate, last update time) and is brought
// up to date only when its rate is re-derived. All changes made at one instant are solved together.
//
// Time rounding: an activity's completion is scheduled at now + from_seconds(remaining / rate),
// i.e. rounded to the nearest nanosecond (the project's single rounding rule); when it fires, its
// remaining work is clamped to 0. Work left by a partial interval is max(0, remaining - rate*dt).
// Completions that fall in the same nanosecond invoke their callbacks in start order.
//
// Determinism: the activities that need the max-min solver are given to it in start order and
// their resources in id order; an activity alone on its resources gets capacity / weight without
// it (the level the solver would compute). Nothing depends on pointer order or hashing. The model
// holds one wake-up event in the queue at the earliest completion time (its CompletionIndex
// orders the activities), so rate changes do not leave cancelled events behind.
//
// Interference without work: start_interference(domain, alpha, latency) puts into a domain the
// alpha of a communication kernel whose bytes are carried elsewhere (a collective slows every
// member GPU's compute, though one member's activity carries its bytes). After its latency it
// counts as a running communication activity of the domain (overlap, alpha_max) until
// end_interference; it has no work, rate, resource or completion of its own. It acts exactly as
// an endless communication activity with that alpha and no resource would (same latency event,
// same resolves), without the per-activity costs: no slot, no retime when the domain changes, no
// entry in the completion index.
//
// Load recording (link-utilisation traces): watch_load(r) makes the model keep the history of r's
// load, the sum of weight × rate over its running activities (resource units per second: bytes/s
// on a link). Rates that change mark their watched resources; the loads are summed once at the end
// of the instant's resolve (or fast-path start, or completion), and a sample is kept only when the
// value changes; several changes within one nanosecond keep the last. Without watched resources
// the cost is one untaken branch per rate update and per completion.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "sim/engine/action.h"
#include "sim/engine/completion_index.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/ids.h"
#include "sim/engine/max_min_solver.h"
#include "sim/units/time.h"

namespace mofasim::sim {

// A quantity of the simulation leaves the range of its arithmetic: an activity would end beyond
// the simulated clock's range (2^63 ns, about 292 years), or its work or rate is infinite or zero
// in double precision. Resource capacities and weights are checked finite and > 0, so this comes
// from absurd magnitudes in the input (a peak of 1 FLOPS, a denormal or a 1e308 bandwidth), not
// from a bug, and the command line reports it as bad input.
class SimulationOutOfRange : public std::range_error {
 public:
  using std::range_error::range_error;
};

struct ResourceSpec {
  std::string name{};
  double capacity = 0;  // work units per second, > 0 and finite
};

struct ResourceUse {
  ResourceId resource{};
  double weight = 1.0;  // resource units consumed per unit of the activity's work, > 0
};

enum class ActivityKind : std::uint8_t { kCompute, kCommunication };

// MoFa time-increase coefficients of a communication activity (>= 1; 1 = no slowdown).
struct ContentionCoefficients {
  double alpha = 1.0;  // slows the compute it overlaps with
  double beta = 1.0;   // slows this communication while it overlaps compute
};

struct ActivitySpec {
  double work = 0;                        // work units, >= 0 and finite
  std::span<const ResourceUse> uses{};    // copied at start; may be empty if rate_bound is set
  ActivityKind kind = ActivityKind::kCompute;
  std::optional<DomainId> domain{};       // none: never slowed, slows nothing
  ContentionCoefficients coefficients{};  // read for kCommunication only
  std::optional<double> rate_bound{};     // work units per second, > 0
  Duration latency{};                     // fixed delay before the fluid part, >= 0
};

class FluidModel {
 public:
  explicit FluidModel(EventQueue& queue);
  FluidModel(const FluidModel&) = delete;
  FluidModel& operator=(const FluidModel&) = delete;

  ResourceId add_resource(ResourceSpec spec);
  DomainId add_domain(std::string name);

  // Starts an activity now. `on_complete` runs (from the event loop) when its work is done.
  // Zero work with no resources is a pure timer of `latency`. Bad specs throw std::invalid_argument.
  ActivityId start(const ActivitySpec& spec, Action on_complete);
  // Aborts an activity without calling its callback. False if finished, cancelled or unknown.
  bool cancel(ActivityId id);
  // Interference without work (see the file comment). Bad arguments throw std::invalid_argument.
  InterferenceId start_interference(DomainId domain, double alpha, Duration latency);
  // Removes it (in its latency or running). False if already ended or unknown.
  bool end_interference(InterferenceId id);

  [[nodiscard]] bool active(ActivityId id) const;
  // Current effective rate (work units/s) after contention; 0 while in latency or not yet solved.
  [[nodiscard]] double rate(ActivityId id) const;
  // Remaining work at now() (lazy: remaining - rate * elapsed, clamped to 0).
  [[nodiscard]] double remaining(ActivityId id) const;
  // Scheduled completion time, if running and solved.
  [[nodiscard]] std::optional<Time> expected_completion(ActivityId id) const;

  [[nodiscard]] Time now() const { return queue_.now(); }
  [[nodiscard]] EventQueue& queue() { return queue_; }
  [[nodiscard]] std::size_t running() const { return running_; }
  [[nodiscard]] std::uint64_t rate_updates() const { return rate_updates_; }  // activity rates set
  [[nodiscard]] std::uint64_t resolves() const { return resolves_; }          // component solves
  [[nodiscard]] std::uint64_t completed() const { return completed_; }

  // Load histories (see the file comment). Watch before the activities that use the resource start.
  struct LoadHistory {
    std::vector<std::int64_t> t_ns;  // ascending, one sample per change; before the first, 0
    std::vector<double> load;        // resource units per second from t_ns[i] on
  };
  void watch_load(ResourceId r);
  // The history of a watched resource; empty for one not watched.
  [[nodiscard]] const LoadHistory& load_history(ResourceId r) const;

 private:
  // Where an activity is in its life: a free slot, paying its fixed latency, in its fluid phase, or
  // a plain timer. (Not a pass phase: that is schedules::Phase.)
  enum class ActivityState : std::uint8_t { kFree, kLatency, kRunning, kTimer };
  static constexpr std::uint32_t kInlineUses = 2;  // most activities use one or two resources
  struct Use {
    std::uint32_t resource;
    std::uint32_t pos;  // index of this activity in the resource's member list
    double weight;
  };
  struct Member {
    std::uint32_t slot;
    std::uint32_t use;  // index into the activity's uses
  };
  // Everything a start, resolve and completion touch, in three whole cache lines and with no
  // pointer to chase for activities with up to kInlineUses uses; the rest is in ActivityCold.
  struct alignas(64) Activity {
    Action on_complete;
    std::uint64_t seq = 0;
    double remaining = 0;
    double rate = 0;
    double share = 0;  // max-min share before contention, kept until its resource part changes
    double bound = std::numeric_limits<double>::infinity();
    ContentionCoefficients coefficients;
    std::int64_t last_update_ns = 0;
    std::int64_t completion_ns = 0;
    std::uint32_t domain = kInvalidIndex;
    std::uint32_t domain_pos = kInvalidIndex;
    std::uint32_t mark = 0;
    std::uint32_t local = 0;  // index in the solver during a resolve
    std::uint32_t num_uses = 0;
    std::uint32_t next_free = kInvalidIndex;
    ActivityState state = ActivityState::kFree;
    ActivityKind kind = ActivityKind::kCompute;
    bool solved = false;
    Use inline_uses[kInlineUses]{};
  };
  static_assert(sizeof(Activity) == 192);
  struct ActivityCold {
    EventId latency_event;
    std::vector<Use> more_uses;  // the uses when there are more than kInlineUses; capacity kept
  };
  // Member lists keep their first entries inline: most resources (a GPU's compute, a NIC) and
  // domains hold a handful of running activities, and an inline list saves a cache miss on every
  // start and completion.
  struct Resource {
    double capacity = 0;
    boost::container::small_vector<Member, 2> members;
    std::uint32_t mark = 0;
    std::uint32_t local = 0;
    std::uint32_t history = kInvalidIndex;  // index in histories_ when watched
    bool load_changed = false;              // listed in changed_loads_
  };
  struct Domain {
    boost::container::small_vector<std::uint32_t, 6> members;  // running activity slots
    // Live: kept current at every start and completion.
    std::uint32_t running_compute = 0;
    std::uint32_t running_comm = 0;
    double live_alpha = 1.0;  // max(1, alpha over running communication activities)
    boost::container::small_vector<std::uint32_t, 2> interferences;  // running ones (slots), in running_comm
    // Applied: the state the members' current rates were derived with.
    double alpha = 1.0;
    bool overlap = false;  // a running compute and a running communication
    std::uint32_t mark = 0;
  };

  struct Interference {
    std::uint64_t seq = 0;
    double alpha = 1.0;
    std::uint32_t domain = kInvalidIndex;
    std::uint32_t domain_pos = kInvalidIndex;
    std::uint32_t next_free = kInvalidIndex;
    ActivityState state = ActivityState::kFree;  // kLatency or kRunning while it exists
    EventId latency_event;
  };

  [[nodiscard]] std::span<Use> uses_of(std::uint32_t slot) {
    Activity& a = activities_[slot];
    return {a.num_uses <= kInlineUses ? a.inline_uses : cold_[slot].more_uses.data(), a.num_uses};
  }
  [[nodiscard]] std::span<const Use> uses_of(std::uint32_t slot) const {
    const Activity& a = activities_[slot];
    return {a.num_uses <= kInlineUses ? a.inline_uses : cold_[slot].more_uses.data(), a.num_uses};
  }
  const Activity* find(ActivityId id) const;
  void validate(const ActivitySpec& spec) const;
  void activate(std::uint32_t slot);
  void detach(std::uint32_t slot);
  void release(std::uint32_t slot);
  void activate_interference(std::uint32_t slot);
  // max(1, alpha over the domain's running communication activities and interferences).
  [[nodiscard]] double max_alpha(const Domain& d) const;
  // True if the activity is the only running member of each resource it uses.
  [[nodiscard]] bool alone(std::uint32_t slot) const;
  // The share of an activity alone on all its resources: the level progressive filling freezes it
  // at, the lowest of its bound and capacity / weight of each resource (0 + w = w).
  [[nodiscard]] double alone_share(std::uint32_t slot) const;
  // True if the domain's live contention state gives its members the factor their rates have.
  [[nodiscard]] static bool applied_state_current(const Domain& d);
  // Brings the remaining work up to now at the old rate, derives the rate from the stored share
  // and the applied domain state, and re-keys the completion.
  void retime(std::uint32_t slot, std::int64_t now);
  void request_resolve();
  void resolve();
  void on_wake();
  void reschedule_wake();
  void collect_component();
  // Load recording: lists the watched resources of an activity whose rate changes or which leaves.
  void note_load_change(std::uint32_t slot);
  // Appends the current load of every listed resource to its history.
  void record_loads();

  EventQueue& queue_;
  std::vector<Activity> activities_;
  std::vector<ActivityCold> cold_;  // by slot, beside activities_
  std::vector<Resource> resources_;
  std::vector<std::string> resource_names_;
  std::vector<Domain> domains_;
  std::vector<std::string> domain_names_;
  std::uint32_t free_head_ = kInvalidIndex;
  std::uint64_t next_seq_ = 1;
  std::size_t running_ = 0;

  std::vector<Interference> interferences_;
  std::uint32_t free_interference_ = kInvalidIndex;
  std::uint64_t next_interference_seq_ = 1;

  CompletionIndex completions_;
  EventId wake_event_;
  std::optional<std::int64_t> wake_ns_;
  bool resolve_pending_ = false;

  // Resolve scratch (kept to avoid allocation).
  std::vector<std::uint32_t> seed_resources_, seed_domains_;
  std::vector<ActivityId> seed_activities_;  // newly running (covers activities with no resource)
  std::vector<std::uint32_t> comp_activities_, comp_domains_, stack_;
  std::vector<std::uint32_t> solve_activities_;  // the part whose shares change
  std::vector<std::uint32_t> solver_activities_, solver_resources_;  // the part that needs the solver
  std::vector<std::uint32_t> done_slots_;
  std::vector<Action> done_callbacks_;
  std::uint32_t epoch_ = 0;
  MaxMinSolver solver_;

  // Load recording (empty unless watch_load was called).
  std::vector<LoadHistory> histories_;
  std::vector<std::uint32_t> changed_loads_;
  bool watching_ = false;

  std::uint64_t rate_updates_ = 0;
  std::uint64_t resolves_ = 0;
  std::uint64_t completed_ = 0;
};

}  // namespace mofasim::sim
