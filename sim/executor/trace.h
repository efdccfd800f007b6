// Traces of a replayed step (`simulate --trace FILE`): write_trace() picks the format by the file
// name: FILE.json writes Chrome trace JSON (built in memory: for small runs), any other name a
// Perfetto protobuf trace (perfetto_trace.h: streamed, for any size). Both show the same spans.
//
// Chrome JSON: an object with "traceEvents": one complete event (ph "X", ts/dur in microseconds)
// per task instance on the replica-0 ranks (one per stage: the folded class in folded fidelity),
// pid = stage (named "stage s (rank r)" by a process_name metadata event), tid = stream (named by
// thread_name). Event names read "F mb 3 L12 attention" (trace_labels.h), with a Chrome colour
// ("cname") per phase for compute and per kind for communication, and args for op, phase, chunk,
// micro-batch, layer, category and work. A PP transfer appears on both its sender and its receiver.
// Given the critical path, flow events link its tasks (critical_flows.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/executor/analyze.h"
#include "sim/executor/replay.h"
#include "sim/executor/trace_filter.h"
#include "sim/executor/workload.h"

namespace mofasim::executor {

// `critical` (optional): the critical path, drawn as flow events ("ph" "s" on a critical task,
// "f" with "bp" "e" on the next one shown; ids 1, 2, ... as in the Perfetto trace).
nlohmann::json chrome_trace(const Workload& w, const ReplayOutput& r, const TraceFilter& filter = {},
                            const CriticalPath* critical = nullptr);

// Writes chrome_trace() to `path`; throws std::runtime_error when the file cannot be written.
void write_chrome_trace(const std::string& path, const Workload& w, const ReplayOutput& r,
                        const TraceFilter& filter = {}, const CriticalPath* critical = nullptr);

// Chrome JSON when `path` ends in ".json", otherwise Perfetto protobuf. Throws
// std::invalid_argument for a filter that selects stages/ranks the step has not (trace_filter.h),
// std::runtime_error when the file cannot be written.
void write_trace(const std::string& path, const Workload& w, const ReplayOutput& r, const CriticalPath& path_tasks,
                 const TraceFilter& filter);

}  // namespace mofasim::executor
