// The raw space's axes, its (t, c, p, d) factorisations, feature decoding and the verdict of
// each constraint and pruning rule (see enumerate.h).
#include "sim/tuner/enumerate.h"

#include <algorithm>
#include <cstdint>

#include "model/spec.h"

namespace mofasim::tuner {
namespace {

// Divisors of n up to cap, ascending. Pairs (i, n / i) for i up to sqrt(n): n reaches 2^31 - 1
// (GPUs, experts), where trying every i up to n takes seconds and ++i would overflow.
std::vector<int> divisors(int n, int cap) {
  std::vector<int> low;
  std::vector<int> high;
  for (std::int64_t i = 1; i * i <= n; ++i) {
    if (n % i != 0) continue;
    low.push_back(static_cast<int>(i));
    if (i * i != n) high.push_back(static_cast<int>(n / i));
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  std::erase_if(low, [cap](int d) { return d > cap; });
  return low;
}

std::vector<int> sorted_unique(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

int toggle_size(Toggle t) { return t == Toggle::kSearch ? 2 : 1; }

// Digit `digit` of a Toggle axis: the only value for kOff/kOn, off then on for kSearch.
bool toggle_value(Toggle t, int digit) { return t == Toggle::kOn || (t == Toggle::kSearch && digit == 1); }

bool is_moe(const model::ModelSpec& m) { return m.is_moe(); }

// The data-parallel groups gradients are reduced over: dense weights over d·c, routed experts
// over t·c·d / e (Megatron's expert-data-parallel group with etp = 1).
bool has_dp_reduction(const Layout& l, const model::ModelSpec& m) {
  if (l.dp * l.cp > 1) return true;
  return is_moe(m) && l.tp * l.cp * l.dp / l.ep > 1;
}

bool has_effect(const Layout& l, const model::ModelSpec& m, int which) {
  switch (which) {
    case 0: return l.tp > 1;                     // TP overlap (MoFa(20))
    case 1: return l.cp > 1;                     // CP overlap (MoFa(21))
    case 2: return is_moe(m) && l.ep > 1;        // EP overlap (MoFa(22))
    case 3: return l.pp > 1;                     // PP overlap (MoFa(23))
    case 4: return has_dp_reduction(l, m);       // DP overlap (MoFa(24))
    default: return false;
  }
}

}  // namespace

Axes build_axes(const TuneProblem& problem, const TuneOptions& options) {
  const SearchSpace& s = options.space;
  const int n = problem.topology.gpus;
  Axes a;
  a.tp = s.tp.empty() ? divisors(n, n) : sorted_unique(s.tp);
  a.cp = s.cp.empty() ? divisors(n, n) : sorted_unique(s.cp);
  a.pp = s.pp.empty() ? divisors(n, n) : sorted_unique(s.pp);
  if (!s.ep.empty()) {
    a.ep = sorted_unique(s.ep);
  } else if (problem.model.is_moe()) {
    a.ep = divisors(problem.model.moe.num_experts, problem.model.moe.num_experts);
  } else {
    a.ep = {1};
  }
  a.micro_batch = s.micro_batch.empty() ? divisors(problem.global_batch, s.max_micro_batch) : sorted_unique(s.micro_batch);
  for (model::ScheduleKind kind : s.schedules) {
    if (kind == model::ScheduleKind::kInterleaved1F1B) {
      for (int v = 2; v <= s.max_vpp; ++v) a.schedule_vpp.emplace_back(kind, v);
    } else {
      a.schedule_vpp.emplace_back(kind, 1);
    }
  }
  return a;
}

std::vector<Factorisation> factorisations(const Axes& axes, int gpus) {
  std::vector<Factorisation> out;
  for (int t : axes.tp) {
    if (gpus % t != 0) continue;
    for (int c : axes.cp) {
      if ((gpus / t) % c != 0) continue;
      for (int p : axes.pp) {
        if (p > gpus / t / c) break;  // the axis is sorted: no larger p divides what is left
        if ((gpus / t / c) % p != 0) continue;
        out.push_back(Factorisation{.tp = t, .cp = c, .pp = p, .dp = gpus / t / c / p});
      }
    }
  }
  return out;
}

int feature_variants(const FeatureSearch& f) {
  return static_cast<int>(f.optimizer.size() * f.recompute.size()) * toggle_size(f.activation_offload) *
         toggle_size(f.tp_overlap) * toggle_size(f.cp_overlap) * toggle_size(f.ep_overlap) *
         toggle_size(f.pp_overlap) * toggle_size(f.dp_overlap);
}

FeatureChoice decode_features(int index, const FeatureSearch& f) {
  // Innermost digit first: DP, PP, EP, CP, TP overlap, offload, recompute, optimizer.
  auto take_toggle = [&index](Toggle t) {
    const int size = toggle_size(t);
    const int digit = index % size;
    index /= size;
    return toggle_value(t, digit);
  };
  FeatureChoice c;
  c.dp_overlap = take_toggle(f.dp_overlap);
  c.pp_overlap = take_toggle(f.pp_overlap);
  c.ep_overlap = take_toggle(f.ep_overlap);
  c.cp_overlap = take_toggle(f.cp_overlap);
  c.tp_overlap = take_toggle(f.tp_overlap);
  c.activation_offload = take_toggle(f.activation_offload);
  const int nr = static_cast<int>(f.recompute.size());
  c.recompute = f.recompute[static_cast<std::size_t>(index % nr)];
  index /= nr;
  c.optimizer = f.optimizer[static_cast<std::size_t>(index)];
  return c;
}

std::optional<Reason> layout_verdict(const Layout& l, const TuneProblem& problem, const TuneOptions& options) {
  const model::ModelSpec& m = problem.model;
  const PruneRules& rules = options.rules;
  // Constraints of MoFa(42) and of the schedules.
  if (m.num_attention_heads % l.tp != 0 || m.num_kv_heads % l.tp != 0) return Reason::kTpDividesHeads;
  if (!split_shape(m.num_layers, l.pp * l.vpp, options.space.layer_split)) return Reason::kLayerSplit;
  if (m.is_moe() ? (m.moe.num_experts % l.ep != 0 || (l.dp * l.cp) % l.ep != 0) : l.ep != 1) {
    return Reason::kExpertPlacement;
  }
  if (!model::batch_divides(problem.global_batch, l.micro_batch, l.dp)) return Reason::kBatchDivides;
  const int mb = microbatches(l, problem.global_batch);
  if (l.schedule == model::ScheduleKind::kInterleaved1F1B && mb % l.pp != 0) return Reason::kScheduleShape;
  if (l.schedule == model::ScheduleKind::kDualPipe && (l.pp % 2 != 0 || mb % 2 != 0 || mb < 2 * l.pp)) {
    return Reason::kScheduleShape;
  }
  // Pruning rules.
  if (rules.tp_within_node && l.tp > problem.topology.gpus_per_node) return Reason::kTpWithinNode;
  if (rules.microbatches_cover_pipeline && mb < l.pp) return Reason::kMicrobatchesCoverPipeline;
  if (rules.vpp_needs_pipeline && l.vpp > 1 && l.pp == 1) return Reason::kVppNeedsPipeline;
  if (rules.cp_needs_long_sequence && l.cp > 1 && m.seq_length < rules.cp_min_seq_length) {
    return Reason::kCpNeedsLongSequence;
  }
  // Interleaving needs a pipeline to interleave over: at p = 1 the schedule's virtual stages would
  // all sit on one rank and the step simulation cannot build its communicators. With the
  // vpp_needs_pipeline rule on such layouts are charged to it above; with it off (--no-rule all)
  // they are still removed, as a schedule-shape constraint, never evaluated.
  if (l.schedule == model::ScheduleKind::kInterleaved1F1B && l.pp == 1) return Reason::kScheduleShape;
  return std::nullopt;
}

std::optional<Reason> feature_verdict(const Layout& l, const FeatureChoice& f, const TuneProblem& problem,
                                      const TuneOptions& options) {
  const model::ModelSpec& m = problem.model;
  const FeatureSearch& s = options.features;
  const model::FeatureSpec& base = problem.base_features;
  const bool on[5] = {f.tp_overlap, f.cp_overlap, f.ep_overlap, f.pp_overlap, f.dp_overlap};
  const Toggle toggle[5] = {s.tp_overlap, s.cp_overlap, s.ep_overlap, s.pp_overlap, s.dp_overlap};
  const model::OverlapSpec* spec[5] = {&base.tp_overlap, &base.cp_overlap, &base.ep_overlap, &base.pp_overlap,
                                       &base.dp_overlap};
  if (options.rules.inert_feature) {
    // An overlap with no communication of its kind, or a distributed optimizer with nothing to
    // shard over, is the same configuration as its "off" twin, which is in the space.
    for (int k = 0; k < 5; ++k) {
      if (on[k] && toggle[k] == Toggle::kSearch && !has_effect(l, m, k)) return Reason::kInertFeature;
    }
    if (f.optimizer == OptimizerMode::kDistributed && !has_dp_reduction(l, m) &&
        std::find(s.optimizer.begin(), s.optimizer.end(), OptimizerMode::kGpu) != s.optimizer.end()) {
      return Reason::kInertFeature;
    }
  }
  if (options.rules.overlap_dominates) {
    // With α = β = 1 an overlapped pair costs max(x, y) <= x + y: "on" is never slower.
    for (int k = 0; k < 5; ++k) {
      if (!on[k] && toggle[k] == Toggle::kSearch && has_effect(l, m, k) && spec[k]->alpha == 1.0 &&
          spec[k]->beta == 1.0) {
        return Reason::kOverlapDominates;
      }
    }
  }
  return std::nullopt;
}

}  // namespace mofasim::tuner
