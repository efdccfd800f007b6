// Rank order: which parallel dimension varies fastest when ranks are numbered, e.g. Megatron's
// default "tp-cp-ep-dp-pp" (tp fastest, pp slowest). See placement.h for how the order, with ep
// carved out of the cp·dp block, turns into groups.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace mofasim::topology {

enum class ParallelDim : std::uint8_t { kTp, kCp, kEp, kDp, kPp };

inline constexpr int kParallelDimCount = 5;
inline constexpr std::string_view kMegatronRankOrder = "tp-cp-ep-dp-pp";

std::string_view parallel_dim_name(ParallelDim d);

class RankOrder {
 public:
  // Megatron's default order.
  RankOrder();

  // Parses "tp-cp-ep-dp-pp"-style strings: the five names tp, cp, ep, dp, pp, each exactly once,
  // separated by '-', fastest first, in any order (Megatron's RankGenerator; Meta's Llama 3 order
  // is "tp-cp-ep-pp-dp"). Throws std::invalid_argument otherwise. What Megatron refuses for given
  // sizes is check_order_for_sizes (placement.h).
  static RankOrder parse(std::string_view text);

  // Fastest-varying first.
  [[nodiscard]] const std::array<ParallelDim, kParallelDimCount>& dims() const { return dims_; }
  [[nodiscard]] int position(ParallelDim d) const;
  [[nodiscard]] std::string to_string() const;

 private:
  explicit RankOrder(std::array<ParallelDim, kParallelDimCount> dims) : dims_(dims) {}
  std::array<ParallelDim, kParallelDimCount> dims_;
};

}  // namespace mofasim::topology
