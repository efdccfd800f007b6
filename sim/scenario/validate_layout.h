// Layout checks of the parallelism section, one `fail(path, message)` per problem: the pipeline
// split (stage_layers, Megatron's account_for_*_in_pipeline_split), the folded expert layout (MoE
// parallel folding, node-limited routing) and the rank order's names. Run by validate_scenario.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <functional>
#include <string>

#include "proto/scenario.pb.h"

namespace mofasim::scenario {

using FieldFail = std::function<void(const std::string& path, const std::string& message)>;

// Numbers as validation messages print them (shortest round-trip form for doubles).
inline std::string num(double v) {
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), v);
  return std::string(buffer.data(), result.ptr);
}
inline std::string num(std::int64_t v) { return std::to_string(v); }

// pp*vpp chunks against model.num_layers (`layers`, 0 when unknown), or stage_layers when given.
void check_stage_layers(const proto::Parallelism& x, std::int64_t layers, const FieldFail& fail);

// ep*etp folds over tp*cp*dp, etp divides the expert FFN width, and node-limited routing reaches no
// more nodes than one EP group spans.
void check_expert_layout(const proto::Scenario& s, const proto::Parallelism& x, const proto::MoeConfig& moe,
                         const FieldFail& fail);

// Names from tp, cp, ep, dp, pp joined by '-', each at most once (Megatron's RankGenerator; a
// left-out name must have size 1, checked with the sizes); true when so.
bool check_rank_order_names(const std::string& order, const FieldFail& fail);

}  // namespace mofasim::scenario
