// Sliding-window attention (see attention_window.h).
#include "model/attention_window.h"

#include <stdexcept>
#include <string>

#include "model/stage_layout.h"

namespace mofasim::model {

bool is_window_layer(const ModelSpec& model, int layer) {
  if (model.window_size <= 0) return false;
  if (model.window_attn_skip_freq <= 0) return true;
  return (layer + 1) % model.window_attn_skip_freq != 0;  // Megatron counts layers from 1
}

double window_pair_ratio(double seq, double window) {
  if (!(window > 0) || window >= seq) return 1;
  return (seq * window - window * (window - 1) / 2) / (seq * (seq + 1) / 2);
}

double attention_window_share(const ModelSpec& model) {
  if (model.window_size <= 0 || model.num_layers <= 0) return 1;
  const double windowed = window_pair_ratio(model.seq_length, model.window_size);
  double sum = 0;
  for (int l = 0; l < model.num_layers; ++l) sum += is_window_layer(model, l) ? windowed : 1;
  return sum / model.num_layers;
}

void validate_window_layout(const ModelSpec& model, const ParallelSpec& parallel) {
  const int n = model.window_attn_skip_freq;
  if (model.window_size <= 0 || n <= 1 || parallel.pp * parallel.vpp == 1) return;
  for (const ChunkLayers& c : chunk_layers(model, parallel)) {
    if (c.num_layers % n != 0) {
      throw std::invalid_argument("model.window_attn_skip_freq: every pipeline chunk must hold a multiple of " +
                                  std::to_string(n) + " layers (the same mix of windowed and full layers), chunk " +
                                  std::to_string(c.chunk) + " holds " + std::to_string(c.num_layers));
    }
  }
}

}  // namespace mofasim::model
