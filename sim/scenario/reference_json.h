// The scenario reference as JSON (`mofasim schema --json`): the same descriptor walk as the
// Markdown in reference.h — every message, field, type, unit, default, limit and description —
// for tools that generate forms or completions from the schema instead of parsing Markdown.
#pragma once

#include <nlohmann/json.hpp>

namespace mofasim::scenario {

// {"units": [...], "messages": [{"name", "doc", "used_at", "fields": [...]}], "validation_rules": [...]}.
// Defaults and limits are in the stored (base) unit, named by each field's "unit.stored_as".
nlohmann::json scenario_reference_json();

}  // namespace mofasim::scenario
