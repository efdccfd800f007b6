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

  // Parses an order string as Megatron's RankGenerator (megatron/core/parallel_state.py) reads it:
  // names tp, cp, ep, dp, pp (any case: it lower-cases them) joined by '-', fastest first, in any
  // order. A name may be left out; RankGenerator appends it (after the named ones, in its own
  // order tp, pp, dp, ep, cp), which is only allowed for a dimension of size 1:
  // check_order_for_sizes (placement.h) refuses the rest. "tp-dp-pp" is Megatron's order for
  // cp = ep = 1; Meta's Llama 3 order is "tp-cp-ep-pp-dp". Throws std::invalid_argument, naming
  // parallelism.rank_order, for an unknown name (RankGenerator fails on it with a KeyError), an
  // empty name, or a name given twice: RankGenerator does not check repeats, but its group masks
  // mark only a name's first position, so a repeated dimension of size > 1 builds groups over
  // the wrong ranks; a repeat is refused as the typo it is.
  static RankOrder parse(std::string_view text);

  // Fastest-varying first, the left-out dimensions appended.
  [[nodiscard]] const std::array<ParallelDim, kParallelDimCount>& dims() const { return dims_; }
  [[nodiscard]] int position(ParallelDim d) const;
  // Whether the text named `d` (false for a dimension RankGenerator appends).
  [[nodiscard]] bool names(ParallelDim d) const;
  // Megatron's `order.endswith("pp")` on the text as written (initialize_model_parallel).
  [[nodiscard]] bool ends_in_pp() const;
  // The text as written (the default order for RankOrder()).
  [[nodiscard]] std::string to_string() const { return text_; }

 private:
  std::array<ParallelDim, kParallelDimCount> dims_;
  int named_ = kParallelDimCount;  // dims_[0, named_) were written, the rest appended
  std::string text_;
};

}  // namespace mofasim::topology
