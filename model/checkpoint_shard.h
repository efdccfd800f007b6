// What one GPU writes into a checkpoint: its share of the model state, from the sharding plan.
//
// A checkpoint holds every parameter once with its weight, fp32 master copy and Adam moments
// (gradients are not saved). Replicas of a shard are not written twice: as Megatron's distributed
// checkpoint with fully parallel save, the DP ranks holding the same weights split their writing
// evenly. So a GPU of pipeline rank `stage` writes
//   (TP-sharded dense params + replicated params / tp) * (weight + master + moments) / (dp * cp)
//   + expert params * (weight + master + moments) / expert-DP size,
// with the parameters it holds (TP/EP/PP-sharded, model::stage_gpu_params) and the bytes per
// parameter of model::bytes_per_param. The same share whether or not the optimizer state is
// sharded (distributed optimizer): only who holds it in memory differs. A DualPipe rank holds two
// chunks and writes both.
#pragma once

#include "model/spec.h"

namespace mofasim::model {

// Bytes one GPU of pipeline rank `stage` writes per checkpoint (and reads back on restore).
// Throws std::invalid_argument on a bad stage (as stage_gpu_params).
double checkpoint_bytes_per_gpu(const ModelSpec& model, const ParallelSpec& parallel, const FeatureSpec& features,
                                int stage);

}  // namespace mofasim::model
