// `mofasim import-megatron`: a Megatron-LM / Megatron-Core launch (argument list or launch script,
// see megatron_script.h) -> a scenario YAML in mofasim's own field names (proto/scenario.proto),
// with a comment on every field naming the argument that set it (or Megatron's default it
// follows). Nothing is dropped silently: every flag read is either used, or listed at the top of
// the YAML (and returned for stderr) as "no effect on the step", "not expressible", or "unknown".
// The cluster is not in Megatron's arguments: gpus, hardware preset, GPUs per node and the link
// bandwidths come from the caller (torchrun's --nnodes x --nproc_per_node when gpus is not given).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mofasim::interop {

struct MegatronImportOptions {
  std::string source_name = "<stdin>";   // what error messages call the input
  std::string scenario_name = "megatron-import";
  std::optional<int> gpus{};              // --gpus
  std::string hardware_preset{};          // --hardware (required)
  std::optional<int> gpus_per_node{};     // --gpus-per-node (default: torchrun's nproc_per_node, else 8)
  std::string intra_node_bandwidth{};     // e.g. "370 GB/s"; default from the hardware preset
  std::string inter_node_bandwidth{};     // e.g. "46 GB/s"; default from the hardware preset
  std::optional<int> vocab_size{};        // when the arguments give neither --vocab-size nor a known tokenizer
};

struct MegatronFlagNote {
  std::string flag;    // "--moe-grouped-gemm"
  std::string value;   // its value words joined by spaces ("" for a switch)
  std::string reason;  // why it is not used
  int line = 0;
  int col = 0;
};

struct MegatronImport {
  std::string yaml;                        // the scenario, ready for `mofasim simulate`
  std::vector<MegatronFlagNote> ignored;      // known, no effect on the simulated step (lr, paths, logging)
  std::vector<MegatronFlagNote> unsupported;  // change the step, but the schema cannot say how yet
  std::vector<MegatronFlagNote> unknown;      // not in the importer's table
};

// Throws ImportError (megatron_script.h) with `source:line:col: --flag: message` for a bad value,
// or `mofasim import-megatron: --option: message` for a missing or bad cluster option.
MegatronImport import_megatron(const std::string& text, const MegatronImportOptions& options);

}  // namespace mofasim::interop
