// Sliding-window attention (see attention_window.h).
#include "model/attention_window.h"

#include <cstdint>

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

int windowed_layers(const ModelSpec& model, int first, int count) {
  int n = 0;
  for (int l = first; l < first + count; ++l) n += is_window_layer(model, l) ? 1 : 0;
  return n;
}

bool window_mix_differs(const ModelSpec& model, const ParallelSpec& parallel) {
  if (model.window_size <= 0 || model.window_size >= model.seq_length) return false;
  const std::int64_t total = windowed_layers(model, 0, model.num_layers);
  if (total == 0 || total == model.num_layers) return false;
  for (const ChunkLayers& c : chunk_layers(model, parallel)) {
    // windowed / num_layers == total / L, in integers
    if (std::int64_t{windowed_layers(model, c.first_layer, c.num_layers)} * model.num_layers !=
        total * c.num_layers) {
      return true;
    }
  }
  return false;
}

}  // namespace mofasim::model
