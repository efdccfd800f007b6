// The mofasim sub-commands. Each takes the words after its name and returns the exit code:
// 0 success, 1 runtime failure, 2 bad input (scenario or command line).
#pragma once

#include <string>
#include <vector>

namespace mofasim::cli {

using Args = std::vector<std::string>;

int run_schema(const Args& args);     // print the scenario reference (Markdown) from the schema
int run_memory(const Args& args);     // parameters, FLOPs and memory per pipeline stage
int run_simulate(const Args& args);   // replay one training step as a timeline
int run_validate(const Args& args);   // analytic MoFa model against the simulated timeline
int run_ettr(const Args& args);       // analytic and Monte Carlo ETTR / end-to-end time
int run_sweep(const Args& args);      // sweep one scenario field; CSV + SVG
int run_tune(const Args& args);       // search the layout space
int run_calibrate(const Args& args);  // fit device efficiencies to measured step times
int run_import_megatron(const Args& args);  // Megatron-LM launch arguments -> scenario YAML

}  // namespace mofasim::cli
