// MoFa overlap closed forms (see analytic_overlap.h).
#include "model/analytic_overlap.h"

#include <algorithm>
#include <cmath>

#include "sim/units/check.h"

namespace mofasim::model {

double overlap_window_seconds(double compute, double comm, double alpha, double beta) {
  // Whichever side ends first ran slowed the whole time; the other finishes alone at full rate.
  if (beta * comm <= alpha * compute) return compute + beta * comm * (1 - 1 / alpha);
  return comm + alpha * compute * (1 - 1 / beta);
}

double tp_overlap_seconds(double compute, double comm, int chunks, double alpha, double beta) {
  MOFASIM_CHECK(chunks >= 1, "tp_overlap_seconds: chunks must be >= 1");
  const double s = chunks;
  // MoFa(20)
  return compute / s + comm / s + (s - 1) * overlap_window_seconds(compute / s, comm / s, alpha, beta);
}

double cp_ring_seconds(double attention, double p2p_step, int cp, bool overlap, double alpha, double beta) {
  MOFASIM_CHECK(cp >= 1, "cp_ring_seconds: cp must be >= 1");
  const double steps = cp - 1;
  if (!overlap) return attention + steps * p2p_step;
  const double block = attention / cp;
  // MoFa(21)
  return steps * overlap_window_seconds(block, p2p_step, alpha, beta) + block;
}

double ep_pair_seconds(double forward_compute, double forward_a2a, double backward_compute, double backward_a2a,
                       double alpha, double beta) {
  // MoFa(22)
  return overlap_window_seconds(forward_compute, backward_a2a, alpha, beta) +
         overlap_window_seconds(backward_compute, forward_a2a, alpha, beta);
}

double dualpipe_ep_pair_seconds(const EpPairParts& p, double alpha, double beta) {
  // MoFa(22), one window per module pair in DualPipe's order
  return p.f_post + p.b_first + overlap_window_seconds(p.f_pre, p.b_combine, alpha, beta) +
         overlap_window_seconds(p.b_mid, p.f_dispatch, alpha, beta) +
         overlap_window_seconds(p.f_mid, p.b_dispatch, alpha, beta) +
         overlap_window_seconds(p.b_last, p.f_combine, alpha, beta);
}

double pp_overlap_seconds(double step, double pp_hop, double alpha, double beta) {
  return overlap_window_seconds(step, pp_hop, alpha, beta);  // MoFa(23)
}

double dp_overlap_exposed_seconds(double comm_per_chunk, double compute_per_chunk, int chunks, double alpha,
                                  double beta) {
  MOFASIM_CHECK(chunks >= 1, "dp_overlap_exposed_seconds: chunks must be >= 1");
  // MoFa(24): chunks 1..v-1 hide under compute, the last one is exposed.
  const double hidden_steps = chunks - 1;
  return comm_per_chunk +
         hidden_steps * (overlap_window_seconds(compute_per_chunk, comm_per_chunk, alpha, beta) - compute_per_chunk);
}

BucketedDpReplay::BucketedDpReplay(double backward, double alpha, double beta)
    : backward_(backward), alpha_(alpha), beta_(beta), inv_alpha_(1 / alpha), inv_beta_(1 / beta), compute_end_(backward) {
  MOFASIM_CHECK(alpha >= 1 && beta >= 1, "BucketedDpReplay: alpha and beta must be >= 1");
}

// Runs both streams until the DP stream is idle and, when `until` >= 0, the backward has reached
// `until` (or ended). Each pass ends the backward, the running bucket's latency or the bucket, or
// reaches `until`: at most 3 passes per bucket plus one.
void BucketedDpReplay::run(double until) {
  for (;;) {
    const bool computing = done_ < backward_;
    const bool waiting = until >= 0 && computing && done_ < until;
    if (!busy_ && !waiting) return;
    if (!computing && !busy_) return;
    const bool sharing = busy_ && latency_ <= 0 && computing;  // both in their fluid phase
    // The backward runs to its end, or to `until` while the stream is idle.
    const double target = !busy_ && until >= 0 ? std::min(backward_, until) : backward_;
    const double dt_compute = computing ? (target - done_) * (sharing ? alpha_ : 1) : INFINITY;
    const double dt_comm = !busy_ ? INFINITY : latency_ > 0 ? latency_ : bandwidth_ * (sharing ? beta_ : 1);
    const double dt = std::min(dt_compute, dt_comm);
    t_ += dt;
    if (dt_compute <= dt_comm) {
      done_ = target;
      if (done_ >= backward_) compute_end_ = t_;
    } else if (computing) {
      done_ += sharing ? dt * inv_alpha_ : dt;
    }
    if (!busy_) continue;
    if (dt_comm <= dt_compute) {  // the running term ends
      if (latency_ > 0) {
        latency_ = 0;
        busy_ = bandwidth_ > 0;
      } else {
        bandwidth_ = 0;
        busy_ = false;
      }
    } else if (latency_ > 0) {
      latency_ -= dt;
    } else {
      bandwidth_ -= sharing ? dt * inv_beta_ : dt;
    }
  }
}

void BucketedDpReplay::add(const DpBucket& bucket) {
  run(bucket.ready);  // the stream free and the bucket ready
  latency_ = bucket.latency;
  bandwidth_ = bucket.bandwidth;
  busy_ = latency_ > 0 || bandwidth_ > 0;
}

double BucketedDpReplay::finish() {
  run(-1);
  if (done_ < backward_) {  // no bucket left: the backward runs alone to its end
    t_ += backward_ - done_;
    done_ = backward_;
    compute_end_ = t_;
  }
  return std::max(t_, compute_end_);
}

double bucketed_dp_overlap_seconds(const DpBucket* buckets, int count, double backward, double alpha, double beta) {
  BucketedDpReplay replay(backward, alpha, beta);
  for (int i = 0; i < count; ++i) replay.add(buckets[i]);
  return replay.finish();
}

double offload_seconds(double layer, double copy, double alpha, double beta) {
  return overlap_window_seconds(layer, copy, alpha, beta);  // MoFa(33) MoFa(34) MoFa(35)
}

}  // namespace mofasim::model
