// Megatron's checks on a rank order against the parallel sizes: parallel_state.py builds the
// dense groups with RankGenerator(tp, ep=1, dp, pp, cp, order) and the expert groups with
// RankGenerator(etp, ep, edp, pp, cp=1, order); each generator refuses an order that leaves out a
// dimension of size > 1 in it (RuntimeError "The size of (cp) is (2), but you haven't specified
// the order"). Then it asserts
//   order.endswith("pp") or pp == 1 or edp == dp
//   (both generators give the same PP groups).
// RankGenerator accepts any permutation of the names, so these are the only refusals. The last two
// are applied with ep > 1 only: Megatron builds the expert groups for every model, so it
// refuses even a dense run in Meta's Llama 3 order (tp-cp-ep-pp-dp) with cp > 1 and pp > 1; with
// ep = 1 the Placement reduces expert gradients over the dense dp·cp group instead, and the
// order is taken as Meta's framework takes it.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "topology/placement.h"

namespace mofasim::topology {

namespace {

// The larger of a dimension's sizes in the dense and the expert generator (1 when both are 1).
int size_in_either_generator(const ParallelSizes& sizes, ParallelDim d) {
  const int folded = sizes.tp * sizes.cp * sizes.dp;
  const int divisor = sizes.ep * sizes.expert_tp();
  const int edp = divisor > 0 && folded % divisor == 0 ? sizes.expert_dp() : 1;  // sizes are checked apart
  switch (d) {
    case ParallelDim::kTp: return std::max(sizes.tp, sizes.expert_tp());
    case ParallelDim::kCp: return sizes.cp;
    case ParallelDim::kEp: return sizes.ep;
    case ParallelDim::kDp: return std::max(sizes.dp, edp);
    case ParallelDim::kPp: return sizes.pp;
  }
  return 1;
}

}  // namespace

void check_order_for_sizes(const ParallelSizes& sizes, const RankOrder& order) {
  const std::string text = order.to_string();
  for (ParallelDim d : order.dims()) {
    const int size = size_in_either_generator(sizes, d);
    if (!order.names(d) && size != 1) {
      const std::string name(parallel_dim_name(d));
      throw std::invalid_argument("parallelism.rank_order: '" + text + "' leaves out " + name + ", whose size is " +
                                  std::to_string(size) +
                                  "; Megatron appends only the dimensions of size 1 an order leaves out");
    }
  }
  const int folded = sizes.tp * sizes.cp * sizes.dp;
  if (sizes.pp == 1 || sizes.experts_use_dense_dp() || folded % (sizes.ep * sizes.expert_tp()) != 0) return;  // sizes are checked apart
  const int edp = sizes.expert_dp();
  if (!order.ends_in_pp() && edp != sizes.dp) {
    throw std::invalid_argument("parallelism.rank_order: '" + text +
                                "' does not end in pp, so Megatron needs the expert-DP size tp*cp*dp/(ep*etp) = " +
                                std::to_string(edp) + " to equal dp = " + std::to_string(sizes.dp) +
                                " (the attention and MoE layers' data-parallel sizes must match)");
  }
  // PP stride in the dense layout (ep of size 1) and in the expert one (cp of size 1, dp = edp).
  int dense = 1;
  int expert = 1;
  for (ParallelDim d : order.dims()) {
    if (d == ParallelDim::kPp) break;
    dense *= d == ParallelDim::kTp ? sizes.tp : d == ParallelDim::kCp ? sizes.cp : d == ParallelDim::kDp ? sizes.dp : 1;
    expert *= d == ParallelDim::kTp ? sizes.expert_tp() : d == ParallelDim::kEp ? sizes.ep : d == ParallelDim::kDp ? edp : 1;
  }
  if (dense != expert) {
    throw std::invalid_argument("parallelism.rank_order: '" + text +
                                "' gives the attention and the MoE layers different pipeline groups (ranks " +
                                std::to_string(dense) + " vs " + std::to_string(expert) +
                                " apart); Megatron requires them to be the same");
  }
}

}  // namespace mofasim::topology
