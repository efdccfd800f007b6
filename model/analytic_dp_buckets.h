// The closed form's gradient buckets at v = 1 (MoFa(24) with buckets for chunks), fed to
// BucketedDpReplay (model/analytic_overlap.h).
#pragma once

#include <array>

#include "model/analytic_overlap.h"
#include "model/rank_plan.h"
#include "model/spec.h"

namespace mofasim::model {

// One micro-batch's backward of a dense and a MoE layer alone (seconds, recompute included).
struct LayerTypeBackward {
  double dense = 0;
  double moe = 0;
  double dense_kept = 0;  // a layer full recompute leaves out
  double moe_kept = 0;
};

// One micro-batch's backward of each block type alone. The transformer layers by attention span
// (RankPlan::kFullSpan, kWindowSpan) when RankPlan::window_mixed; otherwise every layer reads
// span[kFullSpan], the model's mean span.
struct DpBlockBackward {
  double head = 0;  // with the MTP modules
  double embedding = 0;
  std::array<LayerTypeBackward, 2> span{};
};

// Rank r's gradient buckets at v = 1 in the order the DP stream reduces them, for
// BucketedDpReplay: the blocks in the order its last backward finishes them (the head, the layers
// from last to first, the embedding) fill the buckets as model::GradientBuckets does; each bucket
// is ready once the backward of its last block is done (the bytes no block carries ride in the
// last bucket). The step simulation issues every dense bucket before the expert ones on the one DP
// stream (sim/executor/generate_dp.cc): so are they listed. Each bucket pays one latency of the
// rank's priced reduction and its bytes' share of the bandwidth term. Each is fed to `replay` as
// it closes (no storage: time_step does not allocate).
void dp_buckets(const RankPlan& plan, const ModelSpec& model, const FeatureSpec& f, const DpBlockBackward& bt,
                int r, double inv_mub, BucketedDpReplay& replay);

}  // namespace mofasim::model
