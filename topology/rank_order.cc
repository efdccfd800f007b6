// Parsing and printing of rank-order strings.
#include "topology/rank_order.h"

#include <algorithm>
#include <stdexcept>

namespace mofasim::topology {
namespace {

constexpr std::array<ParallelDim, kParallelDimCount> kMegatronDims = {ParallelDim::kTp, ParallelDim::kCp,
                                                                     ParallelDim::kEp, ParallelDim::kDp,
                                                                     ParallelDim::kPp};

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw std::invalid_argument("parallelism.rank_order: \"" + std::string(text) + "\" " + why +
                              " (expected the five names tp, cp, ep, dp, pp joined by '-', e.g. \"" +
                              std::string(kMegatronRankOrder) + "\")");
}

}  // namespace

std::string_view parallel_dim_name(ParallelDim d) {
  switch (d) {
    case ParallelDim::kTp: return "tp";
    case ParallelDim::kCp: return "cp";
    case ParallelDim::kEp: return "ep";
    case ParallelDim::kDp: return "dp";
    case ParallelDim::kPp: return "pp";
  }
  return "?";
}

RankOrder::RankOrder() : dims_(kMegatronDims) {}

RankOrder RankOrder::parse(std::string_view text) {
  std::array<ParallelDim, kParallelDimCount> dims{};
  std::array<bool, kParallelDimCount> seen{};
  int count = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t dash = text.find('-', start);
    const std::string_view token = text.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start);
    int found = -1;
    for (int i = 0; i < kParallelDimCount; ++i) {
      if (token == parallel_dim_name(static_cast<ParallelDim>(i))) found = i;
    }
    if (found < 0) bad(text, "has unknown dimension \"" + std::string(token) + "\"");
    if (seen[static_cast<std::size_t>(found)]) bad(text, "names \"" + std::string(token) + "\" twice");
    if (count == kParallelDimCount) bad(text, "has more than five dimensions");
    seen[static_cast<std::size_t>(found)] = true;
    dims[static_cast<std::size_t>(count++)] = static_cast<ParallelDim>(found);
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  if (count != kParallelDimCount) bad(text, "must name all five dimensions");
  RankOrder order(dims);
  return order;
}

int RankOrder::position(ParallelDim d) const {
  for (int i = 0; i < kParallelDimCount; ++i) {
    if (dims_[static_cast<std::size_t>(i)] == d) return i;
  }
  return -1;
}

std::string RankOrder::to_string() const {
  std::string out;
  for (ParallelDim d : dims_) {
    if (!out.empty()) out += '-';
    out += parallel_dim_name(d);
  }
  return out;
}

}  // namespace mofasim::topology
