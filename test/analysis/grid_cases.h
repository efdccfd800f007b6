// Small grid scenarios (tiny-llama / tiny-moe presets as inline YAML) for the analytic-vs-simulated
// grid test. The hardware is slowed down (1 TFLOPS, 10 GB/s HBM, 1 GB/s links) so that a step lasts
// ~0.1-0.4 s: the simulator rounds every task to the nanosecond, and at this length the rounding of
// a few thousand tasks stays below 1e-7 of the step.
#pragma once

#include <ostream>
#include <string>

namespace mofasim::analysis::testing {

struct GridCase {
  std::string model = "tiny-llama";
  int tp = 1;
  int pp = 1;
  int vpp = 1;
  int dp = 1;
  std::string schedule = "1f1b";
  std::string optimizations = "{}";  // the optimizations: map, inline YAML
  std::string parallel_extra = "";   // appended inside parallelism: (", ep: 2")
  std::string model_extra = "";      // appended inside model: (", window_size: 128")
  // Free PP hops: pp across nodes (gpus_per_node = tp*dp) on a 1e9 TB/s, zero-latency inter-node
  // link, every other group inside a node. Otherwise one node holds every GPU and the PP hop costs
  // 0.5 MB / 1 GB/s + latency like any other NVLink transfer.
  bool free_pp_hops = true;
  std::string intra_latency = "20 us";

  [[nodiscard]] std::string label() const {
    return model + "_t" + std::to_string(tp) + "p" + std::to_string(pp) + "v" + std::to_string(vpp) + "d" +
           std::to_string(dp) + "_" + schedule;
  }
};

// gtest prints a parameter with this instead of its bytes.
inline void PrintTo(const GridCase& c, std::ostream* os) {
  *os << c.label() << " " << c.optimizations << c.parallel_extra << c.model_extra;
}

// Sizes shared by the YAML below and the tests' hand derivations.
inline constexpr double kHidden = 256;           // tiny-llama / tiny-moe hidden size
inline constexpr double kHbmBytesPerS = 10e9;    // hardware.hbm_bandwidth
inline constexpr double kMemoryEfficiency = 0.8;  // h100-sxm preset efficiency.memory
inline constexpr double kIntraBytesPerS = 1e9;   // topology.intra_node.bandwidth

inline std::string grid_yaml(const GridCase& c) {
  const int gpus = c.tp * c.pp * c.dp;
  const int per_node = c.free_pp_hops ? c.tp * c.dp : gpus;
  const std::string inter = c.free_pp_hops ? R"({ bandwidth: "1e9 TB/s", latency: "0 s" })"
                                           : R"({ bandwidth: "0.2 GB/s", latency: "50 us" })";
  return "name: grid-" + c.label() + "\n" +
         "model: { preset: " + c.model + ", seq_length: 1024" + c.model_extra + " }\n" +
         R"(hardware: { preset: h100-sxm, peak_bf16: "1 TFLOPS", hbm_bandwidth: "10 GB/s" })" + "\n" +
         "topology: { gpus: " + std::to_string(gpus) + ", gpus_per_node: " + std::to_string(per_node) +
         R"(, intra_node: { bandwidth: "1 GB/s", latency: ")" + c.intra_latency + R"(" }, inter_node: )" + inter +
         " }\n" +
         "parallelism: { tp: " + std::to_string(c.tp) + ", pp: " + std::to_string(c.pp) +
         ", vpp: " + std::to_string(c.vpp) + ", dp: " + std::to_string(c.dp) +
         ", micro_batch: 1, global_batch: " + std::to_string(8 * c.dp) + ", schedule: " + c.schedule +
         c.parallel_extra + " }\n" +
         "optimizations: " + c.optimizations + "\n";
}

}  // namespace mofasim::analysis::testing
