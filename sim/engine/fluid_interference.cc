// FluidModel interferences: a communication kernel's alpha in a domain, without an activity.
//
// Each step mirrors what an endless communication activity with no resource (rate bound 1, beta
// 1) would do at its start, activation and cancel, minus what only concerns the activity itself
// (its slot, rate, retimes and completion entry): the same latency event, the same domain counts
// and alpha_max, the same resolve requests. So results are identical to such a marker activity's,
// event for event (the fired-event count included).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/engine/fluid_model.h"
#include "sim/units/check.h"

namespace mofasim::sim {

double FluidModel::max_alpha(const Domain& d) const {
  double alpha = 1.0;
  for (const std::uint32_t m : d.members) {
    const Activity& other = activities_[m];
    if (other.kind == ActivityKind::kCommunication) alpha = std::max(alpha, other.coefficients.alpha);
  }
  for (const std::uint32_t i : d.interferences) alpha = std::max(alpha, interferences_[i].alpha);
  return alpha;
}

InterferenceId FluidModel::start_interference(DomainId domain, double alpha, Duration latency) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("FluidModel::start_interference: " + what); };
  if (domain.value >= domains_.size()) fail("unknown domain id " + std::to_string(domain.value));
  if (!(alpha >= 1) || !std::isfinite(alpha)) fail("alpha " + std::to_string(alpha) + " must be finite and >= 1");
  if (latency < Duration::zero()) fail("latency must be >= 0");
  std::uint32_t slot = free_interference_;
  if (slot != kInvalidIndex) {
    free_interference_ = interferences_[slot].next_free;
  } else {
    MOFASIM_CHECK(interferences_.size() < kInvalidIndex, "too many interferences");
    slot = static_cast<std::uint32_t>(interferences_.size());
    interferences_.emplace_back();
  }
  Interference& i = interferences_[slot];
  i.seq = next_interference_seq_++;
  i.alpha = alpha;
  i.domain = domain.value;
  const InterferenceId id{.slot = slot, .seq = i.seq};
  if (latency > Duration::zero()) {
    i.state = ActivityState::kLatency;
    i.latency_event = queue_.schedule_in(latency, [this, slot] { activate_interference(slot); });
  } else {
    activate_interference(slot);
  }
  return id;
}

void FluidModel::activate_interference(std::uint32_t slot) {
  Interference& i = interferences_[slot];
  i.state = ActivityState::kRunning;
  Domain& d = domains_[i.domain];
  i.domain_pos = static_cast<std::uint32_t>(d.interferences.size());
  d.interferences.push_back(slot);
  ++d.running_comm;
  d.live_alpha = std::max(d.live_alpha, i.alpha);
  if (!applied_state_current(d)) {  // its members' rates change: one resolve at this instant
    seed_domains_.push_back(i.domain);
    request_resolve();
    return;
  }
  // As activate()'s fast path does for an activity alone with its domain state current.
  if (!changed_loads_.empty()) record_loads();
  reschedule_wake();
}

bool FluidModel::end_interference(InterferenceId id) {
  if (id.slot >= interferences_.size()) return false;
  Interference& i = interferences_[id.slot];
  if (i.state == ActivityState::kFree || i.seq != id.seq) return false;
  if (i.state == ActivityState::kLatency) {
    queue_.cancel(i.latency_event);
  } else {
    Domain& d = domains_[i.domain];
    const std::uint32_t moved = d.interferences.back();
    d.interferences.pop_back();
    if (moved != id.slot) {
      d.interferences[i.domain_pos] = moved;
      interferences_[moved].domain_pos = i.domain_pos;
    }
    if (--d.running_comm == 0) {
      d.live_alpha = 1.0;
    } else if (i.alpha == d.live_alpha) {  // the maximum may have left
      d.live_alpha = max_alpha(d);
    }
    if (!applied_state_current(d)) seed_domains_.push_back(i.domain);
    request_resolve();  // as cancel() of a running activity
  }
  i.state = ActivityState::kFree;
  i.next_free = free_interference_;
  free_interference_ = id.slot;
  return true;
}

}  // namespace mofasim::sim
