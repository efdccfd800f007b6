// MoFa overlap closed forms (see analytic_overlap.h).
#include "model/analytic_overlap.h"

#include <algorithm>

#include "sim/units/check.h"

namespace mofasim::model {

double tp_overlap_seconds(double compute, double comm, int chunks, double alpha, double beta) {
  MOFASIM_CHECK(chunks >= 1, "tp_overlap_seconds: chunks must be >= 1");
  const double s = chunks;
  // MoFa(20)
  return compute / s + comm / s + (s - 1) * std::max(alpha * compute / s, beta * comm / s);
}

double cp_ring_seconds(double attention, double p2p_step, int cp, bool overlap, double alpha, double beta) {
  MOFASIM_CHECK(cp >= 1, "cp_ring_seconds: cp must be >= 1");
  const double steps = cp - 1;
  if (!overlap) return attention + steps * p2p_step;
  const double block = attention / cp;
  // MoFa(21)
  return steps * std::max(alpha * block, beta * p2p_step) + block;
}

double ep_pair_seconds(double forward_compute, double forward_a2a, double backward_compute, double backward_a2a,
                       double alpha, double beta) {
  // MoFa(22)
  return std::max(alpha * forward_compute, beta * backward_a2a) + std::max(alpha * backward_compute, beta * forward_a2a);
}

double pp_overlap_seconds(double step, double pp_hop, double alpha, double beta) {
  return std::max(alpha * step, beta * pp_hop);  // MoFa(23)
}

double dp_overlap_exposed_seconds(double comm_per_chunk, double compute_per_chunk, int chunks, double alpha,
                                  double beta) {
  MOFASIM_CHECK(chunks >= 1, "dp_overlap_exposed_seconds: chunks must be >= 1");
  // MoFa(24): chunks 1..v-1 hide under compute, the last one is exposed.
  const double hidden_steps = chunks - 1;
  return comm_per_chunk +
         hidden_steps * (std::max(alpha * compute_per_chunk, beta * comm_per_chunk) - compute_per_chunk);
}

double offload_seconds(double layer, double copy, double alpha, double beta) {
  return std::max(alpha * layer, beta * copy);  // MoFa(33) MoFa(34) MoFa(35)
}

}  // namespace mofasim::model
