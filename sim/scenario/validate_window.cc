// Sliding window against the pipeline layout (see validate_window.h).
#include "sim/scenario/validate_window.h"

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "model/spec.h"
#include "model/stage_layout.h"

namespace mofasim::scenario {

void check_window_chunks(const proto::Model& m, const proto::Parallelism& x,
                         const std::function<void(const std::string& path, const std::string& message)>& fail) {
  const std::int64_t n = m.window_attn_skip_freq();
  const std::int64_t chunks = std::int64_t{x.pp()} * x.vpp();
  if (m.window_size() <= 0 || n <= 1 || chunks <= 1 || m.num_layers() < 1) return;
  // The chunks as the model splits them (model::chunk_layers): stage_layers, or the even split with
  // the embedding and the loss counted as layers under account_for_*_in_pipeline_split.
  model::ModelSpec model;
  model.num_layers = m.num_layers();
  model::ParallelSpec parallel;
  parallel.pp = x.pp();
  parallel.vpp = x.vpp();
  parallel.stage_layers.assign(x.stage_layers().begin(), x.stage_layers().end());
  parallel.account_for_embedding = x.account_for_embedding_in_pipeline_split();
  parallel.account_for_loss = x.account_for_loss_in_pipeline_split();
  std::vector<model::ChunkLayers> split;
  try {
    split = model::chunk_layers(model, parallel);
  } catch (const std::invalid_argument&) {
    return;  // a split the model refuses: check_stage_layers reported it under parallelism
  }
  for (const model::ChunkLayers& c : split) {
    if (c.num_layers % n != 0) {
      fail("model.window_attn_skip_freq", "every pipeline chunk must hold a multiple of " + std::to_string(n) +
                                              " layers (the same mix of windowed and full layers); a chunk holds " +
                                              std::to_string(c.num_layers));
      return;
    }
  }
}

}  // namespace mofasim::scenario
