// Korthikanti and Megatron activation accountings (see activation_reference.h).
#include "model/activation_reference.h"

#include <algorithm>
#include <stdexcept>

#include "model/shape.h"

namespace mofasim::model {

double korthikanti_layer_activation_bytes(const GptActivationShape& shape) {
  if (!(shape.seq > 0) || !(shape.micro_batch > 0) || !(shape.hidden > 0) || !(shape.heads > 0) || shape.tp < 1) {
    throw std::invalid_argument("GptActivationShape: seq, micro_batch, hidden, heads must be > 0 and tp >= 1");
  }
  const double sbh = shape.seq * shape.micro_batch * shape.hidden;
  const double t = shape.tp;
  const bool sp = shape.sequence_parallel;
  const double scores = 5 * shape.heads * shape.seq / (shape.hidden * t);  // softmax, mask, dropout, QK^T
  switch (shape.recompute) {
    case RecomputeKind::kNone: return sbh * ((sp ? 34 / t : 10 + 24 / t) + scores);
    case RecomputeKind::kSelective: return sbh * (sp ? 34 / t : 10 + 24 / t);
    case RecomputeKind::kFull: return 2 * sbh / (sp ? t : 1);
  }
  return 0;
}

double megatron_first_stage_activation_bytes(const ModelSpec& model, const ParallelSpec& parallel,
                                             RecomputeKind recompute) {
  validate_model(model);
  validate_parallel(model, parallel);
  const double s = model.seq_length;
  const double b = parallel.micro_batch;
  const double h = model.hidden_size;
  const double t = parallel.tp;
  const double p = parallel.pp;
  const double v = parallel.vpp;
  const double L = model.num_layers;
  const double V = model.vocab_size;
  const double sbh = s * b * h;
  const bool sp_selective = parallel.sequence_parallel && recompute == RecomputeKind::kSelective;

  const double per_layer = sp_selective ? sbh * (18 + 4.0 * model.ffn_hidden_size / h) : sbh * (10 + 24 / t);
  double total = per_layer * L + 8 * s * b * p + sbh * p;  // layers, input ids, embedding dropout mask
  if (parallel.vpp > 1) {
    total *= 1 + (p - 1) / (p * v);
  } else if (parallel.pp > 1) {
    total *= std::min(1.0, parallel.microbatches() / p);
  }
  if (parallel.pp == 1) {
    total += sp_selective ? 4 * sbh * (1 + V / h) : 2 * (s * b * V / t + sbh);
  }
  return sp_selective ? total / t : total * 1.05;
}

}  // namespace mofasim::model
