// Incremental vs from-scratch: 1000 random activities start over time on clustered resources
// (so most changes touch one component only); at 1 ms checkpoints every running activity's rate
// kept by the incremental model must equal a from-scratch max-min + contention solve of all
// running activities, written here independently (naive progressive filling, O(n * r) per step).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/fluid_model.h"

namespace mofasim::sim {
namespace {

struct Spec {
  std::vector<ResourceUse> uses;
  double bound = std::numeric_limits<double>::infinity();
  ActivityKind kind = ActivityKind::kCompute;
  std::uint32_t domain = 0;
  ContentionCoefficients coefficients;
};

// Reference: progressive filling over all given activities, then MoFa coefficients per domain.
std::vector<double> reference_rates(const std::vector<const Spec*>& acts, const std::vector<double>& capacity,
                                    std::size_t domains) {
  const std::size_t n = acts.size();
  std::vector<double> rate(n, 0.0);
  std::vector<bool> frozen(n, false);
  std::vector<double> used(capacity.size(), 0.0);  // by frozen activities
  std::size_t left = n;
  while (left > 0) {
    double level = std::numeric_limits<double>::infinity();
    std::size_t bottleneck = capacity.size();
    for (std::size_t r = 0; r < capacity.size(); ++r) {
      double w = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (frozen[i]) continue;
        for (const ResourceUse& u : acts[i]->uses) {
          if (u.resource.value == r) w += u.weight;
        }
      }
      if (w > 0 && (capacity[r] - used[r]) / w < level) {
        level = (capacity[r] - used[r]) / w;
        bottleneck = r;
      }
    }
    double min_bound = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
      if (!frozen[i]) min_bound = std::min(min_bound, acts[i]->bound);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      bool freeze = false;
      double value = level;
      if (min_bound <= level) {
        freeze = acts[i]->bound == min_bound;
        value = min_bound;
      } else {
        for (const ResourceUse& u : acts[i]->uses) freeze = freeze || u.resource.value == bottleneck;
      }
      if (!freeze) continue;
      frozen[i] = true;
      rate[i] = value;
      --left;
      for (const ResourceUse& u : acts[i]->uses) used[u.resource.value] += u.weight * value;
    }
  }
  std::vector<bool> has_compute(domains, false), has_comm(domains, false);
  std::vector<double> alpha(domains, 1.0);
  for (const Spec* s : acts) {
    if (s->kind == ActivityKind::kCompute) {
      has_compute[s->domain] = true;
    } else {
      has_comm[s->domain] = true;
      alpha[s->domain] = std::max(alpha[s->domain], s->coefficients.alpha);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Spec& s = *acts[i];
    if (has_compute[s.domain] && has_comm[s.domain]) {
      rate[i] /= s.kind == ActivityKind::kCompute ? alpha[s.domain] : s.coefficients.beta;
    }
  }
  return rate;
}

TEST(MaxMinRandom, IncrementalRatesMatchFromScratchSolve) {
  constexpr int kActivities = 1000;
  constexpr std::uint32_t kClusters = 8;
  constexpr std::uint32_t kResourcesPerCluster = 5;
  std::mt19937_64 rng(20240611);
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  EventQueue q;
  FluidModel m(q);
  std::vector<double> capacity;
  for (std::uint32_t r = 0; r < kClusters * kResourcesPerCluster; ++r) {
    capacity.push_back(50.0 + 100.0 * unit(rng));
    m.add_resource({.name = "resource", .capacity = capacity.back()});
  }
  for (std::uint32_t d = 0; d < kClusters; ++d) m.add_domain("gpu");

  std::vector<Spec> specs(kActivities);
  std::vector<ActivityId> ids(kActivities);
  for (Spec& s : specs) {
    const std::uint32_t cluster = static_cast<std::uint32_t>(rng() % kClusters);
    const int nuses = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < nuses; ++k) {
      const std::uint32_t r = cluster * kResourcesPerCluster + static_cast<std::uint32_t>(rng() % kResourcesPerCluster);
      s.uses.push_back({.resource = ResourceId{r}, .weight = 0.5 + 1.5 * unit(rng)});
    }
    if (unit(rng) < 0.2) s.bound = 0.5 + 5.0 * unit(rng);
    s.kind = unit(rng) < 0.4 ? ActivityKind::kCommunication : ActivityKind::kCompute;
    s.domain = cluster;
    s.coefficients = {.alpha = 1.0 + unit(rng), .beta = 1.0 + unit(rng)};
  }
  struct Ctx {
    FluidModel* m;
    std::vector<Spec>* specs;
    std::vector<ActivityId>* ids;
  } ctx{&m, &specs, &ids};
  auto* c = &ctx;
  for (int i = 0; i < kActivities; ++i) {
    const Time at = at_ns(static_cast<std::int64_t>(unit(rng) * 50e6));  // within 50 ms
    const double work = 0.05 + 0.5 * unit(rng);
    q.schedule_at(at, [c, i, work] {
      const Spec& s = (*c->specs)[static_cast<std::size_t>(i)];
      (*c->ids)[static_cast<std::size_t>(i)] =
          c->m->start({.work = work, .uses = s.uses, .kind = s.kind, .domain = DomainId{s.domain},
                       .coefficients = s.coefficients,
                       .rate_bound = std::isfinite(s.bound) ? std::optional<double>(s.bound) : std::nullopt},
                      [] {});
    });
  }

  std::size_t max_running = 0;
  int checks = 0;
  for (std::int64_t t = 1; t <= 80; ++t) {
    q.run_until(at_ns(t * 1'000'000));
    std::vector<const Spec*> running;
    std::vector<ActivityId> running_ids;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (m.active(ids[i])) {
        running.push_back(&specs[i]);
        running_ids.push_back(ids[i]);
      }
    }
    max_running = std::max(max_running, running.size());
    const std::vector<double> expected = reference_rates(running, capacity, kClusters);
    for (std::size_t k = 0; k < running.size(); ++k) {
      ASSERT_NEAR(m.rate(running_ids[k]), expected[k], 1e-9 * expected[k]) << "t = " << t << " ms, activity " << k;
      ++checks;
    }
  }
  q.run();
  EXPECT_EQ(m.completed(), static_cast<std::uint64_t>(kActivities));
  EXPECT_EQ(m.running(), 0u);
  EXPECT_GT(max_running, 100u);  // the comparison covered a crowded system
  EXPECT_GT(checks, 5000);
  // Incremental: fewer rate updates than re-solving every running activity at every resolve.
  EXPECT_LT(m.rate_updates(), m.resolves() * max_running);
}

}  // namespace
}  // namespace mofasim::sim
