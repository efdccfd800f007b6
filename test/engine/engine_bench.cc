// Engine benchmarks: the bare event queue under the classic hold model (beside a bare
// std::priority_queue and the radix heap alone, for reference), and the fluid model with 10^4
// concurrent activities on 64 shared links (each activity on 2 random links).
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/engine/fluid_model.h"
#include "sim/engine/radix_event_heap.h"

namespace mofasim::sim {
namespace {

// Hold model: every fired event schedules one at now + a random increment (table-driven, so the
// RNG is not what is measured); the number of pending events stays constant.
struct HoldState {
  EventQueue* queue;
  const std::int64_t* increments;
  std::uint32_t next = 0;
};
constexpr std::uint32_t kIncrementMask = 4095;

void hold(HoldState* s) {
  const std::int64_t inc = s->increments[s->next++ & kIncrementMask];
  s->queue->schedule_in(Duration{inc}, [s] { hold(s); });
}

void BM_EventQueueHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  std::mt19937_64 rng(1);
  std::vector<std::int64_t> increments(kIncrementMask + 1);
  std::exponential_distribution<double> exp_ns(1.0 / 1000.0);  // mean 1 us
  for (auto& inc : increments) inc = static_cast<std::int64_t>(exp_ns(rng));
  EventQueue q;
  HoldState s{.queue = &q, .increments = increments.data()};
  for (std::size_t i = 0; i < pending; ++i) hold(&s);
  for (std::size_t i = 0; i < pending; ++i) q.step();  // warm up: reach the steady-state mix
  const std::uint64_t before = q.processed();
  for (auto _ : state) q.step();
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(q.processed() - before), benchmark::Counter::kIsRate);
  state.counters["pending"] = static_cast<double>(q.pending());
}
BENCHMARK(BM_EventQueueHold)->Arg(100'000)->Arg(1'000);

std::vector<std::int64_t> hold_increments() {
  std::mt19937_64 rng(1);
  std::vector<std::int64_t> increments(kIncrementMask + 1);
  std::exponential_distribution<double> exp_ns(1.0 / 1000.0);  // mean 1 us, as above
  for (auto& inc : increments) inc = static_cast<std::int64_t>(exp_ns(rng));
  return increments;
}

// Reference point for the hold model: a bare std::priority_queue of (when, seq) pairs, no
// actions, no cancel. Measured beside the EventQueue so that both see the same machine load.
void BM_StdPriorityQueueHold(benchmark::State& state) {
  using Entry = std::pair<std::int64_t, std::uint64_t>;
  const auto pending = static_cast<std::size_t>(state.range(0));
  const std::vector<std::int64_t> increments = hold_increments();
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> q;
  std::uint64_t seq = 0;
  std::uint32_t next = 0;
  std::int64_t now = 0;
  for (std::size_t i = 0; i < pending; ++i) q.emplace(increments[next++ & kIncrementMask], seq++);
  std::uint64_t events = 0;
  for (auto _ : state) {
    now = q.top().first;
    q.pop();
    q.emplace(now + increments[next++ & kIncrementMask], seq++);
    ++events;
  }
  benchmark::DoNotOptimize(now);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_StdPriorityQueueHold)->Arg(100'000)->Arg(1'000);

// The radix heap alone (keys only, no slots or actions): what the EventQueue adds on top of it.
void BM_RadixEventHeapHold(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  const std::vector<std::int64_t> increments = hold_increments();
  RadixEventHeap q;
  std::uint64_t seq = 0;
  std::uint32_t next = 0;
  std::uint64_t now = 0;
  for (std::size_t i = 0; i < pending; ++i) {
    q.push({.when = static_cast<std::uint64_t>(increments[next++ & kIncrementMask]), .order = seq++});
  }
  std::uint64_t events = 0;
  for (auto _ : state) {
    now = q.top()->when;
    q.pop();
    q.push({.when = now + static_cast<std::uint64_t>(increments[next++ & kIncrementMask]), .order = seq++});
    ++events;
  }
  benchmark::DoNotOptimize(now);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RadixEventHeapHold)->Arg(100'000)->Arg(1'000);

// Fluid model: `activities` flows, each over 2 of 64 links; each completion starts a new flow,
// so the population stays constant. One step is one queue event (a wake-up or a resolve).
struct FluidState {
  FluidModel* model;
  std::mt19937_64 rng{7};
  std::vector<ResourceId> links{};
  std::vector<std::array<ResourceUse, 2>> uses{};  // per started flow index modulo the table
  std::uint32_t next = 0;
};

void start_flow(FluidState* s) {
  const std::array<ResourceUse, 2>& u = s->uses[s->next++ % s->uses.size()];
  const double work = 1e6 * (1.0 + static_cast<double>(s->rng() % 1000) / 100.0);
  s->model->start({.work = work, .uses = u}, [s] { start_flow(s); });
}

void BM_FluidSharedLinks(benchmark::State& state) {
  const auto activities = static_cast<std::size_t>(state.range(0));
  EventQueue q;
  FluidModel m(q);
  FluidState s{.model = &m};
  for (int l = 0; l < 64; ++l) s.links.push_back(m.add_resource({.name = "link", .capacity = 1e11}));
  s.uses.resize(4096);
  for (auto& u : s.uses) {
    const std::size_t a = s.rng() % 64;
    const std::size_t b = (a + 1 + s.rng() % 63) % 64;
    u = {ResourceUse{.resource = s.links[a]}, ResourceUse{.resource = s.links[b]}};
  }
  for (std::size_t i = 0; i < activities; ++i) start_flow(&s);
  for (int i = 0; i < 100; ++i) q.step();  // warm up the buffers
  const std::uint64_t events = q.processed();
  const std::uint64_t updates = m.rate_updates();
  const std::uint64_t done = m.completed();
  for (auto _ : state) q.step();
  using benchmark::Counter;
  state.counters["events_per_s"] = Counter(static_cast<double>(q.processed() - events), Counter::kIsRate);
  state.counters["rate_updates_per_s"] = Counter(static_cast<double>(m.rate_updates() - updates), Counter::kIsRate);
  state.counters["completions_per_s"] = Counter(static_cast<double>(m.completed() - done), Counter::kIsRate);
  state.counters["running"] = static_cast<double>(m.running());
}
BENCHMARK(BM_FluidSharedLinks)->Arg(10'000)->Arg(1'000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mofasim::sim

BENCHMARK_MAIN();
