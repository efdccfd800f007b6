// Whether a scenario's layout fits in GPU memory, by the memory model `mofasim memory` prints
// (model::memory_report with the schedule's in-flight micro-batches). `simulate`, `ettr` and
// `tune` report it: a one-line warning on stderr naming the worst stage and its excess, and a
// `memory_fit` object in --json. Out of memory is a result, not an error: the exit status stays 0.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/scenario/loader.h"

namespace mofasim::cli {

struct MemoryFit {
  bool fits = true;
  int worst_stage = 0;         // the stage with the highest peak
  int stages_over = 0;         // stages whose peak exceeds the capacity
  double peak_bytes = 0;       // the worst stage's reserved total (model/memory_reserve.h), judged against capacity
  double allocated_bytes = 0;  // the worst stage's allocated peak (max_memory_allocated)
  double capacity_bytes = 0;   // hardware.gpu_memory
  double excess_bytes = 0;     // peak - capacity on the worst stage, 0 when it fits
  std::string hardware{};      // heterogeneous GPUs (topology.node_hardware): the GPU that binds; else empty
  // DualPipe: the worst row is a rank holding two stages, named "rank 0 (stages 0+15)"; else empty.
  std::vector<int> worst_stages_held{};
};

MemoryFit memory_fit(const scenario::LoadedScenario& loaded);

// "mofasim <command>: warning: the scenario's layout does not fit in GPU memory: stage 1
// needs 81.92 GiB reserved (81.65 GiB allocated) of 80.00 GiB (1.92 GiB over; 7 stages over; see
// mofasim memory)" on `err` when it does not fit; nothing otherwise.
void warn_if_out_of_memory(const std::string& command, const MemoryFit& fit, std::ostream& err);

// {"fits", "worst_stage", "stages_over", "peak_bytes", "allocated_bytes", "capacity_bytes", "excess_bytes"}, and
// "hardware" when it names one.
nlohmann::json to_json(const MemoryFit& fit);

}  // namespace mofasim::cli
