// InternEvo's ZeRO-1 owners (see zero_broadcast.h).
#include "model/zero_broadcast.h"

#include <cmath>
#include <numeric>

#include "model/params.h"
#include "model/shape.h"

namespace mofasim::model {

int zero_broadcast_owners(std::span<const double> tensors, int ranks) {
  if (tensors.empty()) return 0;
  const double total = std::accumulate(tensors.begin(), tensors.end(), 0.0);
  // avg_param_num = total_param_num * 1.0 // zero1_size; a rank closes once it holds more than 1.01 x that.
  const double line = std::floor(total / ranks) * 1.01;
  double held = 0;
  int rank = 0;
  int first = -1;
  for (double t : tensors) {
    held += t;
    if (held > line && rank < ranks - 1) {
      ++rank;  // the crossing tensor opens the next rank, whose count starts again from zero
      held = 0;
    }
    if (first < 0) first = rank;
  }
  // Every rank from the first owner to the last one got at least the tensor that opened it.
  return rank - first + 1;
}

LayerTensors layer_tensors(const ModelSpec& model, const ParallelSpec& parallel, int layer) {
  const LayerParams p = layer_params(model, layer);
  const double h = model.hidden_size;
  const double tp = parallel.tp;
  const double norm = h * norm_vectors(model.norm);
  const double v_dim = model.attention == AttentionKind::kMla ? model.mla.v_head_dim : head_dim(model);
  const double out_proj = model.num_attention_heads * v_dim * h;
  LayerTensors t;
  t.dense = {norm, (p.attention - out_proj) / tp, out_proj / tp, norm};
  const int gemms = ffn_gemms(model.mlp);
  if (!model.is_moe_layer(layer)) {
    for (int g = 0; g < gemms; ++g) t.dense.push_back(h * model.ffn_hidden_size / tp);
    return t;
  }
  t.dense.push_back(p.router);
  if (model.moe.num_shared_experts > 0) {
    for (int g = 0; g < gemms; ++g) t.dense.push_back(h * shared_ffn(model) / tp);
  }
  const int local = model.moe.num_experts / parallel.ep;
  const double expert_tensor = h * model.moe.expert_ffn_hidden_size / parallel.etp;
  t.expert.assign(static_cast<std::size_t>(local * gemms), expert_tensor);
  return t;
}

}  // namespace mofasim::model
