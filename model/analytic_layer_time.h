// The closed form's layer term, MoFa(7) MoFa(8): the exposed time of each pass of one block (a
// transformer layer, the embedding, the head) from its op table and the α–β cost of its
// collectives in the priced per-rank plan (model/rank_plan.h), at one set of device rates.
#pragma once

#include "model/analytic_overlap.h"
#include "model/rank_plan.h"
#include "model/spec.h"

namespace mofasim::model {

// Exposed time of one pass (F, input-grad B or weight-grad W) of a layer or chunk, by kind.
struct PassTime {
  double compute = 0;
  double tp = 0;
  double cp = 0;
  double ep = 0;
  double a2a = 0;  // all-to-all seconds inside `ep` (what EP overlap pairs)
  double dp = 0;   // ZeRO-3 / FSDP: the layer's parameter all-gather left exposed by the prefetch
  [[nodiscard]] double total() const { return compute + tp + cp + ep + dp; }
  PassTime& operator+=(const PassTime& o) {
    compute += o.compute;
    tp += o.tp;
    cp += o.cp;
    ep += o.ep;
    a2a += o.a2a;
    dp += o.dp;
    return *this;
  }
  friend PassTime operator*(double k, PassTime t) {
    return {k * t.compute, k * t.tp, k * t.cp, k * t.ep, k * t.a2a, k * t.dp};
  }
};

struct LayerTime {
  PassTime f;  // forward, MoFa(7)
  PassTime b;  // input-gradient backward (+ recompute), MoFa(8)
  PassTime w;  // weight-gradient backward
  [[nodiscard]] PassTime backward() const {
    PassTime t = b;
    t += w;
    return t;
  }
  LayerTime& operator+=(const LayerTime& o) {
    f += o.f;
    b += o.b;
    w += o.w;
    return *this;
  }
};
inline LayerTime scaled(double k, const LayerTime& t) { return {k * t.f, k * t.b, k * t.w}; }

// The rates a block is timed at.
struct LayerRates {
  const HardwareSpec& hw;
  const FeatureSpec& f;
  double inv_mub;
  int cp;
};

// MoFa(7) MoFa(8) for one block, with MoFa(17) MoFa(18) MoFa(19) MoFa(20) MoFa(21) MoFa(22) and, for
// transformer layers, MoFa(29) MoFa(30) MoFa(31) MoFa(32) MoFa(33) MoFa(34) MoFa(35).
// Throws std::invalid_argument when offload is on without D2H/H2D bandwidths.
LayerTime time_block(const PlanBlock& block, const LayerRates& x, bool transformer_layer);

// A MoE layer's passes split at its EP all-to-alls into the modules DualPipe pairs
// (analytic_overlap.h, dualpipe_ep_pair_seconds): compute by op position (before expert fc1, fc1 to
// fc2, after fc2; the backward's input and weight gradients and recompute together), the
// all-to-alls by the op they attach to. `t` is time_block's result for the same block: what its
// passes hold beyond these parts (exposed TP / CP / FSDP gathers, offload copies) runs outside the
// windows, added to the forward's post and the backward's first module.
EpPairParts ep_pair_parts(const PlanBlock& block, const LayerRates& x, const LayerTime& t);

}  // namespace mofasim::model
