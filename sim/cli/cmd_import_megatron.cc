// `mofasim import-megatron [ARGS_FILE|-]`: a Megatron-LM launch (argument list or launch script)
// -> scenario YAML (sim/interop/megatron_import.h). The cluster comes from options; the written
// scenario is loaded once before it is printed, so what import-megatron writes, simulate reads.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"
#include "sim/interop/megatron_import.h"
#include "sim/interop/megatron_script.h"
#include "sim/scenario/loader.h"
#include "sim/scenario/presets.h"

namespace mofasim::cli {
namespace {

constexpr const char* kCommand = "import-megatron";

UsageError option_error(const std::string& option, const std::string& message) {
  return UsageError(std::string("mofasim ") + kCommand + ": " + option + ": " + message);
}

void print_notes(const char* what, const std::vector<interop::MegatronFlagNote>& notes, const std::string& source) {
  for (const interop::MegatronFlagNote& n : notes) {
    std::cerr << "mofasim import-megatron: " << what << ": " << source << ":" << n.line << ":" << n.col << ": " << n.flag
              << (n.value.empty() ? "" : " " + n.value) << ": " << n.reason << "\n";
  }
}

}  // namespace

int run_import_megatron(const Args& args) {
  CommonOptions common;
  std::string input = "-";
  std::string output;
  int gpus = 0;
  int gpus_per_node = 0;
  int vocab_size = 0;
  interop::MegatronImportOptions options;
  po::options_description desc("options");
  desc.add_options()("help,h", po::bool_switch(&common.help), "show this help")(
      "gpus", po::value<int>(&gpus), "GPUs in the job (default: torchrun --nnodes x --nproc_per_node in the script)")(
      "hardware", po::value<std::string>(&options.hardware_preset), "hardware preset (e.g. h100-sxm, a100-80gb)")(
      "gpus-per-node", po::value<int>(&gpus_per_node), "GPUs per node (default: torchrun --nproc_per_node, else 8)")(
      "intra-node-bandwidth", po::value<std::string>(&options.intra_node_bandwidth),
      "NVLink-class bus bandwidth per GPU, e.g. \"370 GB/s\" (default for h100-sxm, h200, h800, a100-80gb)")(
      "inter-node-bandwidth", po::value<std::string>(&options.inter_node_bandwidth),
      "scale-out bus bandwidth per GPU, e.g. \"46 GB/s\" (default for the same presets)")(
      "vocab-size", po::value<int>(&vocab_size), "vocabulary size when the arguments give no --vocab-size or known tokenizer")(
      "name", po::value<std::string>(&options.scenario_name), "scenario name (default: the input file's stem)")(
      "output,o", po::value<std::string>(&output), "write the YAML here instead of stdout")(
      "input", po::value<std::string>(&input), "Megatron argument list or launch script; - or absent: stdin");
  // The one command without --json: its output is scenario YAML, already machine-readable.
  for (const std::string& arg : args) {
    if (arg == "--json") throw option_error("--json", "not offered: import-megatron writes scenario YAML, which is already machine-readable");
  }
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  parse_command_line(kCommand, args, desc, pos, vm);
  if (common.help) {
    print_command_help(kCommand, "[ARGS_FILE|-] --hardware PRESET [--gpus N] [--gpus-per-node N] [-o OUT.yaml]", desc);
    std::cout << "Writes scenario YAML (machine-readable as it is), so unlike the other commands it takes no --json.\n";
    return 0;
  }
  if (vm.count("gpus") != 0) {
    if (gpus < 1) throw option_error("--gpus", "must be >= 1, got " + std::to_string(gpus));
    options.gpus = gpus;
  }
  if (vm.count("gpus-per-node") != 0) {
    if (gpus_per_node < 1) throw option_error("--gpus-per-node", "must be >= 1, got " + std::to_string(gpus_per_node));
    options.gpus_per_node = gpus_per_node;
  }
  if (vm.count("vocab-size") != 0) {
    if (vocab_size < 1) throw option_error("--vocab-size", "must be >= 1, got " + std::to_string(vocab_size));
    options.vocab_size = vocab_size;
  }
  if (!options.hardware_preset.empty() &&
      scenario::PresetCatalog::embedded().find(scenario::PresetSection::kHardware, options.hardware_preset) == nullptr) {
    std::string known;
    for (const std::string& n : scenario::PresetCatalog::embedded().names(scenario::PresetSection::kHardware)) known += (known.empty() ? "" : ", ") + n;
    throw option_error("--hardware", "unknown preset '" + options.hardware_preset + "' (known: " + known + ")");
  }

  std::string text;
  if (input == "-") {
    options.source_name = "<stdin>";
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(input);
    if (!in) throw option_error("ARGS_FILE", "cannot read '" + input + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
    options.source_name = input;
  }
  if (vm.count("name") == 0) {
    const std::string stem = input == "-" ? "megatron-import" : std::filesystem::path(input).stem().string();
    options.scenario_name = stem.empty() ? "megatron-import" : stem;
  }
  interop::MegatronImport result;
  try {
    result = interop::import_megatron(text, options);
  } catch (const interop::ImportError& e) {
    throw UsageError(e.what());
  }
  // What simulate will read: fail here, naming the written line, rather than later.
  (void)scenario::load_scenario_from_string(result.yaml, output.empty() ? "<import-megatron output>" : output);
  print_notes("not applied (not expressible yet)", result.unsupported, options.source_name);
  print_notes("not applied (unknown flag)", result.unknown, options.source_name);
  if (output.empty()) {
    std::cout << result.yaml;
  } else {
    std::ofstream out(output);
    out << result.yaml;
    if (!out) throw option_error("--output", "cannot write '" + output + "'");
    std::cerr << "scenario written to " << output << " (" << result.ignored.size() << " flags with no effect on the step, "
              << result.unsupported.size() << " not expressible, " << result.unknown.size() << " unknown: listed at its top)\n";
  }
  return 0;
}

}  // namespace mofasim::cli
