// Sliding window against the pipeline layout (see validate_window.h).
#include "sim/scenario/validate_window.h"

#include <cstdint>
#include <vector>

namespace mofasim::scenario {

void check_window_chunks(const proto::Model& m, const proto::Parallelism& x,
                         const std::function<void(const std::string& path, const std::string& message)>& fail) {
  const std::int64_t n = m.window_attn_skip_freq();
  const std::int64_t chunks = std::int64_t{x.pp()} * x.vpp();
  if (m.window_size() <= 0 || n <= 1 || chunks <= 1 || m.num_layers() < 1) return;
  std::vector<std::int64_t> sizes(x.stage_layers().begin(), x.stage_layers().end());
  if (sizes.empty()) sizes.assign(static_cast<std::size_t>(chunks), m.num_layers() / chunks);
  for (const std::int64_t layers : sizes) {
    if (layers % n != 0) {
      fail("model.window_attn_skip_freq", "every pipeline chunk must hold a multiple of " + std::to_string(n) +
                                              " layers (the same mix of windowed and full layers); a chunk holds " +
                                              std::to_string(layers));
      return;
    }
  }
}

}  // namespace mofasim::scenario
