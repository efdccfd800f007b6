// The scenario reference (docs/scenario-reference.md), generated from the descriptors of
// proto/scenario.proto: every message, field, type, unit, default, description and enum spelling,
// plus the accepted units, the derived defaults and the validation rules. `mofasim schema` prints
// it; a test keeps the checked-in file equal to it.
#pragma once

#include <string>

namespace mofasim::scenario {

std::string scenario_reference_markdown();

}  // namespace mofasim::scenario
