// The import-megatron options and error capture shared by the importer's tests
// (test/interop/megatron_import_test.cc, megatron_import_fields_test.cc).
#pragma once

#include <optional>
#include <string>

#include "sim/interop/megatron_import.h"
#include "sim/interop/megatron_script.h"

namespace mofasim::test {

// Importing a script named "args.sh" as scenario `scenario_name` onto `gpus` H100-SXM GPUs
// (nullopt: the script's torchrun arguments must give the count).
inline interop::MegatronImportOptions h100_import_options(std::optional<int> gpus, const std::string& scenario_name) {
  interop::MegatronImportOptions o;
  o.source_name = "args.sh";
  o.scenario_name = scenario_name;
  o.gpus = gpus;
  o.hardware_preset = "h100-sxm";
  return o;
}

// The message of the ImportError import_megatron throws for `text`, or "no error".
inline std::string import_error(const std::string& text, const interop::MegatronImportOptions& options) {
  try {
    (void)interop::import_megatron(text, options);
  } catch (const interop::ImportError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace mofasim::test
