// The search loop (see tune.h): layouts in enumeration order, per layout the feature choices,
// memory verdicts cached per (optimizer, recompute, offload), step evaluations, then the ranking.
#include "sim/tuner/tune.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "sim/tuner/enumerate.h"
#include "sim/units/check.h"

namespace mofasim::tuner {
namespace {

constexpr std::uint64_t kProgressEvery = 256;  // layouts between progress reports

int toggle_size(Toggle t) { return t == Toggle::kSearch ? 2 : 1; }

// One worker's share of a shard. Everything it allocates is allocated once, up front.
class Worker {
 public:
  Worker(const TuneProblem& problem, const TuneOptions& options, const Evaluator& evaluator)
      : problem_(problem), options_(options), evaluator_(evaluator) {
    const FeatureSearch& fs = options.features;
    variants_ = feature_variants(fs);
    overlap_variants_ = toggle_size(fs.tp_overlap) * toggle_size(fs.cp_overlap) * toggle_size(fs.ep_overlap) *
                        toggle_size(fs.pp_overlap) * toggle_size(fs.dp_overlap);
    memory_keys_ = variants_ / overlap_variants_;
    decoded_.reserve(static_cast<std::size_t>(variants_));
    for (int f = 0; f < variants_; ++f) decoded_.push_back(decode_features(f, fs));
    memory_.resize(static_cast<std::size_t>(memory_keys_));
    parallel_.stage_layers.reserve(static_cast<std::size_t>(problem.model.num_layers));
    result_.stats.feature_variants = variants_;
  }

  void run_layout(const Layout& layout, std::uint64_t layout_index) {
    TuneStats& st = result_.stats;
    st.shard_layouts += 1;
    st.shard_configs += static_cast<std::uint64_t>(variants_);
    const std::uint64_t first_id = layout_index * static_cast<std::uint64_t>(variants_);
    if (const std::optional<Reason> why = layout_verdict(layout, problem_, options_)) {
      const auto r = static_cast<std::size_t>(*why);
      st.removed_layouts[r] += 1;
      st.removed_configs[r] += static_cast<std::uint64_t>(variants_);
      if (options_.keep_pruned && *why >= kFirstRule) {
        for (int f = 0; f < variants_; ++f) {
          result_.pruned.push_back(PrunedCandidate{
              .candidate = Candidate{.layout = layout, .features = decoded_[static_cast<std::size_t>(f)], .id = first_id + static_cast<std::uint64_t>(f)},
              .reason = *why});
        }
      }
      return;
    }
    Candidate cand{.layout = layout, .features = {}, .id = first_id};
    to_parallel_spec(cand, problem_, options_, parallel_);
    std::fill(memory_.begin(), memory_.end(), std::nullopt);
    for (int f = 0; f < variants_; ++f) {
      cand.features = decoded_[static_cast<std::size_t>(f)];
      cand.id = first_id + static_cast<std::uint64_t>(f);
      std::optional<Reason> why = feature_verdict(layout, cand.features, problem_, options_);
      const int key = f / overlap_variants_;
      if (!why && options_.rules.memory_saver_not_needed && evaluator_.memory && lighter_variant_fits(cand, key)) {
        why = Reason::kMemorySaverNotNeeded;
      }
      if (why) {
        st.removed_configs[static_cast<std::size_t>(*why)] += 1;
        if (options_.keep_pruned) result_.pruned.push_back(PrunedCandidate{.candidate = cand, .reason = *why});
        continue;
      }
      if (evaluator_.memory && !memory_verdict(cand, key).fits) {
        st.memory_pruned += 1;
        continue;
      }
      evaluate(cand);
    }
  }

  TuneResult& result() { return result_; }

 private:
  const MemoryVerdict& memory_verdict(const Candidate& cand, int key) {
    std::optional<MemoryVerdict>& slot = memory_[static_cast<std::size_t>(key)];
    if (!slot) {
      // Memory does not depend on the overlaps: ask with the key's first overlap variant.
      Candidate probe = cand;
      probe.features = decoded_[static_cast<std::size_t>(key * overlap_variants_)];
      const model::FeatureSpec features = to_feature_spec(probe.features, problem_.base_features, parallel_);
      slot = evaluator_.memory(ConfigView{.candidate = probe, .parallel = parallel_, .features = features});
      result_.stats.memory_checks += 1;
    }
    return *slot;
  }

  // MoFa-style dominance: recompute and offload only add time (recompute re-runs forward work;
  // offload's max(α·T, β·t) >= T for α >= 1), so when a variant with the same optimizer and no
  // more recompute and no more offload fits, this one cannot be faster.
  bool lighter_variant_fits(const Candidate& cand, int key) {
    const FeatureChoice& mine = cand.features;
    for (int k = 0; k < memory_keys_; ++k) {
      if (k == key) continue;
      const FeatureChoice& other = decoded_[static_cast<std::size_t>(k * overlap_variants_)];
      if (other.optimizer != mine.optimizer) continue;
      if (static_cast<int>(other.recompute) > static_cast<int>(mine.recompute)) continue;
      if (other.activation_offload && !mine.activation_offload) continue;
      if (memory_verdict(cand, k).fits) return true;
    }
    return false;
  }

  void evaluate(const Candidate& cand) {
    const model::FeatureSpec features = to_feature_spec(cand.features, problem_.base_features, parallel_);
    Row row{.candidate = cand,
            .step = evaluator_.step(ConfigView{.candidate = cand, .parallel = parallel_, .features = features}),
            .e2e = std::nullopt};
    TuneStats& st = result_.stats;
    st.evaluated += 1;
    if (row.step.fits) {
      st.feasible += 1;
      if (options_.e2e) row.e2e = estimate_e2e(*options_.e2e, cand.layout, row.step.step_time_s, problem_.topology);
    } else {
      st.infeasible_after_evaluation += 1;
    }
    result_.rows.push_back(row);
  }

  const TuneProblem& problem_;
  const TuneOptions& options_;
  const Evaluator& evaluator_;
  int variants_ = 0;
  int overlap_variants_ = 1;
  int memory_keys_ = 1;
  std::vector<FeatureChoice> decoded_;
  std::vector<std::optional<MemoryVerdict>> memory_;
  model::ParallelSpec parallel_;
  TuneResult result_;
};

}  // namespace

std::uint64_t TuneStats::removed_total() const {
  return std::accumulate(removed_configs.begin(), removed_configs.end(), std::uint64_t{0});
}

void TuneStats::merge(const TuneStats& o) {
  MOFASIM_CHECK(raw_layouts == o.raw_layouts && feature_variants == o.feature_variants,
                "merging tuner statistics of different spaces");
  shard_layouts += o.shard_layouts;
  shard_configs += o.shard_configs;
  for (std::size_t r = 0; r < removed_configs.size(); ++r) {
    removed_layouts[r] += o.removed_layouts[r];
    removed_configs[r] += o.removed_configs[r];
  }
  memory_checks += o.memory_checks;
  memory_pruned += o.memory_pruned;
  evaluated += o.evaluated;
  infeasible_after_evaluation += o.infeasible_after_evaluation;
  feasible += o.feasible;
}

void rank_rows(TuneResult& result) {
  result.ranking.clear();
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    if (result.rows[i].step.fits) result.ranking.push_back(i);
  }
  const std::vector<Row>& rows = result.rows;
  std::sort(result.ranking.begin(), result.ranking.end(), [&rows](std::size_t a, std::size_t b) {
    const double oa = rows[a].objective();
    const double ob = rows[b].objective();
    if (oa != ob) return oa < ob;
    return rows[a].candidate.id < rows[b].candidate.id;
  });
}

TuneResult tune(const TuneProblem& problem, const TuneOptions& options, const Evaluator& evaluator) {
  validate(problem, options);
  if (!evaluator.step) throw std::invalid_argument("tune: the evaluator has no step function");
  const Axes axes = build_axes(problem, options);
  const std::vector<Factorisation> facts = factorisations(axes, problem.topology.gpus);
  const std::uint64_t per_fact = axes.per_factorisation();
  const std::uint64_t raw_layouts = facts.size() * per_fact;
  if (raw_layouts > kMaxRawLayouts) {
    throw SearchSpaceTooLarge("the search space has " + std::to_string(raw_layouts) + " layouts (" +
                              std::to_string(facts.size()) + " (t, c, p, d) factorisations of " +
                              std::to_string(problem.topology.gpus) + " GPUs x " + std::to_string(per_fact) +
                              " ep/micro-batch/schedule choices), over the limit of " + std::to_string(kMaxRawLayouts) +
                              "; use fewer GPUs or fix some axes of the search");
  }
  const auto shard_index = static_cast<std::uint64_t>(options.shard.index);
  const auto shard_count = static_cast<std::uint64_t>(options.shard.count);
  const std::uint64_t shard_total = raw_layouts / shard_count + (shard_index < raw_layouts % shard_count ? 1 : 0);
  const auto threads = static_cast<std::uint64_t>(options.threads);
  const std::size_t ne = axes.ep.size();
  const std::size_t nb = axes.micro_batch.size();

  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint64_t> evaluated{0};
  // Worker w takes the shard's layouts whose shard-local ordinal is w modulo `threads`.
  auto run = [&](Worker& worker, std::uint64_t w, bool reports) {
    std::uint64_t since_report = 0;
    for (std::uint64_t index = shard_index; index < raw_layouts; index += shard_count) {
      const std::uint64_t ordinal = index / shard_count;
      if (ordinal % threads != w) continue;
      const Factorisation& fc = facts[index / per_fact];
      std::uint64_t rest = index % per_fact;
      const std::size_t b = rest % nb;
      rest /= nb;
      const std::size_t e = rest % ne;
      const auto& [schedule, vpp] = axes.schedule_vpp[rest / ne];
      const Layout layout{.tp = fc.tp,
                          .cp = fc.cp,
                          .pp = fc.pp,
                          .vpp = vpp,
                          .ep = axes.ep[e],
                          .dp = fc.dp,
                          .micro_batch = axes.micro_batch[b],
                          .schedule = schedule};
      const std::uint64_t before = worker.result().stats.evaluated;
      worker.run_layout(layout, index);
      evaluated.fetch_add(worker.result().stats.evaluated - before, std::memory_order_relaxed);
      done.fetch_add(1, std::memory_order_relaxed);
      if (reports && options.progress && ++since_report == kProgressEvery) {
        since_report = 0;
        options.progress(Progress{.layouts_done = done.load(), .layouts_total = shard_total, .evaluated = evaluated.load()});
      }
    }
  };

  std::vector<Worker> workers;
  workers.reserve(threads);
  for (std::uint64_t w = 0; w < threads; ++w) workers.emplace_back(problem, options, evaluator);
  {
    // Worker w's share is fixed by w, so a thread the system refuses is not lost: the calling
    // thread runs the shares of every worker that did not start (rows are sorted by id below).
    std::vector<std::jthread> pool;
    std::uint64_t started = 1;
    for (; started < threads; ++started) {
      try {
        pool.emplace_back([&run, &workers, w = started] { run(workers[w], w, false); });
      } catch (const std::system_error&) {
        break;
      }
    }
    run(workers[0], 0, true);
    for (std::uint64_t w = started; w < threads; ++w) run(workers[w], w, false);
  }

  TuneResult result = std::move(workers[0].result());
  result.stats.raw_layouts = raw_layouts;
  for (std::uint64_t w = 1; w < threads; ++w) {
    TuneResult& part = workers[w].result();
    part.stats.raw_layouts = raw_layouts;
    result.stats.merge(part.stats);
    result.rows.insert(result.rows.end(), part.rows.begin(), part.rows.end());
    result.pruned.insert(result.pruned.end(), part.pruned.begin(), part.pruned.end());
  }
  TuneStats& st = result.stats;
  st.raw_configs = raw_layouts * static_cast<std::uint64_t>(st.feature_variants);
  MOFASIM_CHECK(st.shard_layouts == shard_total, "tuner shard enumerated the wrong number of layouts");
  MOFASIM_CHECK(st.shard_configs == st.removed_total() + st.memory_pruned + st.evaluated,
                "tuner counts do not add up to the shard's configurations");
  if (threads > 1) {
    auto by_id = [](const auto& a, const auto& b) { return a.candidate.id < b.candidate.id; };
    std::sort(result.rows.begin(), result.rows.end(), by_id);
    std::sort(result.pruned.begin(), result.pruned.end(), by_id);
  }
  rank_rows(result);
  if (options.progress) {
    options.progress(Progress{.layouts_done = st.shard_layouts, .layouts_total = shard_total, .evaluated = st.evaluated});
  }
  return result;
}

}  // namespace mofasim::tuner
