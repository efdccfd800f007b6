// The gradient buckets MoFa(24) at v = 1 replays (see analytic_dp_buckets.h).
#include "model/analytic_dp_buckets.h"

#include <algorithm>
#include <cmath>

#include "model/attention_window.h"
#include "model/memory.h"

namespace mofasim::model {

void dp_buckets(const RankPlan& plan, const ModelSpec& model, const FeatureSpec& f, const DpBlockBackward& bt,
                int r, double inv_mub, BucketedDpReplay& replay) {
  const RankDp& d = plan.dp[static_cast<std::size_t>(r)];
  const GpuParams& gp = plan.memory.stages[static_cast<std::size_t>(r)].params;
  const double dense_bpp = gp.dense() > 0 ? d.dense_grad_bytes / gp.dense() : 0;
  const double expert_bpp = gp.expert > 0 ? d.expert_grad_bytes / gp.expert : 0;
  const double total_bytes = d.dense_grad_bytes + d.expert_grad_bytes;
  const int calls = std::max(d.dense_grad_buckets + d.expert_grad_buckets, 1);
  const double latency = d.grad.latency / calls;
  const double bandwidth_per_byte = total_bytes > 0 ? d.grad.bandwidth * inv_mub / total_bytes : 0;
  const double cap = f.dp_bucket_bytes;
  const bool full = f.recompute == RecomputeKind::kFull;
  for (const bool expert : {false, true}) {
    if ((expert ? d.expert_grad_bytes : d.dense_grad_bytes) <= 0) continue;  // no bucket in this group
    double level = 0;  // backward seconds done
    double open = 0;   // bytes in the open bucket
    double carried = 0;
    auto close = [&](double bytes, double ready) {
      replay.add(DpBucket{.ready = ready, .latency = latency, .bandwidth = bytes * bandwidth_per_byte});
    };
    // `n` blocks alike (same bytes, same backward) in a row, closing the buckets they fill: as n
    // calls of GradientBuckets::add, each bucket closing on the block that reaches the cap.
    auto add = [&](const PlanBlock& b, double backward, int n) {
      const double bytes = expert ? b.expert_params * expert_bpp : b.dense_params * dense_bpp;
      if (bytes <= 0) {
        level += n * backward;
        return;
      }
      while (n > 0) {
        // Blocks until the open bucket reaches the cap (never with cap <= 0: a single bucket).
        const double need = cap > 0 ? std::max(1.0, std::ceil((cap - open) / bytes)) : INFINITY;
        const bool closes = need <= n;
        const int run = closes ? static_cast<int>(need) : n;
        level += run * backward;
        open += run * bytes;
        carried += run * bytes;
        n -= run;
        if (closes) {
          close(open, level);
          open = 0;
        }
      }
    };
    {
      const PlanChunk& c = plan.chunk(r, 0);
      if (c.head) add(plan.head, bt.head, 1);
      // The layers from last to first, in runs of one type, recompute status and (window_mixed)
      // attention span.
      const auto span = [&](int layer) {
        return plan.window_mixed() && is_window_layer(model, layer) ? RankPlan::kWindowSpan : RankPlan::kFullSpan;
      };
      int l = c.first_layer + c.num_layers - 1;
      while (l >= c.first_layer) {
        const bool moe = model.is_moe_layer(l);
        const bool kept = full && !full_recompute_applies(f, l - c.first_layer);
        const int s = span(l);
        int n = 1;
        if (!full && !model.is_moe() && !plan.window_mixed()) {
          n = l - c.first_layer + 1;  // all dense and kept alike: one run
        } else {
          while (l - n >= c.first_layer && model.is_moe_layer(l - n) == moe &&
                 (full && !full_recompute_applies(f, l - n - c.first_layer)) == kept && span(l - n) == s) {
            ++n;
          }
        }
        const LayerTypeBackward& b = bt.span[static_cast<std::size_t>(s)];
        add(plan.layer_block(model, l), moe ? (kept ? b.moe_kept : b.moe) : (kept ? b.dense_kept : b.dense), n);
        l -= n;
      }
      if (c.embedding) add(plan.embedding, bt.embedding, 1);
    }
    const double rest = (expert ? d.expert_grad_bytes : d.dense_grad_bytes) - carried;
    if (rest > 0) open += rest;
    if (open > 0) close(open, level);  // the open bucket: ready when the backward ends
  }
}

}  // namespace mofasim::model
