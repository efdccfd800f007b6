// InternEvo's hybrid ZeRO-1 (DpParamSync::kBroadcast): which ZeRO ranks own parameters, and so how
// many broadcasts bring every rank up to date after the update.
//
// InternLM's HybridZeroOptimizer with overlapped communication (internlm/solver/optimizer/
// hybrid_zero_optim.py and utils.py ParamBcastSyncHandler, InternLM/InternLM@0047876's era) assigns
// whole parameter tensors to the ranks of its ZeRO group in module order (embedding, the layers, the
// final norm, the head), moving on to the next rank once the tensors given to the current one exceed
// 1.01 x (total / ranks); the tensor that crosses the line goes to the next rank, which starts its
// count from zero. After its update every owner broadcasts its flat shard to the group
// (broadcast_params: one dist.broadcast per owner, ranks without parameters skipped). A large
// group therefore has far fewer owners than ranks: InternLM-7B's 162 large tensors cap it at 162.
#pragma once

#include <span>
#include <vector>

#include "model/spec.h"

namespace mofasim::model {

// Ranks that own at least one tensor when `tensors` (parameter counts, in module order) are
// assigned to `ranks` ZeRO ranks as above. 0 for no tensors; ranks must be >= 1.
int zero_broadcast_owners(std::span<const double> tensors, int ranks);

// One transformer layer's parameter tensors on one GPU, in module order, split by the DP group
// that owns them: dense (norm, the attention's fused input projection, its output projection,
// norm, the MLP's GEMM weights one tensor each, the router, the shared experts) and expert (each
// local routed expert's GEMM weights). Tensor-parallel weights divided by tp, experts by etp;
// biases are left out (they move no owner line).
struct LayerTensors {
  std::vector<double> dense;
  std::vector<double> expert;
};
LayerTensors layer_tensors(const ModelSpec& model, const ParallelSpec& parallel, int layer);

}  // namespace mofasim::model
