// MaxMinSolver implementation: progressive filling with a lazy heap of resource levels.
#include "sim/engine/max_min_solver.h"

#include <algorithm>
#include <cmath>

#include "sim/units/check.h"

namespace mofasim::sim {
namespace {

// Min-heap order on (level, resource): lower level first, then lower resource index.
struct LevelAfter {
  template <class L>
  bool operator()(const L& a, const L& b) const {
    return a.level > b.level || (a.level == b.level && a.resource > b.resource);
  }
};

}  // namespace

void MaxMinSolver::clear() {
  capacity_.clear();
  bound_.clear();
  uses_.clear();
}

std::uint32_t MaxMinSolver::add_resource(double capacity) {
  MOFASIM_CHECK(capacity > 0 && std::isfinite(capacity), "max-min: resource capacity must be finite and > 0");
  capacity_.push_back(capacity);
  return static_cast<std::uint32_t>(capacity_.size() - 1);
}

std::uint32_t MaxMinSolver::add_variable(double bound) {
  MOFASIM_CHECK(bound > 0, "max-min: variable bound must be > 0");
  bound_.push_back(bound);
  return static_cast<std::uint32_t>(bound_.size() - 1);
}

void MaxMinSolver::add_use(std::uint32_t variable, std::uint32_t resource, double weight) {
  MOFASIM_CHECK(variable < bound_.size() && resource < capacity_.size(), "max-min: use out of range");
  MOFASIM_CHECK(weight > 0 && std::isfinite(weight), "max-min: use weight must be finite and > 0");
  uses_.push_back(Use{.variable = variable, .resource = resource, .weight = weight});
}

void MaxMinSolver::solve() {
  const std::size_t nv = bound_.size();
  const std::size_t nr = capacity_.size();
  // CSR adjacency by counting sort; stable, so each list keeps the order uses were added in.
  var_begin_.assign(nv + 1, 0);
  res_begin_.assign(nr + 1, 0);
  for (const Use& u : uses_) {
    ++var_begin_[u.variable + 1];
    ++res_begin_[u.resource + 1];
  }
  for (std::size_t i = 0; i < nv; ++i) var_begin_[i + 1] += var_begin_[i];
  for (std::size_t i = 0; i < nr; ++i) res_begin_[i + 1] += res_begin_[i];
  by_var_.resize(uses_.size());
  by_res_.resize(uses_.size());
  {
    std::vector<std::uint32_t>& fill_v = touched_;  // reuse as a cursor buffer
    fill_v.assign(var_begin_.begin(), var_begin_.end() - 1);
    for (const Use& u : uses_) by_var_[fill_v[u.variable]++] = u;
    fill_v.assign(res_begin_.begin(), res_begin_.end() - 1);
    for (const Use& u : uses_) by_res_[fill_v[u.resource]++] = u;
    fill_v.clear();
  }

  cap_left_.assign(capacity_.begin(), capacity_.end());
  weight_left_.assign(nr, 0.0);
  count_left_.assign(nr, 0);
  version_.assign(nr, 0);
  touched_stamp_.assign(nr, 0);
  stamp_ = 0;
  for (const Use& u : uses_) {
    weight_left_[u.resource] += u.weight;
    ++count_left_[u.resource];
  }
  rate_.assign(nv, 0.0);
  frozen_.assign(nv, 0);
  unfrozen_ = nv;

  bounded_.clear();
  for (std::uint32_t v = 0; v < nv; ++v) {
    MOFASIM_CHECK(var_begin_[v + 1] > var_begin_[v] || std::isfinite(bound_[v]),
                  "max-min: a variable has neither a resource nor a bound");
    if (std::isfinite(bound_[v])) bounded_.push_back(v);
  }
  std::sort(bounded_.begin(), bounded_.end(), [this](std::uint32_t a, std::uint32_t b) {
    return bound_[a] < bound_[b] || (bound_[a] == bound_[b] && a < b);
  });
  std::size_t next_bounded = 0;

  heap_.clear();
  for (std::uint32_t r = 0; r < nr; ++r) {
    if (count_left_[r] > 0) heap_.push_back(Level{.level = cap_left_[r] / weight_left_[r], .resource = r, .version = 0});
  }
  std::make_heap(heap_.begin(), heap_.end(), LevelAfter{});

  while (unfrozen_ > 0) {
    // Drop stale heap entries (resource changed since the entry was pushed, or fully frozen).
    while (!heap_.empty()) {
      const Level& top = heap_.front();
      if (top.version == version_[top.resource] && count_left_[top.resource] > 0) break;
      std::pop_heap(heap_.begin(), heap_.end(), LevelAfter{});
      heap_.pop_back();
    }
    while (next_bounded < bounded_.size() && frozen_[bounded_[next_bounded]]) ++next_bounded;
    const double resource_level = heap_.empty() ? kNoBound : heap_.front().level;
    const double bound_level = next_bounded < bounded_.size() ? bound_[bounded_[next_bounded]] : kNoBound;
    MOFASIM_CHECK(resource_level < kNoBound || bound_level < kNoBound, "max-min: unfrozen variable without constraint");

    ++stamp_;
    touched_.clear();
    if (bound_level <= resource_level) {
      freeze(bounded_[next_bounded], bound_level);
    } else {
      const std::uint32_t r = heap_.front().resource;
      std::pop_heap(heap_.begin(), heap_.end(), LevelAfter{});
      heap_.pop_back();
      for (std::uint32_t i = res_begin_[r]; i < res_begin_[r + 1]; ++i) {
        const std::uint32_t v = by_res_[i].variable;
        if (!frozen_[v]) freeze(v, resource_level);
      }
    }
    for (const std::uint32_t r : touched_) push_level(r);
  }

  for (std::uint32_t v = 0; v < nv; ++v) {
    MOFASIM_CHECK(rate_[v] > 0 && std::isfinite(rate_[v]), "max-min: a rate is zero, negative or not finite");
  }
}

void MaxMinSolver::freeze(std::uint32_t variable, double level) {
  frozen_[variable] = 1;
  rate_[variable] = level;
  --unfrozen_;
  for (std::uint32_t i = var_begin_[variable]; i < var_begin_[variable + 1]; ++i) {
    const Use& u = by_var_[i];
    cap_left_[u.resource] -= u.weight * level;
    weight_left_[u.resource] -= u.weight;
    --count_left_[u.resource];
    if (touched_stamp_[u.resource] != stamp_) {
      touched_stamp_[u.resource] = stamp_;
      touched_.push_back(u.resource);
    }
  }
}

void MaxMinSolver::push_level(std::uint32_t resource) {
  ++version_[resource];
  if (count_left_[resource] == 0) return;
  // Rounding can leave a saturated resource a hair below zero; its level is then "now".
  const double left = std::max(cap_left_[resource], 0.0);
  const double weight = std::max(weight_left_[resource], 1e-300);
  heap_.push_back(Level{.level = left / weight, .resource = resource, .version = version_[resource]});
  std::push_heap(heap_.begin(), heap_.end(), LevelAfter{});
}

}  // namespace mofasim::sim
