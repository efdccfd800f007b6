#include "model/checkpoint_shard.h"

#include "model/memory.h"
#include "model/params.h"

namespace mofasim::model {

double checkpoint_bytes_per_gpu(const ModelSpec& model, const ParallelSpec& parallel, const FeatureSpec& features,
                                int stage) {
  const GpuParams params = stage_gpu_params(model, parallel, stage);
  const BytesPerParam bpp = bytes_per_param(features);
  const double per_param = bpp.weight + bpp.master + bpp.moments;
  const ShardGroups writers = optimizer_shard_groups(parallel);
  // Norms and routers are replicated over TP as well: the TP peers split them too.
  const double dense = params.dense_sharded + params.replicated / parallel.tp;
  return dense * per_param / writers.dense_dp + params.expert * per_param / writers.expert_dp;
}

}  // namespace mofasim::model
