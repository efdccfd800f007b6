// Parsing and printing of rank-order strings (Megatron's RankGenerator rules, see rank_order.h).
#include "topology/rank_order.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace mofasim::topology {
namespace {

constexpr std::array<ParallelDim, kParallelDimCount> kMegatronDims = {ParallelDim::kTp, ParallelDim::kCp,
                                                                     ParallelDim::kEp, ParallelDim::kDp,
                                                                     ParallelDim::kPp};
// RankGenerator's name_to_size order, in which it appends the names an order leaves out.
constexpr std::array<ParallelDim, kParallelDimCount> kAppendOrder = {ParallelDim::kTp, ParallelDim::kPp,
                                                                     ParallelDim::kDp, ParallelDim::kEp,
                                                                     ParallelDim::kCp};

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw std::invalid_argument("parallelism.rank_order: '" + std::string(text) + "' " + why +
                              " (expected names from tp, cp, ep, dp, pp joined by '-', each at most once, e.g. '" +
                              std::string(kMegatronRankOrder) + "')");
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

RankOrder::RankOrder() : dims_(kMegatronDims), text_(kMegatronRankOrder) {}

RankOrder RankOrder::parse(std::string_view text) {
  RankOrder order;
  order.text_ = std::string(text);
  std::array<bool, kParallelDimCount> seen{};
  int count = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t dash = text.find('-', start);
    const std::string_view raw = text.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start);
    std::string token(raw);
    std::transform(token.begin(), token.end(), token.begin(), [](unsigned char ch) { return std::tolower(ch); });
    int found = -1;
    for (int i = 0; i < kParallelDimCount; ++i) {
      if (token == parallel_dim_name(static_cast<ParallelDim>(i))) found = i;
    }
    if (found < 0) bad(text, token.empty() ? "has an empty name" : "has unknown name '" + std::string(raw) + "'");
    if (seen[static_cast<std::size_t>(found)]) bad(text, "names '" + token + "' twice");
    seen[static_cast<std::size_t>(found)] = true;
    order.dims_[static_cast<std::size_t>(count++)] = static_cast<ParallelDim>(found);
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  order.named_ = count;
  for (ParallelDim d : kAppendOrder) {
    if (!seen[static_cast<std::size_t>(d)]) order.dims_[static_cast<std::size_t>(count++)] = d;
  }
  return order;
}

int RankOrder::position(ParallelDim d) const {
  for (int i = 0; i < kParallelDimCount; ++i) {
    if (dims_[static_cast<std::size_t>(i)] == d) return i;
  }
  return -1;
}

bool RankOrder::names(ParallelDim d) const { return position(d) < named_; }

bool RankOrder::ends_in_pp() const { return text_.ends_with("pp"); }

}  // namespace mofasim::topology
