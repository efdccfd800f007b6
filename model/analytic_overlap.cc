// MoFa overlap closed forms (see analytic_overlap.h).
#include "model/analytic_overlap.h"

#include <algorithm>

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

double offload_seconds(double layer, double copy, double alpha, double beta) {
  return overlap_window_seconds(layer, copy, alpha, beta);  // MoFa(33) MoFa(34) MoFa(35)
}

}  // namespace mofasim::model
