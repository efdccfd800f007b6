// Chrome / Perfetto trace of a replayed step (the `--trace FILE.json` output): a JSON object with
// "traceEvents": one complete event (ph "X", ts/dur in microseconds) per task instance on the
// replica-0 ranks (one per stage: the folded class in folded fidelity), pid = stage (named
// "stage s (rank r)" by a process_name metadata event), tid = stream (named by thread_name).
// Event names read "F mb 3 L12 attention", with args for op, phase, chunk, micro-batch, layer,
// category and work. A PP transfer appears on both its sender and its receiver.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/executor/replay.h"
#include "sim/executor/workload.h"

namespace mofasim::executor {

nlohmann::json chrome_trace(const Workload& w, const ReplayOutput& r);

// Writes chrome_trace() to `path`; throws std::runtime_error when the file cannot be written.
void write_chrome_trace(const std::string& path, const Workload& w, const ReplayOutput& r);

}  // namespace mofasim::executor
