// Enumeration of the tuner's raw space and the per-point verdicts (constraint or pruning rule).
//
// The raw layout space is the product, in this order (outermost first):
//   (t, c, p) with t·c·p | N and d = N/(t·c·p)      — MoFa(42)'s t·c·p·d = N holds by construction
//   (schedule, v): v = 1 for every schedule but interleaved 1F1B, which takes v = 2 .. max_vpp
//   e   in the EP axis (divisors of the expert count; {1} for a dense model)
//   b   in the micro-batch axis (divisors of B up to max_micro_batch)
// An axis left empty in SearchSpace means every divisor of N (t, c, p). A layout's index is its
// position in this product, so shards and merges agree on it. Each layout carries
// feature_variants() feature choices, decoded mixed-radix (optimizer outermost, then recompute,
// offload, TP, CP, EP, PP, DP overlap). Allocation happens once per enumeration, never per point.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/tuner/search_space.h"

namespace mofasim::tuner {

struct Axes {
  std::vector<int> tp, cp, pp, ep, micro_batch;
  std::vector<std::pair<model::ScheduleKind, int>> schedule_vpp;  // (schedule, v)
  [[nodiscard]] std::uint64_t per_factorisation() const {
    return static_cast<std::uint64_t>(schedule_vpp.size()) * ep.size() * micro_batch.size();
  }
};
Axes build_axes(const TuneProblem& problem, const TuneOptions& options);

// Every (t, c, p, d) of the raw space, in enumeration order.
struct Factorisation {
  int tp = 1, cp = 1, pp = 1, dp = 1;
};
std::vector<Factorisation> factorisations(const Axes& axes, int gpus);

// Number of feature choices per layout (the product of the searched feature axes).
int feature_variants(const FeatureSearch& search);
// The index-th feature choice, 0 <= index < feature_variants(search).
FeatureChoice decode_features(int index, const FeatureSearch& search);

// The first constraint or enabled layout rule that removes `layout`, or nullopt when it stays.
std::optional<Reason> layout_verdict(const Layout& layout, const TuneProblem& problem, const TuneOptions& options);

// The first feature rule (inert, overlap dominance) that removes this feature choice on `layout`.
// The memory-saver rule needs memory verdicts and is applied by tune().
std::optional<Reason> feature_verdict(const Layout& layout, const FeatureChoice& features, const TuneProblem& problem,
                                      const TuneOptions& options);

}  // namespace mofasim::tuner
