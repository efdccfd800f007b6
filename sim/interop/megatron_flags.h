// The importer's table of Megatron-LM / Megatron-Core (and torchrun) flags: how many values each
// takes and what the importer does with it. A flag not in the table is "unknown" and listed.
#pragma once

#include <string_view>

namespace mofasim::interop {

enum class FlagUse {
  kUsed,         // sets a scenario field (megatron_import.cc)
  kIgnored,      // no effect on one simulated step (learning rate, data, logging, checkpoints)
  kUnsupported,  // changes the step, but the scenario schema cannot express it yet
};

struct MegatronFlag {
  std::string_view name;
  int arity;                // 0 (switch), n values, or kVariadic
  FlagUse use;
  std::string_view reason;  // for kIgnored / kUnsupported: what the user reads in the list
};

// The entry for `name` ("--num-layers"), or nullptr.
const MegatronFlag* find_megatron_flag(std::string_view name);

// Arity for collect_flags(): the table's, or kUnknownArity.
int megatron_flag_arity(std::string_view name);

}  // namespace mofasim::interop
