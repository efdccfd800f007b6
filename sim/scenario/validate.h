// Semantic validation of a converted Scenario: required fields, ranges, and the rules that tie
// sections together (tp*cp*pp*dp = gpus, head and layer divisibility, schedule constraints, ...).
// Every violation is collected, each anchored at the offending field's file:line:col through the
// SourceMap (or at its nearest written ancestor when the field was not written), and states the
// violated constraint with the numbers involved. The full rule list is in docs/scenario-reference.md
// (generated from validation_rules()).
//
// Runs on the scenario as written (before normalize_scenario), reading absent fields through their
// documented defaults (num_kv_heads = num_attention_heads, ...).
#pragma once

#include <span>
#include <string_view>

#include "proto/scenario.pb.h"
#include "sim/scenario/diagnostics.h"

namespace mofasim::scenario {

void validate_scenario(const proto::Scenario& scenario, const SourceMap& sources, Diagnostics& diagnostics);

// One line per rule, for the reference.
std::span<const std::string_view> validation_rules();

}  // namespace mofasim::scenario
